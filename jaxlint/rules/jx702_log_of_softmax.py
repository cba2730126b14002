"""JX702 log-of-softmax: ``log(softmax(x))`` is -inf wherever a probability underflows to 0.

In the jaxpr: ``log`` of ``exp(a) / sum(exp(a))``, shifted (``jax.nn.softmax``) or not. The
finding points at the ``log`` call; ``log(softmax(x) + eps)`` is a different expression and quiet.
"""
from __future__ import annotations

from jaxlint.fixes.stable_calls import stable_call
from jaxlint.ir import Op, patterns
from jaxlint.model import Fix
from jaxlint.rules.base import Rule
from jaxlint.rules.numerics import Match, Rewrite, StableRewrite, call_of
from jaxlint.scan.index import single_argument

MESSAGE = ("log of a softmax: in float32 a probability whose logit is about 87.5 below the largest "
           "rounds to 0 and its log is -inf, and the gradient through the division is NaN there. "
           "jax.nn.log_softmax computes x - max(x) - log(sum(exp(x - max(x)))), finite for any "
           "finite logits.")


def _log_of_softmax(log: Op) -> object | None:
    return patterns.softmax(log.inputs[0])


def _fix(match: Match) -> Fix | None:
    """``log(softmax(x, axis=a))`` -> ``log_softmax(x, axis=a)``."""
    index = match.index
    inner = index.as_call(single_argument(match.node), "softmax")
    if inner is None or not inner.args or len(inner.args) > 2 or any(k.arg != "axis" for k in inner.keywords):
        return None
    arguments = [index.text(a) for a in inner.args]
    arguments[1:] = [f"axis={a}" for a in arguments[1:]]
    arguments += [f"axis={index.text(k.value)}" for k in inner.keywords]
    return stable_call(index, match.node, "jax.nn.log_softmax", arguments)


class LogOfSoftmax(StableRewrite, Rule):
    code = "JX702"
    name = "log-of-softmax"
    summary = "log(softmax(x)) is -inf where a probability underflows: use jax.nn.log_softmax."
    severity = "warning"
    fix = "unsafe"
    stabilizing_fix = True
    rewrites = (Rewrite(("log",), pattern=_log_of_softmax, points_at=call_of("log"),
                        message=MESSAGE, fix=_fix),)
