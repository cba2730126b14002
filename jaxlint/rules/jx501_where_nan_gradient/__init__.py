"""JX501 where-nan-gradient: a guard that keeps the forward value finite but not the gradient.

Two guard shapes of one mistake, an op whose derivative is infinite at some inputs (log at 0,
sqrt at 0, 1/x at 0, ...) guarded after the fact: ``jnp.where(x > 0, jnp.log(x), 0.0)``
(where_guard.py) and ``jnp.clip(jnp.log(p), c)`` or ``jnp.maximum(jnp.log(p), c)``
(clamp_guard.py). Either way the guard sends a zero cotangent to the op at its singular point,
and 0 * inf is NaN. The ops, their singular points and how the source spells them: unsafe_ops.py.
"""
from __future__ import annotations

from typing import Iterable

from jaxlint.model import Finding
from jaxlint.rules.base import ProgramContext, Rule
from jaxlint.rules.jx501_where_nan_gradient.clamp_guard import clamp_findings
from jaxlint.rules.jx501_where_nan_gradient.where_guard import where_findings


class WhereNanGradient(Rule):
    code = "JX501"
    name = "where-nan-gradient"
    summary = ("A jnp.where excludes, or a clip/maximum/minimum clamps away, inputs where the guarded "
               "operation has an infinite derivative: the gradient is NaN.")
    severity = "error"
    fix = "unsafe"

    @classmethod
    def check_program(cls, ctx: ProgramContext) -> Iterable[Finding]:
        for message, span, fix, points in where_findings(ctx):
            yield ctx.finding(cls, message, span, fix, points=points)
        for message, span, fix, point in clamp_findings(ctx):
            yield ctx.finding(cls, message, span, fix, points=(point,))
