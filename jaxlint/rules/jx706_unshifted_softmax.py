"""JX706 unshifted-softmax: ``exp(x) / sum(exp(x))`` is NaN once some x passes ~88.7 (f32).

In the jaxpr: a ``div`` of an ``exp`` by a ``reduce_sum`` of the same ``exp``, where the exp's
input is neither shifted by its maximum nor bounded. A softmax whose only use is a ``log`` is
JX702's (log_softmax fixes both). The finding points at the division of the source.
"""
from __future__ import annotations

import ast
from typing import Iterable

from jaxlint.fixes import stable_calls
from jaxlint.fixes.ast_spans import node_at, node_span, node_text
from jaxlint.ir import patterns
from jaxlint.model import Finding, Fix, Span
from jaxlint.rules.base import ProgramContext, Rule


class UnshiftedSoftmax(Rule):
    code = "JX706"
    name = "unshifted-softmax"
    summary = "exp(x) / sum(exp(x)) without a max shift is inf/inf = NaN for large x: use jax.nn.softmax."
    severity = "warning"
    fix = "unsafe"
    stabilizing_fix = True

    @classmethod
    def check_program(cls, ctx: ProgramContext) -> Iterable[Finding]:
        seen: set[Span] = set()
        for op in ctx.ops_here("div"):
            found = patterns.softmax(op.outputs[0])
            if found is None or patterns.overflowing_exp(found[1].outputs[0]) is None:
                continue
            if patterns.only_used_by(op.outputs[0], ("log",)):
                continue  # JX702's
            division = node_at(ctx.source, op.location.span, ast.BinOp)
            if division is None or not isinstance(division.op, ast.Div) or op.location.span in seen:
                continue
            seen.add(op.location.span)
            yield ctx.finding(cls, (
                "softmax with no max shift: exp overflows to inf once a logit exceeds about 88.7 in "
                "float32 (709.8 in float64), and inf / inf is NaN; when every logit is below about "
                "-87.5 each exp underflows to 0, and 0 / 0 is NaN too. The true probabilities are "
                "finite. jax.nn.softmax subtracts the maximum first."),
                node_span(ctx.source, division), _fix(ctx.source, division))


def _fix(source: str, division: ast.BinOp) -> Fix | None:
    """``exp(x) / sum(exp(x), axis=a, keepdims=True)`` -> ``softmax(x, axis=a)``."""
    top = stable_calls.as_call(source, division.left, "exp")
    total = stable_calls.as_call(source, division.right, "sum")
    reduced = stable_calls.reduction_operand(source, total) if total is not None else None
    if top is None or reduced is None:
        return None
    operand, named = reduced
    bottom = stable_calls.as_call(source, operand, "exp")
    x, y = (stable_calls.single_argument(c) if c is not None else None for c in (top, bottom))
    if x is None or y is None or not stable_calls.same_expression(x, y):
        return None
    axis = named.get("axis")
    keepdims = named.get("keepdims")
    kept = isinstance(keepdims, ast.Constant) and keepdims.value is True
    if axis is not None and not kept:
        return None  # sum(..., axis) without keepdims only broadcasts back for some shapes
    name, extra = stable_calls.qualified(source, "jax.nn", "softmax")
    axis_text = "None" if axis is None else node_text(source, axis)
    text = f"{name}({node_text(source, x)}, axis={axis_text})"
    return stable_calls.rewrite(source, division, text, extra, f"use `{text}` (subtracts the maximum first)")
