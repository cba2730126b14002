"""JX708 log-of-sigmoid: ``log(sigmoid(x))`` and ``log(1 - sigmoid(x))`` are -inf for large |x|.

In the jaxpr: ``log`` of a ``logistic`` (``jax.nn.sigmoid``) or of a hand-written sigmoid, or of
``1 - `` either: the hand-written binary cross-entropy. ``log(sigmoid(x) + eps)`` is quiet.
"""
from __future__ import annotations

import ast
from typing import Iterable

from jaxlint.fixes import stable_calls
from jaxlint.fixes.ast_spans import node_span, node_text
from jaxlint.ir import Value, patterns
from jaxlint.model import Finding, Fix, Span
from jaxlint.rules.base import ProgramContext, Rule

SIGMOID_NAMES = ("sigmoid", "logistic", "expit")


class LogOfSigmoid(Rule):
    code = "JX708"
    name = "log-of-sigmoid"
    summary = "log(sigmoid(x)) and log(1 - sigmoid(x)) are -inf for large |x|: use jax.nn.log_sigmoid."
    severity = "warning"
    fix = "unsafe"
    stabilizing_fix = True

    @classmethod
    def check_program(cls, ctx: ProgramContext) -> Iterable[Finding]:
        seen: set[Span] = set()
        for op in ctx.ops_here("log"):
            complement = patterns.produced_by(op.inputs[0], "sub")
            if complement is not None and patterns.scalar(complement.inputs[0]) == 1.0 \
                    and _sigmoid(complement.inputs[1]):
                negative = True
            elif _sigmoid(op.inputs[0]):
                negative = False
            else:
                continue
            call = stable_calls.call_at(ctx.source, op.location.span, ("log",))
            if call is None or op.location.span in seen:
                continue
            seen.add(op.location.span)
            what, where, right = (("log(1 - sigmoid(x))", "x above about 16.7", "-x for large x")
                                  if negative else ("log(sigmoid(x))", "x below about -87.5", "x for very negative x"))
            yield ctx.finding(cls, (
                f"{what} (as in a hand-written binary cross-entropy): in float32 the sigmoid rounds to "
                f"{'1' if negative else '0'} for {where}, so the log is -inf (the loss inf, the gradient "
                f"NaN) where the true value is {right}. jax.nn.log_sigmoid is finite for any finite x."),
                node_span(ctx.source, call), _fix(ctx.source, call, negative))


def _sigmoid(value: Value) -> bool:
    return patterns.produced_by(value, "logistic") is not None or patterns.hand_sigmoid(value) is not None


def _fix(source: str, log: ast.Call, negative: bool) -> Fix | None:
    """``log(sigmoid(x))`` -> ``log_sigmoid(x)``; ``log(1 - sigmoid(x))`` -> ``log_sigmoid(-x)``."""
    inner = stable_calls.single_argument(log)
    if negative:
        one = isinstance(inner, ast.BinOp) and isinstance(inner.op, ast.Sub) \
            and isinstance(inner.left, ast.Constant) and type(inner.left.value) in (int, float) \
            and inner.left.value == 1
        inner = inner.right if one else None  # type: ignore[union-attr]
    sigmoid = stable_calls.as_call(source, inner, *SIGMOID_NAMES)
    x = stable_calls.single_argument(sigmoid) if sigmoid is not None else None
    if x is None:
        return None
    name, extra = stable_calls.qualified(source, "jax.nn", "log_sigmoid")
    argument = stable_calls.negated(source, x) if negative else node_text(source, x)
    text = f"{name}({argument})"
    return stable_calls.rewrite(source, log, text, extra, f"use `{text}`")
