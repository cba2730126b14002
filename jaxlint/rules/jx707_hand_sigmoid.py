"""JX707 hand-sigmoid: ``1 / (1 + exp(-x))`` has a NaN gradient once exp(-x) overflows.

In the jaxpr: a ``div`` of the literal 1 by ``1 + exp(z)`` (or ``1 + c * exp(z)``, the same
logistic shifted by log c). The forward value is right (1 / inf
is 0), but the derivative is exp(z) / (1 + exp(z))**2 = inf / inf. A hand sigmoid whose only use
is a ``log`` is JX708's. The finding points at the division of the source.
"""
from __future__ import annotations

import ast

from jaxlint.fixes.stable_calls import negated, stable_call
from jaxlint.ir import patterns
from jaxlint.model import Fix
from jaxlint.rules.base import Rule
from jaxlint.rules.numerics import Match, Rewrite, StableRewrite, operator
from jaxlint.scan.index import single_argument

MESSAGE = ("sigmoid written as 1 / (1 + exp(-x)): the value is right, but once exp(-x) overflows "
           "(x below about -88.7 in float32) its gradient is inf / inf = NaN, where the true "
           "gradient is 0. jax.nn.sigmoid is JAX's logistic, with a finite gradient everywhere.")


def _fix(match: Match) -> Fix | None:
    """``1 / (1 + exp(-x))`` -> ``sigmoid(x)``; ``1 / (1 + exp(x))`` -> ``sigmoid(-x)``."""
    one = lambda n: isinstance(n, ast.Constant) and type(n.value) in (int, float) and n.value == 1  # noqa: E731
    division, index = match.node, match.index
    if not isinstance(division, ast.BinOp) or not one(division.left):
        return None
    bottom = division.right
    if not isinstance(bottom, ast.BinOp) or not isinstance(bottom.op, ast.Add):
        return None
    other = bottom.right if one(bottom.left) else bottom.left if one(bottom.right) else None
    z = single_argument(index.as_call(other, "exp"))
    if z is None:
        return None
    return stable_call(index, division, "jax.nn.sigmoid", [negated(index, z)])


class HandSigmoid(StableRewrite, Rule):
    code = "JX707"
    name = "hand-sigmoid"
    summary = "1 / (1 + exp(-x)) has a NaN gradient for large |x|: use jax.nn.sigmoid."
    severity = "warning"
    fix = "unsafe"
    stabilizing_fix = True
    rewrites = (Rewrite(("div",), pattern=lambda division: patterns.hand_sigmoid(division.outputs[0]),
                        points_at=operator(ast.Div), message=MESSAGE, fix=_fix,
                        quiet_for=lambda match: patterns.only_used_by(match.op.outputs[0], ("log",))),)
