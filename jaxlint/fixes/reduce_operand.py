"""The JX304 fix: ``jnp.max(jnp.broadcast_to(x, (n, 3)), axis=0)`` -> ``x``.

Built only for the plain source form: at the reduction's location a call ``<mod>.max(b, axis=k)``
(or the method ``b.max(axis=k)``) with no other arguments, where ``b`` is the call at the
broadcast's location, ``<mod>.broadcast_to(x, shape)``, and ``axis`` is literal and names exactly
the reduced axes. The max/min/any/all of equal copies is the copy, so the whole call becomes ``x``.
"""
from __future__ import annotations

import ast

from jaxlint.fixes.ast_spans import node_span, replacement_text
from jaxlint.model import Edit, Fix, Span
from jaxlint.scan.index import int_literal, node_at

# Source spellings of each reduction primitive whose value over copies is the copy itself.
SPELLINGS = {"reduce_max": {"max", "amax"}, "reduce_min": {"min", "amin"},
             "reduce_or": {"any"}, "reduce_and": {"all"}}


def build_fix(source: str, primitive: str, reduce_span: Span, broadcast_span: Span,
              axes: tuple[int, ...], ndim: int) -> Fix | None:
    call = node_at(source, reduce_span, ast.Call)
    broadcast = node_at(source, broadcast_span, ast.Call)
    if call is None or broadcast is None or not isinstance(call.func, ast.Attribute) \
            or call.func.attr not in SPELLINGS.get(primitive, ()):
        return None
    if call.func.value is broadcast:  # b.max(axis=k)
        rest = call.args
    elif call.args and call.args[0] is broadcast:  # jnp.max(b, axis=k)
        rest = call.args[1:]
    else:
        return None
    axis = _axis_node(rest, call.keywords)
    if axis is False or _axes(axis, ndim) != set(axes):
        return None
    operand = _broadcast_operand(broadcast)
    if operand is None:
        return None
    text = replacement_text(source, call, operand)
    return Fix("safe", f"Reduce nothing: use `{text}`", (Edit(node_span(source, call), text),))


def _axis_node(args: list[ast.expr], keywords: list[ast.keyword]) -> ast.expr | None | bool:
    """The axis argument (None when absent), or False when any other argument is given."""
    if len(args) > 1 or any(k.arg != "axis" for k in keywords) or (args and keywords):
        return False
    if args:
        return args[0]
    return keywords[0].value if keywords else None


def _axes(node: ast.expr | None, ndim: int) -> set[int] | None:
    if node is None or (isinstance(node, ast.Constant) and node.value is None):
        return set(range(ndim))
    items = node.elts if isinstance(node, ast.Tuple) else [node]
    values = [int_literal(item) for item in items]
    if None in values or any(not -ndim <= v < ndim for v in values):
        return None
    return {v % ndim for v in values}


def _broadcast_operand(call: ast.Call) -> ast.expr | None:
    """``x`` of ``<mod>.broadcast_to(x, shape)``; None for any other spelling."""
    if not (isinstance(call.func, ast.Attribute) and call.func.attr == "broadcast_to"):
        return None
    keywords = {k.arg for k in call.keywords}
    if any(isinstance(a, ast.Starred) for a in call.args) or None in keywords:
        return None
    if len(call.args) == 2 and not keywords or len(call.args) == 1 and keywords == {"shape"}:
        return call.args[0]
    return None
