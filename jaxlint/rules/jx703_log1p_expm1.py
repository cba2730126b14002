"""JX703 log1p-expm1: ``log(1 + x)`` and ``exp(x) - 1`` lose the digits of a small x.

In the jaxpr: ``log`` of an ``add`` of the literal 1 and a computed float, or a ``sub`` of the
literal 1 from an ``exp``. ``log(1 + exp(x))`` is softplus: it also overflows for large x, so the
finding offers ``jax.nn.softplus``. ``log(x + c)`` with any other constant is quiet.
"""
from __future__ import annotations

import ast

from jaxlint.fixes.stable_calls import stable_call
from jaxlint.ir import Op, patterns
from jaxlint.model import Fix
from jaxlint.rules.base import Rule
from jaxlint.rules.numerics import Match, Rewrite, StableRewrite, call_of, operator
from jaxlint.scan.index import single_argument


def _log_of_one_plus(log: Op) -> bool | None:
    """Whether the ``x`` of ``log(1 + x)`` is an exp (softplus); None for another log."""
    add = patterns.produced_by(log.inputs[0], "add")
    if add is None:
        return None
    rest = [v for v in add.inputs if patterns.scalar(v) != 1.0]
    if len(rest) != 1 or not patterns.inexact(rest[0]) or not patterns.varies(rest[0]):
        return None
    return patterns.produced_by(rest[0], "exp") is not None


def _log_message(match: Match) -> str:
    if match.found:  # softplus
        return ("log(1 + exp(x)) is softplus written by hand: exp overflows to inf once x exceeds "
                "about 88.7 in float32 (the result is inf, the gradient NaN), and for very negative x "
                "the 1 + swallows exp(x). jax.nn.softplus is exact on both ends.")
    return ("log(1 + x) rounds 1 + x first, losing the digits of a small x: in float32 at x = 1e-7 "
            "it gives 1.19e-7 (19% off), and 0 below 6e-8. jnp.log1p(x) is exact there.")


def _log_fix(match: Match) -> Fix | None:
    """``log(1 + x)`` -> ``log1p(x)``; ``log(1 + exp(x))`` -> ``softplus(x)``."""
    index = match.index
    inner = single_argument(match.node)
    if not isinstance(inner, ast.BinOp) or not isinstance(inner.op, ast.Add):
        return None
    x = inner.right if _one(inner.left) else inner.left if _one(inner.right) else None
    if x is None:
        return None
    if match.found:
        x = single_argument(index.as_call(x, "exp"))
        if x is None:
            return None
    return stable_call(index, match.node, "jax.nn.softplus" if match.found else "jax.numpy.log1p", [index.text(x)])


def _exp_minus_one(sub: Op) -> bool | None:
    exp = patterns.produced_by(sub.inputs[0], "exp")
    if exp is None or patterns.scalar(sub.inputs[1]) != 1.0 or not patterns.varies(exp.inputs[0]):
        return None
    return True


EXPM1_MESSAGE = (
    "exp(x) - 1 cancels the leading 1 and keeps only float rounding for a small x: in float32 at "
    "x = 1e-7 it gives 1.19e-7 (19% off), and 0 below 6e-8. jnp.expm1(x) is exact there.")


def _expm1_fix(match: Match) -> Fix | None:
    node = match.node
    if not isinstance(node, ast.BinOp) or not _one(node.right):
        return None
    x = single_argument(match.index.as_call(node.left, "exp"))
    if x is None:
        return None
    return stable_call(match.index, node, "jax.numpy.expm1", [match.index.text(x)])


def _one(node: ast.expr) -> bool:
    return isinstance(node, ast.Constant) and type(node.value) in (int, float) and node.value == 1


class Log1pExpm1(StableRewrite, Rule):
    code = "JX703"
    name = "log1p-expm1"
    summary = "log(1 + x) and exp(x) - 1 lose precision for small x: use jnp.log1p and jnp.expm1."
    severity = "warning"
    fix = "unsafe"
    stabilizing_fix = True
    rewrites = (
        Rewrite(("log",), pattern=_log_of_one_plus, points_at=call_of("log"), message=_log_message, fix=_log_fix),
        Rewrite(("sub",), pattern=_exp_minus_one, points_at=operator(ast.Sub), message=EXPM1_MESSAGE,
                fix=_expm1_fix),
    )
