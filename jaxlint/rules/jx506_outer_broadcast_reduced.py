"""JX506 outer-broadcast-reduced: ``jnp.mean((pred - y) ** 2)`` with pred f32[n,1] and y f32[n]
is the mean of an n x n table of every pred minus every y, not of the n residuals.

In the jaxpr: an elementwise binary op (``sub``, ``add``, ``mul``, ...) whose operands are f32[..,
n, 1] and f32[.., 1, n], where the second got its axis of size 1 from the rank promotion jnp
applies to an operand of lower rank (a ``broadcast_in_dim`` or ``reshape`` at the op's own source
span), and whose result, through elementwise ops of the same shape, is reduced over both axes.
Quiet where the source makes the outer product on purpose: an operand whose size-1 axis was made
by a shape op (``a[:, None]``, ``a[None, :]``, ``reshape``, ``expand_dims``, ``keepdims=True``,
``jnp.outer``, ``jnp.subtract.outer``), a bias add (n, d) + (d,) (no axis of size 1), n == 1, and
an outer table that is not reduced over both axes (a pairwise matrix the code keeps).
"""
from __future__ import annotations

import ast
from typing import Iterable

from jaxlint.ir import Op, Value
from jaxlint.ir.primitives import BINARY_ARITHMETIC, REDUCTIONS, traits
from jaxlint.model import Finding
from jaxlint.rules.base import ProgramContext, Rule


class OuterBroadcastReduced(Rule):
    code = "JX506"
    name = "outer-broadcast-reduced"
    summary = ("An (n, 1) and an (n,) operand broadcast to an (n, n) table that is then reduced: "
               "a value over all pairs, not over the n elements.")
    severity = "error"

    @classmethod
    def check_program(cls, ctx: ProgramContext) -> Iterable[Finding]:
        for op in ctx.ops_here(*sorted(BINARY_ARITHMETIC)):
            axes = _outer_axes(op)
            if axes is None:
                continue
            reduction = _reduced_over(op.outputs[0], axes)
            if reduction is not None:
                yield ctx.finding(cls, _message(ctx, op, axes), op.location.span)  # type: ignore[union-attr]


def _outer_axes(op: Op) -> tuple[int, int, int] | None:
    """(the column operand's position, the axis it varies along, the axis the row varies along)
    when ``op`` broadcasts an (.., n, 1) operand against an (n,) one jnp promoted to (.., 1, n)."""
    if len(op.inputs) != 2 or len(op.outputs) != 1:
        return None
    out = op.outputs[0].shape
    shapes = [v.shape for v in op.inputs]
    if any(len(s) != len(out) for s in shapes) or len(out) < 2:
        return None
    for column in (0, 1):
        col, row = shapes[column], shapes[1 - column]
        p, q = len(out) - 2, len(out) - 1  # the row's promoted axis, the column's size-1 axis
        n = out[p]
        if not (isinstance(n, int) and n > 1 and out[q] == n and col[p] == n and col[q] == 1
                and row[p] == 1 and row[q] == n):
            continue
        if any(col[k] != out[k] or row[k] not in (1, out[k]) for k in range(len(out)) if k not in (p, q)):
            continue
        if _promoted(op.inputs[1 - column], p, op) and not _made_by_shape_op(op.inputs[column], q):
            return column, p, q
    return None


def _promoted(value: Value, axis: int, op: Op) -> bool:
    """``value``'s ``axis`` (of size 1) was added by jnp's rank promotion for ``op``: broadcasts or
    reshapes at the op's own source span (vmap adds one of its own) from a value without that axis."""
    while op.location is not None:
        producer = value.producer
        if producer is None or producer.location != op.location or not producer.inputs:
            return False
        source = producer.inputs[0].shape
        if producer.primitive == "broadcast_in_dim":
            dims = tuple(int(d) for d in producer.params.get("broadcast_dimensions", ()))
            if axis not in dims:
                return len(source) < len(value.shape)
            axis = dims.index(axis)
            if source[axis] != 1:
                return False
        elif producer.primitive == "reshape":
            return tuple(source) == tuple(s for k, s in enumerate(value.shape) if k != axis)
        else:
            return False
        value = producer.inputs[0]
    return False


def _made_by_shape_op(value: Value, axis: int) -> bool:
    """``value``'s size-1 ``axis`` comes from a shape op (``[:, None]``, reshape, keepdims, outer):
    the code asked for the column on purpose."""
    producer = value.producer
    while producer is not None and producer.primitive in ("copy", "copy_p", "convert_element_type"):
        producer = producer.inputs[0].producer
    if producer is None or producer.primitive not in ("broadcast_in_dim", "reshape", "expand_dims"):
        return False
    if producer.primitive == "broadcast_in_dim":
        dims = tuple(int(d) for d in producer.params.get("broadcast_dimensions", ()))
        return axis not in dims or producer.inputs[0].shape[dims.index(axis)] == 1
    return True


def _reduced_over(value: Value, axes: tuple[int, int, int]) -> Op | None:
    """The reduction over both outer axes that ``value`` reaches through elementwise ops of its
    shape (``** 2``, ``abs``, a scale), else None."""
    _, p, q = axes
    stack, seen = [value], set()
    while stack and len(seen) < 64:
        current = stack.pop()
        if id(current) in seen:
            continue
        seen.add(id(current))
        for use in current.uses:
            if use.primitive in REDUCTIONS:
                reduced = tuple(int(a) for a in use.params.get("axes", ()))
                if p in reduced and q in reduced:
                    return use
                continue
            row = traits(use.primitive)
            if use.regions or row.cost not in ("elementwise", "transcendental") or row.elementwise == "compare" \
                    or row.effect is not None or len(use.outputs) != 1:
                continue
            if use.outputs[0].shape == current.shape:
                stack.append(use.outputs[0])
    return None


def _message(ctx: ProgramContext, op: Op, axes: tuple[int, int, int]) -> str:
    column, p, _ = axes
    col, row = op.inputs[column], op.inputs[1 - column]
    n = op.outputs[0].shape[p]
    node = ctx.index.node_at(op.location.span, ast.BinOp)  # type: ignore[union-attr]
    origin = row
    while origin.producer is not None and origin.producer.location == op.location \
            and origin.producer.primitive in ("broadcast_in_dim", "reshape"):
        origin = origin.producer.inputs[0]  # before jnp's rank promotion (and vmap's broadcast)
    promoted = origin.shape
    if node is not None:
        texts = [ctx.index.text(node.left), ctx.index.text(node.right)]
        col_text, row_text = texts[column], texts[1 - column]
        head = (f"`{ctx.index.text(node)}` broadcasts `{col_text}` of shape {_shape(col.shape)} against "
                f"`{row_text}` of shape {_shape(promoted)}")
        fix = f" Index the column: `{col_text}[..., 0]` (or make the row a column: `{row_text}[..., None]`)."
    else:
        head = (f"this {op.primitive} broadcasts an operand of shape {_shape(col.shape)} against one of shape "
                f"{_shape(promoted)}")
        fix = " Index the column with [..., 0] (or make the other a column with [..., None])."
    return (f"{head} to {_shape(op.outputs[0].shape)}: every element against every other ({n} x {n} pairs), and "
            f"the result is then reduced over both axes, so the value is taken over all pairs, not over the "
            f"{n} elements.{fix}")


def _shape(shape: tuple) -> str:
    return "(" + ", ".join(str(s) for s in shape) + ("," if len(shape) == 1 else "") + ")"
