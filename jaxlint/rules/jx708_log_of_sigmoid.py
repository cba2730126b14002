"""JX708 log-of-sigmoid: ``log(sigmoid(x))`` and ``log(1 - sigmoid(x))`` are -inf for large |x|,
and ``log1p(exp(z))``, softplus by hand (``-log(sigmoid(-z))``), is inf once exp(z) overflows.

In the jaxpr: ``log`` of a ``logistic`` (``jax.nn.sigmoid``) or of a hand-written sigmoid, or of
``1 - `` either: the hand-written binary cross-entropy. ``log(sigmoid(x) + eps)`` is quiet. And a
``log1p`` of an ``exp`` whose input can be large (not max-shifted, not bounded, not ``-abs(x)`` or
another value that is never positive): ``x + log1p(exp(-x))`` and ``-log1p(exp(-x))`` (softplus
and log-sigmoid by hand) are inf for x below about -88.7 in float32, ``log1p(exp(x))`` above 88.7,
with a NaN gradient there. The stable form ``max(x, 0) + log1p(exp(-abs(x)))`` is quiet.
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


def _softplus_by_hand(log1p: Op) -> bool | None:
    """Whether ``log1p``'s input is an ``exp`` that overflows for a large input."""
    exp = patterns.overflowing_exp(log1p.inputs[0])
    return None if exp is None or _never_positive(exp.inputs[0]) else True


def _never_positive(value: Value) -> bool:
    """``-abs(x)``, ``-x ** 2``, ``-sqrt(x)``, ``min(x, c)`` with c <= 0: exp of it is at most 1."""
    op = patterns.strip(value).producer
    if op is None:
        return False
    if op.primitive == "min" and len(op.inputs) == 2:
        return any((c := patterns.scalar(v)) is not None and c <= 0 for v in op.inputs)
    if op.primitive != "neg":
        return False
    inner = patterns.strip(op.inputs[0]).producer
    if inner is None:
        return False
    if inner.primitive == "integer_pow":
        return int(inner.params.get("y", 1)) % 2 == 0
    if inner.primitive == "mul" and len(inner.inputs) == 2:
        return patterns.strip(inner.inputs[0]) is patterns.strip(inner.inputs[1])
    return inner.primitive in ("abs", "sqrt", "square", "exp", "logistic")


def _softplus_message(match: Match) -> str:
    import numpy as np

    dtype = match.op.outputs[0].dtype
    limit = float(np.log(np.finfo(dtype).max)) if dtype is not None else 88.7
    return (f"log1p(exp(z)) is softplus(z) written by hand (x + log1p(exp(-x)) is softplus(x), "
            f"-log1p(exp(-x)) is log_sigmoid(x)): exp(z) overflows to inf once z exceeds about {limit:.1f} "
            f"in {np.dtype(dtype).name if dtype is not None else 'float32'}, and there the result is inf "
            f"where the true value is about z, and the gradient is NaN. jax.nn.softplus(z) is exact for "
            f"every z.")


def _softplus_fix(match: Match) -> Fix | None:
    """``log1p(exp(z))`` -> ``softplus(z)``."""
    z = single_argument(match.index.as_call(single_argument(match.node), "exp"))
    return None if z is None else stable_call(match.index, match.node, "jax.nn.softplus", [match.index.text(z)])


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
    summary = ("log(sigmoid(x)) and log(1 - sigmoid(x)) are -inf for large |x|, log1p(exp(x)) inf: use "
               "jax.nn.log_sigmoid or jax.nn.softplus.")
    severity = "warning"
    fix = "unsafe"
    stabilizing_fix = True
    rewrites = (Rewrite(("log",), pattern=_log_of_sigmoid, points_at=call_of("log"), message=_message, fix=_fix),
                Rewrite(("log1p",), pattern=_softplus_by_hand, points_at=call_of("log1p"), message=_softplus_message,
                        fix=_softplus_fix))
