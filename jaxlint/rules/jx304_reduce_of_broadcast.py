"""JX304 reduce-of-broadcast: max/min/prod/any/all over axes a broadcast just created."""
from __future__ import annotations

import math
from typing import Any, Iterable

from jaxlint.fixes import reduce_operand
from jaxlint.ir import Op, costs
from jaxlint.ir.primitives import SAME_VALUE
from jaxlint.model import Cost, Finding
from jaxlint.rules.base import Option, ProgramContext, Rule

# Reductions whose value over equal copies is known, and what it is. reduce_sum is absent: XLA
# rewrites the sum of a broadcast to a multiply.
_RESULT = {
    "reduce_max": "the max of equal copies is the operand itself",
    "reduce_min": "the min of equal copies is the operand itself",
    "reduce_or": "any over equal copies is the operand itself",
    "reduce_and": "all over equal copies is the operand itself",
    "reduce_prod": "the product of {n} equal copies is `x ** {n}` (equal up to rounding)",
    "argmax": "every copy is equal, so the argmax is 0 everywhere",
    "argmin": "every copy is equal, so the argmin is 0 everywhere",
}


class ReduceOfBroadcast(Rule):
    code = "JX304"
    name = "reduce-of-broadcast"
    summary = "max/min/prod/any/all over axes a broadcast just created."
    severity = "warning"
    fix = "safe"
    # Below this many elements of the broadcast the reduction costs under a microsecond per call
    # (measured on CPU: max and prod over 1024 copies' elements within 1.5 us of the operand alone,
    # over 10000 elements 10-60 us more): no saving worth a finding, and a shape-generic function
    # (a scalar or per-dimension parameter broadcast to (dim,)) has no better spelling.
    min_elements = 1000
    options = {"min-elements": Option(int, min_elements, "elements the broadcast the reduction reads must have",
                                      minimum=0)}

    @classmethod
    def check_program(cls, ctx: ProgramContext) -> Iterable[Finding]:
        for op in ctx.ops_here(*_RESULT):
            finding = _check_reduction(cls, ctx, op, ctx.option(cls, "min-elements"))
            if finding is not None:
                yield finding


def _copy_axes(broadcast: Op) -> tuple[set[int], set[int]]:
    """(axes the broadcast created, size-1 operand axes it stretched): along both, all values are equal."""
    dims = tuple(broadcast.params["broadcast_dimensions"])
    operand, out = broadcast.inputs[0].shape, broadcast.outputs[0].shape
    created = {d for d in range(len(out)) if d not in dims}
    stretched = {d for i, d in enumerate(dims) if operand[i] == 1 and out[d] != 1}
    return created, stretched


def _check_reduction(rule: type[Rule], ctx: ProgramContext, op: Op, min_elements: int) -> Finding | None:
    value = op.inputs[0]
    broadcast = value.producer
    while broadcast is not None and broadcast.primitive in SAME_VALUE:  # a sharding constraint, a copy
        broadcast = broadcast.inputs[0].producer
    if broadcast is None or broadcast.primitive != "broadcast_in_dim" or len(broadcast.inputs) != 1:
        return None  # (a broadcast with dynamic shape operands is left alone)
    source = broadcast.inputs[0]
    if source.literal is not None or source.const:
        return None  # a broadcast constant: XLA folds it
    axes = tuple(op.params["axes"])
    try:
        created, stretched = _copy_axes(broadcast)
    except Exception:  # noqa: BLE001 - symbolic sizes that cannot be compared
        return None
    if not axes or not set(axes) <= created | stretched:
        return None  # a reduction over an original axis
    try:
        copies = math.prod(int(value.shape[d]) for d in axes)
    except Exception:  # noqa: BLE001
        return None  # a symbolic broadcast size: it could be 0 or 1
    if copies <= 1:
        return None  # size-1 axes (``x[None]``): XLA turns the reduction into a reshape
    elements, read = costs.size(value), costs.nbytes(value)
    if elements is not None and elements < min_elements:
        return None  # too small to cost anything (a symbolic size is unknown: reported)
    assert op.location is not None  # check_program passes located ops only
    fix = None
    # The fix returns the operand: only when the result has exactly the operand's shape.
    if op.primitive in reduce_operand.SPELLINGS and set(axes) == created and not stretched \
            and broadcast.location is not None:
        fix = reduce_operand.build_fix(ctx.source, op.primitive, op.location.span,
                                       broadcast.location.span, axes, len(value.shape))
    out_elements = costs.size(op.outputs[0])
    flops = None if elements is None or out_elements is None else float(elements - out_elements)
    shape = _short(value.aval)
    result = _RESULT[op.primitive].format(n=copies)
    advice = ("reduce the operand instead" if op.primitive in reduce_operand.SPELLINGS
              else "compute it from the operand")
    message = (
        f"{op.primitive} over {_axes_text(axes)} of {shape}, which a broadcast just made of {copies} "
        f"copies of the operand: {result}; {advice}. Cost: {_scale(elements, read, flops, out_elements, copies)}; "
        "XLA does not remove it (it keeps every operation and may materialize the broadcast; "
        "measured on CPU, max over the 1000 copies of a broadcast f32[1000]: 0.07-0.86 ms vs "
        "0.008 ms for the operand).")
    cost = Cost(basis="shapes", flops=flops, bytes=read, equations=2,
                note="the broadcast's elements read by the reduction, which the operand alone avoids")
    return ctx.finding(rule, message, op.location.span, fix, cost=cost)


def _short(aval: Any) -> str:
    """``f32[7,600]``, as jaxprs print it."""
    try:
        return aval.str_short(short_dtypes=True)
    except Exception:  # an older signature
        return str(aval)


def _axes_text(axes: tuple[int, ...]) -> str:
    return f"axis {axes[0]}" if len(axes) == 1 else f"axes {', '.join(map(str, axes))}"


def _scale(elements: int | None, read: int | None, flops: float | None, out: int | None, copies: int) -> str:
    if elements is None or read is None or flops is None:  # symbolic operand dimensions
        return f"the reduction reads {copies} copies of the operand per call to return one"
    return (f"the reduction reads {elements} elements ({read} bytes) and does {flops:.0f} operations "
            f"per call to return {out} values")
