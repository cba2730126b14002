"""JX101 vmap-unbatched-output: a vmap output that depends on no mapped input, used one row at a time."""
from __future__ import annotations

import math
from typing import Any, Iterable

from jaxlint.model import Finding, Span
from jaxlint.rules.base import Rule, RuleContext


class VmapUnbatchedOutput(Rule):
    code = "JX101"
    name = "vmap-unbatched-output"
    summary = "A vmap output depends on no mapped input, is broadcast to the batch, and only one row is used."
    severity = "warning"

    @classmethod
    def check(cls, ctx: RuleContext) -> Iterable[Finding]:
        seen: set[tuple] = set()
        for tag, values in ctx.program.markers.items():
            record_tag, _, leaf_text = tag.rpartition("_")
            record = ctx.vmap_records.get(record_tag)
            if record is None:
                continue
            leaf = int(leaf_text)
            for value in values:
                finding = _check_output(cls, ctx, record, leaf, value)
                if finding is not None and finding.key() not in seen:
                    seen.add(finding.key())
                    yield finding


def _check_output(rule: type[Rule], ctx: RuleContext, record: Any, leaf: int, value: Any) -> Finding | None:
    axis = record.leaf_axes[leaf]
    if axis is None or not record.unbatched[leaf]:
        return None  # batched (JAX refuses out_axes=None there) or declared unbatched already
    ndim = len(value.shape)
    axis = axis % ndim if ndim else 0
    producer = value.producer
    # Evidence in the jaxpr as well as JAX's verdict: vmap materialized the output by broadcasting.
    if producer is None or producer.primitive != "broadcast_in_dim" \
            or axis in tuple(producer.params.get("broadcast_dimensions", ())):
        return None
    uses = [_single_row_use(op, value, axis) for op in value.uses]
    if not uses or any(u is None for u in uses) or _used_whole(value):
        return None
    batch = value.shape[axis]
    rows = "".join(sorted(set(uses)))
    message = (
        f"vmap output {record.leaf_paths[leaf] or '(the only one)'} does not depend on any mapped "
        f"input, yet vmap broadcasts it to the batch ({batch} copies) and every use takes one row "
        f"({_plural(len(uses), 'use')}: {rows}); declare it unbatched with out_axes=None. "
        + _cost(value, axis, producer.under_jit)
    )
    span = record.span if record.path == ctx.path else ctx.target.name_span
    from jaxlint.fixes.vmap_out_axes import build_fix  # libcst; only needed when reporting

    fix = build_fix(ctx.source, record, leaf) if record.path == ctx.path else None
    return ctx.finding(rule, message, span, fix)


def _single_row_use(op: Any, value: Any, axis: int) -> str | None:
    """'[i]' when ``op`` (with the squeeze after it) selects one element along ``axis``."""
    shape = value.shape
    others_full = lambda sizes: all(  # noqa: E731
        _same(sizes[d], shape[d]) for d in range(len(shape)) if d != axis)
    if op.primitive == "slice":
        start, limit = op.params["start_indices"], op.params["limit_indices"]
        strides = op.params.get("strides") or (1,) * len(shape)
        if not (_same(limit[axis] - start[axis], 1) and strides[axis] == 1
                and all(_same(start[d], 0) for d in range(len(shape)) if d != axis)
                and others_full(limit)):
            return None
        index = f"[{start[axis]}]"
    elif op.primitive == "dynamic_slice":
        sizes = op.params["slice_sizes"]
        if op.inputs[0] is not value or not (_same(sizes[axis], 1) and others_full(sizes)):
            return None
        index = "[i]"
    elif op.primitive == "gather":
        numbers = op.params["dimension_numbers"]
        sizes = op.params["slice_sizes"]
        if op.inputs[0] is not value or tuple(numbers.collapsed_slice_dims) != (axis,) \
                or tuple(numbers.start_index_map) != (axis,) \
                or not (_same(sizes[axis], 1) and others_full(sizes)):
            return None
        return "[i]"  # gather collapses the axis itself: no squeeze follows
    else:
        return None
    squeezes = op.outputs[0].uses
    if not squeezes or _used_whole(op.outputs[0]) or any(
            s.primitive != "squeeze" or tuple(s.params["dimensions"]) != (axis,) for s in squeezes):
        return None
    return index


def _used_whole(value: Any) -> bool:
    """Returned from a region (the function, a loop body, a branch): used as a whole array."""
    region = value.producer.region if value.producer is not None else value.region_input
    return region is not None and any(out is value for out in region.outputs)


def _same(a: Any, b: Any) -> bool:
    try:
        return bool(a == b)
    except Exception:  # symbolic dimensions that cannot be compared
        return False


def _cost(value: Any, axis: int, under_jit: bool) -> str:
    if under_jit:
        return ("Cost: none in compiled code, under jax.jit XLA deletes the broadcast and the "
                "selection; this is a clarity fix.")
    row = [d for i, d in enumerate(value.shape) if i != axis]
    try:
        elements = int(math.prod(row)) * int(value.shape[axis])
        size = f"{elements} elements, {elements * value.dtype.itemsize} bytes"
    except Exception:  # symbolic sizes
        size = f"{value.shape[axis]} x {math.prod(row) if row else 1} elements"
    return f"Cost: called eagerly, each call materializes the broadcast ({size})."


def _plural(n: int, word: str) -> str:
    return f"{n} {word}" + ("" if n == 1 else "s")
