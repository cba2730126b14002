"""JX702 log-of-softmax: ``log(softmax(x))`` is -inf wherever a probability underflows to 0.

In the jaxpr: ``log`` of ``exp(a) / sum(exp(a))``, shifted (``jax.nn.softmax``) or not. The
finding points at the ``log`` call; ``log(softmax(x) + eps)`` is a different expression and quiet.
"""
from __future__ import annotations

import ast
from typing import Iterable

from jaxlint.fixes import stable_calls
from jaxlint.fixes.ast_spans import node_span, node_text
from jaxlint.ir import patterns
from jaxlint.model import Finding, Fix, Span
from jaxlint.rules.base import ProgramContext, Rule


class LogOfSoftmax(Rule):
    code = "JX702"
    name = "log-of-softmax"
    summary = "log(softmax(x)) is -inf where a probability underflows: use jax.nn.log_softmax."
    severity = "warning"
    fix = "unsafe"
    stabilizing_fix = True

    @classmethod
    def check_program(cls, ctx: ProgramContext) -> Iterable[Finding]:
        seen: set[Span] = set()
        for op in ctx.ops_here("log"):
            if patterns.softmax(op.inputs[0]) is None:
                continue
            call = stable_calls.call_at(ctx.source, op.location.span, ("log",))
            if call is None or op.location.span in seen:
                continue
            seen.add(op.location.span)
            yield ctx.finding(cls, (
                "log of a softmax: in float32 a probability whose logit is about 87.5 below the largest "
                "rounds to 0 and its log is -inf, and the gradient through the division is NaN there. "
                "jax.nn.log_softmax computes x - max(x) - log(sum(exp(x - max(x)))), finite for any "
                "finite logits."), node_span(ctx.source, call), _fix(ctx.source, call))


def _fix(source: str, log: ast.Call) -> Fix | None:
    """``log(softmax(x, axis=a))`` -> ``log_softmax(x, axis=a)``."""
    inner = stable_calls.as_call(source, stable_calls.single_argument(log), "softmax")
    if inner is None or not inner.args or len(inner.args) > 2 or any(k.arg != "axis" for k in inner.keywords):
        return None
    name, extra = stable_calls.qualified(source, "jax.nn", "log_softmax")
    arguments = [node_text(source, a) for a in inner.args]
    arguments[1:] = [f"axis={a}" for a in arguments[1:]]
    arguments += [f"axis={node_text(source, k.value)}" for k in inner.keywords]
    text = f"{name}({', '.join(arguments)})"
    return stable_calls.rewrite(source, log, text, extra, f"use `{text}`")
