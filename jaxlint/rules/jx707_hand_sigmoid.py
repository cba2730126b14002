"""JX707 hand-sigmoid: ``1 / (1 + exp(-x))`` has a NaN gradient once exp(-x) overflows.

In the jaxpr: a ``div`` of the literal 1 by ``1 + exp(z)`` (or ``1 + c * exp(z)``, the same
logistic shifted by log c). The forward value is right (1 / inf
is 0), but the derivative is exp(z) / (1 + exp(z))**2 = inf / inf. A hand sigmoid whose only use
is a ``log`` is JX708's. The finding points at the division of the source.
"""
from __future__ import annotations

import ast
from typing import Iterable

from jaxlint.fixes import stable_calls
from jaxlint.fixes.ast_spans import node_at, node_span
from jaxlint.ir import patterns
from jaxlint.model import Finding, Fix, Span
from jaxlint.rules.base import ProgramContext, Rule


class HandSigmoid(Rule):
    code = "JX707"
    name = "hand-sigmoid"
    summary = "1 / (1 + exp(-x)) has a NaN gradient for large |x|: use jax.nn.sigmoid."
    severity = "warning"
    fix = "unsafe"
    stabilizing_fix = True

    @classmethod
    def check_program(cls, ctx: ProgramContext) -> Iterable[Finding]:
        seen: set[Span] = set()
        for op in ctx.ops_here("div"):
            if patterns.hand_sigmoid(op.outputs[0]) is None or patterns.only_used_by(op.outputs[0], ("log",)):
                continue
            division = node_at(ctx.source, op.location.span, ast.BinOp)
            if division is None or not isinstance(division.op, ast.Div) or op.location.span in seen:
                continue
            seen.add(op.location.span)
            yield ctx.finding(cls, (
                "sigmoid written as 1 / (1 + exp(-x)): the value is right, but once exp(-x) overflows "
                "(x below about -88.7 in float32) its gradient is inf / inf = NaN, where the true "
                "gradient is 0. jax.nn.sigmoid is JAX's logistic, with a finite gradient everywhere."),
                node_span(ctx.source, division), _fix(ctx.source, division))


def _fix(source: str, division: ast.BinOp) -> Fix | None:
    """``1 / (1 + exp(-x))`` -> ``sigmoid(x)``; ``1 / (1 + exp(x))`` -> ``sigmoid(-x)``."""
    one = lambda n: isinstance(n, ast.Constant) and type(n.value) in (int, float) and n.value == 1  # noqa: E731
    bottom = division.right
    if not one(division.left) or not isinstance(bottom, ast.BinOp) or not isinstance(bottom.op, ast.Add):
        return None
    other = bottom.right if one(bottom.left) else bottom.left if one(bottom.right) else None
    exp = stable_calls.as_call(source, other, "exp")
    z = stable_calls.single_argument(exp) if exp is not None else None
    if z is None:
        return None
    name, extra = stable_calls.qualified(source, "jax.nn", "sigmoid")
    text = f"{name}({stable_calls.negated(source, z)})"
    return stable_calls.rewrite(source, division, text, extra, f"use `{text}`")
