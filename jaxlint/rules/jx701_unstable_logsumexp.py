"""JX701 unstable-logsumexp: ``log(sum(exp(x)))`` overflows to inf once some x passes ~88.7 (f32).

In the jaxpr: ``log`` of a ``reduce_sum`` (or of a mean: the sum divided by a constant) of an
``exp`` whose input is neither shifted by a maximum (``x - max(x)``, what ``jax.nn.logsumexp``
does) nor bounded by its producer (``sin``, ``tanh``, ...). The finding points at the ``log`` call
of the source; library code that keeps its own ops (logsumexp itself) is not a ``log`` call there.
"""
from __future__ import annotations

import ast
from typing import Iterable

from jaxlint.fixes import stable_calls
from jaxlint.fixes.ast_spans import node_span, node_text
from jaxlint.ir import patterns
from jaxlint.model import Finding, Fix, Span
from jaxlint.rules.base import ProgramContext, Rule

LOG_NAMES = ("log",)


class UnstableLogsumexp(Rule):
    code = "JX701"
    name = "unstable-logsumexp"
    summary = "log(sum(exp(x))) without a max shift overflows to inf for large x: use jax.nn.logsumexp."
    severity = "warning"
    fix = "unsafe"
    stabilizing_fix = True

    @classmethod
    def check_program(cls, ctx: ProgramContext) -> Iterable[Finding]:
        seen: set[Span] = set()
        for op in ctx.ops_here("log"):
            total = patterns.produced_by(op.inputs[0], "reduce_sum", "div", "mul")
            mean = total is not None and total.primitive != "reduce_sum"
            if mean:  # jnp.mean: the sum divided (or multiplied) by a constant
                constant = [v for v in total.inputs if patterns.scalar(v) is not None]
                rest = [v for v in total.inputs if patterns.scalar(v) is None]
                total = patterns.produced_by(rest[0], "reduce_sum") if len(constant) == 1 and len(rest) == 1 else None
            if total is None or patterns.overflowing_exp(total.inputs[0]) is None:
                continue
            call = stable_calls.call_at(ctx.source, op.location.span, LOG_NAMES)
            if call is None or op.location.span in seen:
                continue
            seen.add(op.location.span)
            fix = None if mean else _fix(ctx.source, call)
            kind = "mean" if mean else "sum"
            yield ctx.finding(cls, (
                f"log of a {kind} of exp with no max shift: exp overflows to inf once an input exceeds "
                f"about 88.7 in float32 (709.8 in float64), and the result is inf (the gradient NaN); "
                f"when every input is below about -87.5 each exp underflows to 0 and the result is -inf. "
                f"The true value is finite. jax.nn.logsumexp subtracts the maximum first"
                + (" (log(mean(exp(x))) is logsumexp(x) - log(n))." if mean else ".")),
                node_span(ctx.source, call), fix)


def _fix(source: str, log: ast.Call) -> Fix | None:
    """``log(sum(exp(x), axis=a))`` or ``log(exp(x).sum(a))`` -> ``logsumexp(x, axis=a)``."""
    inner = stable_calls.single_argument(log)
    total = stable_calls.as_call(source, inner, "sum")
    reduced = stable_calls.reduction_operand(source, total) if total is not None else None
    if reduced is None:
        return None
    operand, named = reduced
    exp = stable_calls.as_call(source, operand, "exp")
    x = stable_calls.single_argument(exp) if exp is not None else None
    if x is None or (isinstance(exp.func, ast.Attribute) and not stable_calls.module_like(source, exp.func.value)):
        return None
    name, extra = stable_calls.qualified(source, "jax.nn", "logsumexp")
    arguments = [node_text(source, x)] + [
        f"{key}={node_text(source, value)}" for key, value in named.items()]
    text = f"{name}({', '.join(arguments)})"
    return stable_calls.rewrite(source, log, text, extra, f"use `{text}` (subtracts the maximum first)")
