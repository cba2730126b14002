"""JX307 carry-copied-per-iteration: a while loop of the optimized HLO whose body copies a
loop-carried buffer every iteration (jaxlint.ir.memory), reported at the loop's source line."""
from __future__ import annotations

from typing import Iterable

from jaxlint.ir import Op, costs, ops_in
from jaxlint.ir.memory import LoopCopies, loop_in_file
from jaxlint.ir.primitives import LOOPS
from jaxlint.model import Cost, Finding, Span
from jaxlint.rules.base import Option, ProgramContext, Rule, frame_span
from jaxlint.text import size_text

# What updates an array in place (`.at[]`, lax.dynamic_update_slice): the usual reason XLA copies a carry.
_IN_PLACE = frozenset({"dynamic_update_slice", "scatter", "scatter-add", "scatter_add", "scatter-mul",
                       "scatter_mul", "scatter-min", "scatter_min", "scatter-max", "scatter_max"})


class CarryCopiedPerIteration(Rule):
    code = "JX307"
    name = "carry-copied-per-iteration"
    summary = "A loop whose compiled body copies a large loop-carried buffer every iteration."
    severity = "warning"
    fix = None
    options = {"min-bytes": Option(int, 64 * 1024, "bytes a copy of a carried buffer must have to be reported",
                                   minimum=0)}

    @classmethod
    def check_program(cls, ctx: ProgramContext) -> Iterable[Finding]:
        minimum = ctx.option(cls, "min-bytes")
        # Compiling costs far more than tracing: only a program with a loop whose operands or
        # results (carries, and the stacked arrays a scan reads and writes) reach min-bytes.
        if not ctx.program.memo(f"jx307.large-loop.{minimum}", lambda: _large_loop(ctx, minimum)):
            return
        by_span: dict[Span, tuple[LoopCopies, list[tuple[str, int]], Op | None]] = {}
        for loop in ctx.program.compiled("loops"):
            copies = [c for c in loop.copies if c[1] >= minimum and c[1] > 0]
            if not copies:
                continue
            placed = _place(ctx, loop)
            if placed is None:
                continue
            span, op = placed
            # The forward and the transposed loop of a gradient share the line: the larger stands.
            if span not in by_span or sum(b for _, b in copies) > sum(b for _, b in by_span[span][1]):
                by_span[span] = (loop, copies, op)
        for span, (loop, copies, op) in by_span.items():
            trips = loop.trip_count
            if trips is None and op is not None and op.primitive == "scan":
                trips = int(op.params.get("length", 0)) or None
            per_iteration = sum(b for _, b in copies)
            in_place = op is None or any(inner.primitive in _IN_PLACE for region in op.regions
                                         for inner in ops_in(region))
            cost = Cost(basis="compiled", flops=0.0,
                        bytes=float(per_iteration * trips) if trips else float(per_iteration),
                        equations=None, note="memory traffic: bytes copied "
                        + ("over all iterations" if trips else "per iteration (trip count unknown)")
                        + (f", on each of the {loop.devices} devices" if loop.devices > 1 else ""))
            yield ctx.finding(cls, _message(copies, per_iteration, trips, in_place, loop.devices)
                              + ctx.program.target_note, span, cost=cost)


def _large_loop(ctx: ProgramContext, minimum: int) -> bool:
    return any((costs.nbytes(value) or 0) >= minimum for op in ctx.program.walk() if op.primitive in LOOPS
               for value in (*op.inputs, *op.outputs))


def _place(ctx: ProgramContext, loop: LoopCopies) -> tuple[Span, Op | None] | None:
    """(span, the IR loop) where the loop is reported in this context's file, or None when it is not
    this file's: its innermost frame among the files the context reports in must be this file's
    (memory.loop_in_file places it there)."""
    frame = next((f for f in reversed(loop.frames) if ctx.reports_in(f.path)), None)
    if frame is not None and frame.path != ctx.path:
        return None
    placed = loop_in_file(loop, list(ctx.ops_here(*LOOPS)), ctx.path)
    if placed is None:
        return None
    at, op = placed
    if op is not None:
        return op.location.span, op
    return frame_span(ctx.source, at.line, at.column, at.end_column), None


def _message(copies: list[tuple[str, int]], per_iteration: int, trips: int | None, in_place: bool,
             devices: int = 1) -> str:
    shapes: dict[str, int] = {}
    for shape, _ in copies:
        shapes[shape] = shapes.get(shape, 0) + 1
    what = ", ".join(f"{shape}{f' x{n}' if n > 1 else ''}" for shape, n in shapes.items())
    total = (f"{size_text(per_iteration)} per iteration x {trips} iterations = {size_text(per_iteration * trips)}"
             if trips else f"{size_text(per_iteration)} per iteration (trip count unknown)")
    # A partitioned program's shapes are each device's share: every device copies this much.
    where = f" on each of the {devices} devices of the mesh (the shapes are each device's share)" if devices > 1 else ""
    copied = f"the compiled loop copies a loop-carried buffer every iteration ({what}): {total} copied{where}. "
    if not in_place:
        # Seen on the CPU backend for scans of plain weight updates (which weights, differs by JAX version).
        return (copied + "Nothing in the loop's body updates an array in place (no `.at[]` update or "
                "dynamic_update_slice), the usual cause: XLA's buffer assignment chose these copies, and another "
                "XLA version or backend may not make them. Weigh the bytes against the body's own work before "
                "changing the code; the source may offer nothing to change.")
    return (copied + "XLA copies a carry when an in-place update cannot stay in place: usually a `.at[].set` or "
            "dynamic_update_slice that the differentiated loop cannot keep in place, or a body that reads the old "
            "value of a carry after writing it. Read what the body needs before updating the carry, or move the "
            "update out of the differentiated loop.")
