"""JX303 constant-index-gather: a gather whose constant indices form a strided range."""
from __future__ import annotations

import ast
from typing import Iterable

from jaxlint.fixes import static_slice
from jaxlint.ir import Op, Value, costs
from jaxlint.ir.patterns import computed_from
from jaxlint.ir.primitives import traits
from jaxlint.model import Cost, Finding
from jaxlint.rules.base import ProgramContext, Rule


class ConstantIndexGather(Rule):
    code = "JX303"
    name = "constant-index-gather"
    summary = "A gather with constant strided indices that a static slice does far cheaper."
    severity = "warning"
    fix = "safe"

    @classmethod
    def check_program(cls, ctx: ProgramContext) -> Iterable[Finding]:
        for op in ctx.ops_here("gather"):
            finding = _check_gather(cls, ctx, op)
            if finding is not None:
                yield finding


def _gathered_axis(op: Op) -> int | None:
    """The operand axis when the gather picks whole slices along that one axis, like ``x[:, idx]``."""
    numbers, sizes = op.params["dimension_numbers"], op.params["slice_sizes"]
    operand, indices, out = op.inputs[0], op.inputs[1], op.outputs[0]
    if tuple(getattr(numbers, "operand_batching_dims", ())) or len(indices.shape) != 2 \
            or indices.shape[1] != 1 or len(tuple(numbers.start_index_map)) != 1:
        return None
    axis = numbers.start_index_map[0]
    if tuple(numbers.collapsed_slice_dims) != (axis,) or sizes[axis] != 1 \
            or any(sizes[d] != operand.shape[d] for d in range(len(operand.shape)) if d != axis):
        return None
    # The gathered dimension lands where the axis was (NumPy's rule for a single array index).
    batch_positions = [d for d in range(len(out.shape)) if d not in tuple(numbers.offset_dims)]
    return axis if batch_positions == [axis] else None


def _constant_ops(value: Value, budget: int = 32) -> int | None:
    """How many ops compute ``value`` from constants alone, or None if it depends on an input."""
    count = 0
    for current in computed_from(value):
        producer = current.producer
        if producer is None or not traits(producer.primitive).index_arithmetic or producer.regions:
            return None  # a function or region input, or computed by something else
        count += 1
        if count > budget:
            return None
    return count


def _check_gather(rule: type[Rule], ctx: ProgramContext, op: Op) -> Finding | None:
    try:
        axis = _gathered_axis(op)
    except Exception:  # noqa: BLE001 - symbolic sizes that cannot be compared
        return None
    operand, indices, out = op.inputs[0], op.inputs[1], op.outputs[0]
    index_ops = _constant_ops(indices) if axis is not None else None
    if index_ops is None:
        return None  # traced indices, or not a one-axis gather
    assert op.location is not None  # check_program passes located ops only
    index = static_slice.literal_index(ctx.index.node_at(op.location.span, ast.Subscript))
    # The source must agree with the jaxpr: same axis, same number of indices, a static size.
    if index is None or index.axis != axis or not isinstance(indices.shape[0], int) \
            or len(index.values) != indices.shape[0] or not isinstance(operand.shape[axis], int):
        return None
    strided = static_slice.as_range(index.values, operand.shape[axis])
    if strided is None:
        return None
    start, last, step = strided
    fix = static_slice.build_fix(ctx.source, index, start, last, step)
    text = fix.edits[0].content if fix is not None else static_slice.slice_text(start, last, step)
    where = ", ".join([":"] * axis + [text])
    out_bytes, index_bytes = costs.nbytes(out), costs.nbytes(indices)
    extra = None if out_bytes is None or index_bytes is None else out_bytes + index_bytes
    scale = f"{extra} bytes" if extra is not None else "the gathered array again"
    message = (
        f"gather of {len(index.values)} positions along axis {axis} (of {operand.shape[axis]}) with "
        f"constant indices {_shown(start, last, step)}: a strided range, which the static slice "
        f"`[{where}]` selects without an index array. Cost: the gather reads the index array and "
        f"materializes its result ({index_ops + 1} equations for the indices and the gather): about "
        f"{scale} more memory traffic per call than the slice, which XLA fuses into its consumer "
        "(measured on CPU, 1024 of the 2048 columns of f32[1024,2048]: 0.7-3.8 ms vs 0.35-0.8 ms "
        "contiguous, 0.6-1.4 ms vs 0.55-1.3 ms with stride 2).")
    cost = Cost(basis="shapes", flops=0.0, bytes=extra, equations=index_ops + 1,
                note="the gather's materialized output and index array, which a slice avoids")
    return ctx.finding(rule, message, op.location.span, fix, cost=cost)


def _shown(start: int, last: int, step: int) -> str:
    values = list(range(start, last + 1, step))
    return ", ".join(map(str, values)) if len(values) <= 4 else f"{start}, {start + step}, ..., {last}"
