"""JX701 unstable-logsumexp: ``log(sum(exp(x)))`` overflows to inf once some x passes ~88.7 (f32).

In the jaxpr: ``log`` of a ``reduce_sum`` (or of a mean: the sum divided by a constant) of an
``exp`` whose input is neither shifted by a maximum (``x - max(x)``, what ``jax.nn.logsumexp``
does) nor bounded by its producer (``sin``, ``tanh``, ...). The finding points at the ``log`` call
of the source; library code that keeps its own ops (logsumexp itself) is not a ``log`` call there.
"""
from __future__ import annotations

import ast

from jaxlint.fixes.stable_calls import stable_call
from jaxlint.ir import Op, patterns
from jaxlint.model import Fix
from jaxlint.rules.base import Rule
from jaxlint.rules.numerics import Match, Rewrite, StableRewrite, call_of
from jaxlint.scan.index import single_argument


def _log_of_sum_of_exp(log: Op) -> str | None:
    """Which reduction of an overflowing exp the log reads: "sum", or "mean" (the sum divided or
    multiplied by a constant)."""
    total = patterns.produced_by(log.inputs[0], "reduce_sum", "div", "mul")
    mean = total is not None and total.primitive != "reduce_sum"
    if mean:
        constant = [v for v in total.inputs if patterns.scalar(v) is not None]
        rest = [v for v in total.inputs if patterns.scalar(v) is None]
        total = patterns.produced_by(rest[0], "reduce_sum") if len(constant) == 1 and len(rest) == 1 else None
    if total is None or patterns.overflowing_exp(total.inputs[0]) is None:
        return None
    return "mean" if mean else "sum"


def _message(match: Match) -> str:
    mean = match.found == "mean"
    return (f"log of a {match.found} of exp with no max shift: exp overflows to inf once an input exceeds "
            f"about 88.7 in float32 (709.8 in float64), and the result is inf (the gradient NaN); "
            f"when every input is below about -87.5 each exp underflows to 0 and the result is -inf. "
            f"The true value is finite. jax.nn.logsumexp subtracts the maximum first"
            + (" (log(mean(exp(x))) is logsumexp(x) - log(n))." if mean else "."))


def _fix(match: Match) -> Fix | None:
    """``log(sum(exp(x), axis=a))`` or ``log(exp(x).sum(a))`` -> ``logsumexp(x, axis=a)``."""
    index = match.index
    total = index.as_call(single_argument(match.node), "sum") if match.found == "sum" else None
    reduced = index.reduction_operand(total) if total is not None else None
    if reduced is None:
        return None
    operand, named = reduced
    exp = index.as_call(operand, "exp")
    x = single_argument(exp)
    if x is None or (isinstance(exp.func, ast.Attribute) and not index.module_like(exp.func.value)):
        return None
    arguments = [index.text(x)] + [f"{key}={index.text(value)}" for key, value in named.items()]
    return stable_call(index, match.node, "jax.nn.logsumexp", arguments, " (subtracts the maximum first)")


class UnstableLogsumexp(StableRewrite, Rule):
    code = "JX701"
    name = "unstable-logsumexp"
    summary = "log(sum(exp(x))) without a max shift overflows to inf for large x: use jax.nn.logsumexp."
    severity = "warning"
    fix = "unsafe"
    stabilizing_fix = True
    rewrites = (Rewrite(("log",), pattern=_log_of_sum_of_exp, points_at=call_of("log"), message=_message, fix=_fix),)
