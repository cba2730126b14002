"""JX708 log-of-sigmoid: ``log(sigmoid(x))`` and ``log(1 - sigmoid(x))`` are -inf for large |x|.

In the jaxpr: ``log`` of a ``logistic`` (``jax.nn.sigmoid``) or of a hand-written sigmoid, or of
``1 - `` either: the hand-written binary cross-entropy. ``log(sigmoid(x) + eps)`` is quiet.
"""
from __future__ import annotations

import ast

from jaxlint.fixes.stable_calls import negated, stable_call
from jaxlint.ir import Op, Value, patterns
from jaxlint.model import Fix
from jaxlint.rules.base import Rule
from jaxlint.rules.numerics import Match, Rewrite, StableRewrite, call_of
from jaxlint.scan.index import single_argument

SIGMOID_NAMES = ("sigmoid", "logistic", "expit")


def _log_of_sigmoid(log: Op) -> bool | None:
    """Whether it is ``log(1 - sigmoid(x))`` (True) or ``log(sigmoid(x))`` (False); None for another log."""
    complement = patterns.produced_by(log.inputs[0], "sub")
    if complement is not None and patterns.scalar(complement.inputs[0]) == 1.0 and _sigmoid(complement.inputs[1]):
        return True
    return False if _sigmoid(log.inputs[0]) else None


def _sigmoid(value: Value) -> bool:
    return patterns.produced_by(value, "logistic") is not None or patterns.hand_sigmoid(value) is not None


def _message(match: Match) -> str:
    negative = match.found
    what, where, right = (("log(1 - sigmoid(x))", "x above about 16.7", "-x for large x")
                          if negative else ("log(sigmoid(x))", "x below about -87.5", "x for very negative x"))
    return (f"{what} (as in a hand-written binary cross-entropy): in float32 the sigmoid rounds to "
            f"{'1' if negative else '0'} for {where}, so the log is -inf (the loss inf, the gradient "
            f"NaN) where the true value is {right}. jax.nn.log_sigmoid is finite for any finite x.")


def _fix(match: Match) -> Fix | None:
    """``log(sigmoid(x))`` -> ``log_sigmoid(x)``; ``log(1 - sigmoid(x))`` -> ``log_sigmoid(-x)``."""
    index, negative = match.index, match.found
    inner = single_argument(match.node)
    if negative:
        one = isinstance(inner, ast.BinOp) and isinstance(inner.op, ast.Sub) \
            and isinstance(inner.left, ast.Constant) and type(inner.left.value) in (int, float) \
            and inner.left.value == 1
        inner = inner.right if one else None  # type: ignore[union-attr]
    x = single_argument(index.as_call(inner, *SIGMOID_NAMES))
    if x is None:
        return None
    return stable_call(index, match.node, "jax.nn.log_sigmoid", [negated(index, x) if negative else index.text(x)])


class LogOfSigmoid(StableRewrite, Rule):
    code = "JX708"
    name = "log-of-sigmoid"
    summary = "log(sigmoid(x)) and log(1 - sigmoid(x)) are -inf for large |x|: use jax.nn.log_sigmoid."
    severity = "warning"
    fix = "unsafe"
    stabilizing_fix = True
    rewrites = (Rewrite(("log",), pattern=_log_of_sigmoid, points_at=call_of("log"), message=_message, fix=_fix),)
