"""The facts of explain's memory section, in the worker: the stacked residuals of each
reverse-differentiated loop (jaxlint.ir.residuals, as JX306 finds them, whatever their size) and the
copies of loop-carried buffers inside each compiled while body (jaxlint.ir.memory, as JX307 finds
them, whatever their size, scalars left out), as plain JSON.
(ir/memory.py holds the memory facts the rules read; this is explain's section of them.)"""
from __future__ import annotations

from typing import Any

from jaxlint.ir import Program, aval_text, costs, memory, residuals
from jaxlint.ir.primitives import LOOPS


def differentiated_loops(program: Program) -> list[dict[str, Any]]:
    """Each forward loop whose stacked outputs a transposed loop reads: where, its trip count, each
    residual (shape, bytes, the body line that makes it) and their total."""
    found = []
    for stacked in residuals.stacked(program, 0):
        location = stacked.loop.location
        found.append({"path": location.path if location else None,
                      "line": location.span.start_line if location else None,
                      "trips": costs.trip_count(stacked.loop),
                      "residuals": [{"shape": aval_text(r.value), "bytes": r.nbytes, "made_at": r.made_at}
                                    for r in stacked.residuals],
                      "total_bytes": stacked.total})
    return found


def loop_copies(program: Program, hlo_text: str, path: str) -> list[dict[str, Any]]:
    """Each while loop of the optimized HLO whose body copies a loop-carried buffer: where (the
    loop's frame in ``path``, else the loop whose body made the body's instructions, else its
    innermost frame), its trip count, the copies and the bytes copied per iteration and per call."""
    try:
        loops = memory.loop_copies(hlo_text)
    except ValueError:  # not the HLO text this parser knows
        return []
    ir_loops = [op for op in program.walk() if op.primitive in LOOPS and op.location is not None]
    found = []
    for loop in loops:
        # A scalar (the loop counter) is bookkeeping, not a carried buffer.
        copies = [(shape, nbytes) for shape, nbytes in loop.copies if nbytes > 0 and not shape.endswith("[]")]
        if not copies:
            continue
        where, op = _place(loop, ir_loops, path)
        trips = loop.trip_count
        if trips is None and op is not None:
            trips = costs.trip_count(op)
        per_iteration = sum(nbytes for _, nbytes in copies)
        found.append({"path": where.path if where else None, "line": where.line if where else None,
                      "trips": trips, "copies": [{"shape": shape, "bytes": nbytes} for shape, nbytes in copies],
                      "bytes_per_iteration": per_iteration,
                      "total_bytes": per_iteration * trips if trips else None})
    return found


def _place(loop: memory.LoopCopies, ir_loops: list[Any], path: str) -> tuple[memory.Frame | None, Any]:
    """(the loop's frame, the IR loop at it): in ``path`` (memory.loop_in_file), else its innermost
    frame elsewhere."""
    placed = memory.loop_in_file(loop, [op for op in ir_loops if op.location.path == path], path)
    return placed or ((loop.frames[-1] if loop.frames else None), None)
