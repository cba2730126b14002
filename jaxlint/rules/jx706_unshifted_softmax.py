"""JX706 unshifted-softmax: ``exp(x) / sum(exp(x))`` is NaN once some x passes ~88.7 (f32).

In the jaxpr: a ``div`` of an ``exp`` by a ``reduce_sum`` of the same ``exp``, where the exp's
input is neither shifted by its maximum nor bounded. A softmax whose only use is a ``log`` is
JX702's (log_softmax fixes both). The finding points at the division of the source.
"""
from __future__ import annotations

import ast

from jaxlint.fixes.stable_calls import stable_call
from jaxlint.ir import Op, patterns
from jaxlint.model import Fix
from jaxlint.rules.base import Rule
from jaxlint.rules.numerics import Match, Rewrite, StableRewrite, operator
from jaxlint.scan.index import same_expression, single_argument

MESSAGE = ("softmax with no max shift: exp overflows to inf once a logit exceeds about 88.7 in "
           "float32 (709.8 in float64), and inf / inf is NaN; when every logit is below about "
           "-87.5 each exp underflows to 0, and 0 / 0 is NaN too. The true probabilities are "
           "finite. jax.nn.softmax subtracts the maximum first.")


def _unshifted_softmax(division: Op) -> bool | None:
    found = patterns.softmax(division.outputs[0])
    return None if found is None or patterns.overflowing_exp(found[1].outputs[0]) is None else True


def _fix(match: Match) -> Fix | None:
    """``exp(x) / sum(exp(x), axis=a, keepdims=True)`` -> ``softmax(x, axis=a)``."""
    division, index = match.node, match.index
    if not isinstance(division, ast.BinOp):
        return None
    top = index.as_call(division.left, "exp")
    total = index.as_call(division.right, "sum")
    reduced = index.reduction_operand(total) if total is not None else None
    if top is None or reduced is None:
        return None
    operand, named = reduced
    x, y = single_argument(top), single_argument(index.as_call(operand, "exp"))
    if x is None or y is None or not same_expression(x, y):
        return None
    axis = named.get("axis")
    keepdims = named.get("keepdims")
    kept = isinstance(keepdims, ast.Constant) and keepdims.value is True
    if axis is not None and not kept:
        return None  # sum(..., axis) without keepdims only broadcasts back for some shapes
    axis_text = "None" if axis is None else index.text(axis)
    return stable_call(index, division, "jax.nn.softmax", [index.text(x), f"axis={axis_text}"],
                       " (subtracts the maximum first)")


class UnshiftedSoftmax(StableRewrite, Rule):
    code = "JX706"
    name = "unshifted-softmax"
    summary = "exp(x) / sum(exp(x)) without a max shift is inf/inf = NaN for large x: use jax.nn.softmax."
    severity = "warning"
    fix = "unsafe"
    stabilizing_fix = True
    rewrites = (Rewrite(("div",), pattern=_unshifted_softmax, points_at=operator(ast.Div), message=MESSAGE,
                        fix=_fix, quiet_for=lambda match: patterns.only_used_by(match.op.outputs[0], ("log",))),)
