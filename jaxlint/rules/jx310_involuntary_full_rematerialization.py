"""JX310 involuntary-full-rematerialization: the SPMD partitioner found no efficient way between
two shardings of a value and replicated it on every device; read from the compile's own warning
(jaxlint.ir.partitioner), reported at the user's line of that operation."""
from __future__ import annotations

from typing import Iterable

from jaxlint.ir import innermost_loop_over
from jaxlint.ir.memory import Frame
from jaxlint.ir.partitioner import Rematerialization
from jaxlint.ir.primitives import CALLBACKS, LOOPS
from jaxlint.model import Cost, Finding, Span
from jaxlint.rules.base import ProgramContext, Rule
from jaxlint.text import char_span, size_text

# JAX's names of the operations a user writes as a call of another name.
_CALLS = {"sharding_constraint": "with_sharding_constraint", "reshard": "reshard", "pjit": "jit", "jit": "jit"}


class InvoluntaryFullRematerialization(Rule):
    code = "JX310"
    name = "involuntary-full-rematerialization"
    summary = "The SPMD partitioner replicates a value on every device to go between two shardings."
    severity = "warning"
    fix = None
    reads_helpers = True  # the operation may sit in a helper's file

    @classmethod
    def check_program(cls, ctx: ProgramContext) -> Iterable[Finding]:
        seen: set[Span] = set()
        callbacks = any(op.primitive in CALLBACKS for op in ctx.program.walk())
        for remat in ctx.program.compiled("rematerializations"):
            if callbacks and remat.target.startswith("{maximal"):
                continue  # a host callback runs on one device: the partitioner gathers its operands there
            placed = _place(ctx, remat)
            if placed is None or placed[0] in seen:
                continue  # another file's, or the same line again (0.4.35 warns once per operand)
            seen.add(placed[0])
            trips = _trips(ctx, placed[0].start_line)
            cost = Cost(basis="compiled", flops=0.0, bytes=float(remat.nbytes), equations=None,
                        note="per device: each device holds the whole value for the reshard"
                        + (", every iteration of the loop around it" if trips != 1 else ""))
            yield ctx.finding(cls, _message(remat, placed[1], trips) + ctx.program.target_note, placed[0], cost=cost)


def _place(ctx: ProgramContext, remat: Rematerialization) -> tuple[Span, bool] | None:
    """(span, whether it is the operation's own line): the operation's line in this context's
    file; where XLA kept no user frame for it (JAX 0.4.35 names a copy of the jit's parameter), the
    line that computed the value a constraint asks the target sharding of; else the target's name.
    None when another file's context reports it."""
    for own, frames in ((True, remat.frames), (False, remat.requested)):
        frame = next((f for f in frames if ctx.reports_in(f.path)), None)
        if frame is not None:
            return (_span(ctx, frame, remat.op_name if own else ""), own) if frame.path == ctx.path else None
    span = ctx.fallback_span
    return (span, False) if span is not None else None


def _span(ctx: ProgramContext, frame: Frame, op_name: str) -> Span:
    """The IR operation of that line JAX names in ``op_name`` (``jit(h)/add``: the add), else the
    line's code (from the frame's columns when it has them)."""
    primitive = op_name.rpartition("/")[2]
    ops = [op for op in ctx.ops_here() if op.location is not None and op.location.span.start_line == frame.line]
    op = next((op for op in ops if op.primitive == primitive), None)
    if op is not None and op.location is not None:
        return op.location.span
    lines = ctx.source.splitlines()
    text = lines[frame.line - 1] if 0 < frame.line <= len(lines) else ""
    if frame.column is not None and frame.end_column is not None and frame.end_column > frame.column:
        return char_span(ctx.source, Span(frame.line, frame.column, frame.line, frame.end_column))
    start = len(text) - len(text.lstrip())
    return Span(frame.line, start, frame.line, len(text.rstrip()))


def _trips(ctx: ProgramContext, line: int) -> int | None:
    """How many times per call the line runs: 1 outside loops, a scan's length (times the scans
    around it), None inside a while loop."""
    loops = list(ctx.ops_here(*LOOPS))
    trips: int | None = 1
    while trips is not None:
        loop = innermost_loop_over(loops, line)
        if loop is None:
            return trips
        length = int(loop.params.get("length", 0) or 0) if loop.primitive == "scan" else 0
        trips = trips * length if length else None
        loops.remove(loop)
        line = loop.location.span.start_line if loop.location is not None else 0
    return None


def _message(remat: Rematerialization, own_line: bool, trips: int | None) -> str:
    source = remat.source_spec or f"HLO sharding {remat.source}"
    target = remat.target_spec or f"HLO sharding {remat.target}"
    primitive = remat.op_name.rpartition("/")[2]
    what = f"the {_CALLS.get(primitive, primitive)}" if own_line and primitive else "this value"
    where = "" if trips == 1 else f" in a loop body, {trips} times per call" if trips \
        else " in the body of a while loop, every iteration"
    return (f"the SPMD partitioner found no efficient way from {source} to {target} for {what} "
            f"({remat.shape}) and replicates it{where}: every device holds all {size_text(remat.nbytes)} before "
            "slicing out its shard (XLA's \"Involuntary full rematerialization\"). Constrain the value to "
            "a sharding one collective reaches before this operation (jax.lax.with_sharding_constraint), "
            "or choose shardings whose mesh axes agree (the same axis on the same dimension).")
