"""JX103 vmap-while-batched-predicate: a while_loop whose predicate is batched under vmap.

Without vmap a while's ``cond_jaxpr`` returns a scalar bool. JAX's batching rule for ``while``
keeps the loop when the predicate is batched, but its ``cond_jaxpr`` then returns ``bool[B]``:
the loop runs while ANY element's predicate holds, and at lowering every iteration recomputes the
predicate and selects the old carry for the finished elements. An unbatched predicate (bounds
from unmapped arguments) keeps a scalar and is never reported, nor is a batch of one element.
"""
from __future__ import annotations

import math
from typing import Iterable, cast

from jaxlint.ir import Location, Op, Value, costs
from jaxlint.model import Cost, Finding
from jaxlint.rules.base import ProgramContext, Rule

LOOP_KINDS = frozenset({"while_loop", "fori_loop"})


class VmapWhileBatchedPredicate(Rule):
    code = "JX103"
    name = "vmap-while-batched-predicate"
    summary = "A `while_loop` with a batched predicate under vmap: every element runs until the slowest finishes."
    severity = "warning"

    @classmethod
    def check_program(cls, ctx: ProgramContext) -> Iterable[Finding]:
        loops = [op for op in ctx.ops_here("while") if op.under("vmap") and _batched_predicate(op) is not None]
        if not loops:
            return
        # Only whiles the user wrote (a while_loop/fori_loop call in this file): a library's
        # internal loop is located at the user's call of that library function instead.
        spans = ctx.calls_of(LOOP_KINDS, {cast(Location, op.location).span for op in loops})
        for op in loops:
            assert op.location is not None  # loops are located
            if op.location.span in spans:
                yield _finding(cls, ctx, op, spans[op.location.span])


def _batched_predicate(op: Op) -> Value | None:
    """The cond region's predicate when it is not a scalar (one bool per batch element), else None."""
    region = next((r for r in op.regions if r.name == "cond_jaxpr"), None)
    if region is None or not region.outputs:
        return None
    predicate = region.outputs[0]
    # A batch of one element (vmap over a batch axis of size 1): no element waits for another.
    one = all(isinstance(d, int) for d in predicate.shape) and math.prod(predicate.shape) == 1
    return predicate if predicate.shape and not one else None


def _finding(rule: type[Rule], ctx: ProgramContext, op: Op, kind: str) -> Finding:
    predicate = _batched_predicate(op)
    body = next((r for r in op.regions if r.name == "body_jaxpr"), None)
    cond = next(r for r in op.regions if r.name == "cond_jaxpr")
    ops = (body.ops if body is not None else []) + cond.ops  # the predicate is recomputed in the body
    flops = costs.ops_flops(ops)
    carry = [costs.nbytes(v) for v in op.outputs]
    carry_bytes = None if any(b is None for b in carry) else sum(carry)
    runs, known = costs.executions(op)
    assert predicate is not None  # check_program reports only loops with a batched predicate
    batch = costs.elements_text(predicate)
    per_iteration = (f"{costs.format_flops(flops)} FLOPs" if flops is not None else "unknown FLOPs (symbolic shapes)")
    selected = f" and selects {carry_bytes} bytes of carry" if carry_bytes is not None else ""
    where = "" if runs == 1 and known else " (the loop itself runs inside another loop)"
    call = "lax.fori_loop bounds are" if kind == "fori_loop" else "lax.while_loop predicate is"
    message = (f"{call} batched under vmap ({batch} elements, predicate bool[{','.join(str(d) for d in predicate.shape)}]"
               f"): the loop runs until the slowest element finishes, so every element runs max(trip) "
               f"iterations; the trip counts are data-dependent, unknown statically. Each iteration "
               f"computes the body for the whole batch ({per_iteration}, {len(ops)} equations){selected}, "
               f"finished elements included{where}. If trip counts vary widely, use lax.map over the "
               "batch (each element runs its own trip count) or group elements of similar trip count.")
    assert op.location is not None  # check_program passes located ops only
    cost = Cost(basis="shapes", flops=None, bytes=None, equations=len(ops),
                note=f"wasted per call: body FLOPs per iteration ({per_iteration} for the batch) "
                     "x (max trip - own trip) per element; trip counts unknown statically")
    return ctx.finding(rule, message, op.location.span, cost=cost)
