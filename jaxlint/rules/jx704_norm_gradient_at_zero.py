"""JX704 norm-gradient-at-zero: the gradient of ``sqrt(sum(d ** 2))`` is NaN where d is all zero.

In the jaxpr: ``sqrt`` of a ``reduce_sum`` of a square (``d * d``, ``d ** 2``, ``jnp.square``) of
a value that depends on the function's inputs; ``jnp.linalg.norm`` is exactly this. The derivative
of sqrt at 0 is inf, and the chain rule multiplies it by d = 0: NaN. Reported only on a
differentiated path: the sqrt sits under ``jvp`` in the jaxpr (the traced function takes the
gradient), the source passes the function holding it to ``grad``, ``value_and_grad``, ``jvp``
and the like, or (``pytest --jaxlint``) the tests called the function under such a transform.
A guarded input (``sum + eps``, ``maximum(sum, eps)``, a double ``where``) is not
a bare sum of squares, so it is quiet, and so is a vector replaced by a nonzero constant wherever
its own norm is zero (``where(norm(x) <= floor, ones_like(x), x)``, optax's ``safe_norm``); so is a norm only compared with a threshold (no gradient
flows back through a comparison).
"""
from __future__ import annotations

import ast

from jaxlint.ir import Op, Value, patterns
from jaxlint.ir.primitives import traits
from jaxlint.model import Span
from jaxlint.rules.base import Rule
from jaxlint.rules.numerics import Match, Rewrite, StableRewrite
from jaxlint.scan.index import SourceIndex


def _norm(op: Op) -> bool | None:
    """``sqrt`` (or ``** 0.5``) of a sum of squares of a differentiable value a gradient flows back to."""
    if op.primitive == "pow" and patterns.scalar(op.inputs[1]) != 0.5:
        return None
    squared = _squared(op.inputs[0])
    if squared is None or not patterns.differentiable(squared) or not _gradient_flows(op.outputs[0]) \
            or _replaced_where_zero(squared):
        return None
    return True


# At a norm of 0, ``norm OP bound`` is true for these (bound >= 0, or > 0 for the strict ones):
# which branch of ``where(norm OP bound, a, b)`` a zero vector gets.
_TRUE_AT_ZERO = {"le": lambda bound: bound >= 0, "lt": lambda bound: bound > 0,
                 "ge": lambda bound: bound <= 0, "gt": lambda bound: bound < 0}


def _replaced_where_zero(d: Value) -> bool:
    """``d`` is the inner where of a double where on the vector itself, as optax's ``safe_norm``
    writes it: ``where(norm(x) <= floor, ones_like(x), x)`` gives a nonzero constant wherever the
    norm of ``x`` is zero, so the outer norm never sees a zero vector. A floor that is not a
    constant is taken as a floor (>= 0): a norm compared with a negative bound is not a guard."""
    op = patterns.produced_by(d, "select_n")
    if op is None or len(op.inputs) != 3:
        return False
    test = patterns.produced_by(op.inputs[0], *_TRUE_AT_ZERO)
    if test is None:
        return False
    norm, bound = test.inputs
    if patterns.produced_by(norm, "sqrt", "pow") is not None:
        norm = patterns.produced_by(norm, "sqrt", "pow").inputs[0]
    tested = _squared(norm)
    if tested is None:
        return False
    floor = patterns.scalar(bound)
    picked = 2 if _TRUE_AT_ZERO[test.primitive](0.0 if floor is None else floor) else 1
    constant = patterns.scalar(op.inputs[picked])
    other = patterns.strip(op.inputs[3 - picked])
    return constant is not None and constant != 0 and other is patterns.strip(tested)


def _squared(value: Value) -> Value | None:
    """The ``d`` of ``reduce_sum(d * d)`` (or of ``d ** 2``, ``square(d)``)."""
    total = patterns.produced_by(value, "reduce_sum")
    if total is None:
        return None
    op = patterns.produced_by(total.inputs[0], "mul", "integer_pow", "square", "pow", "real")
    if op is not None and op.primitive == "real":  # norm of a complex vector: real(x * conj(x))
        op = patterns.produced_by(op.inputs[0], "mul")
    if op is None:
        return None
    if op.primitive == "mul":
        a, b = (patterns.strip(v) for v in op.inputs)
        conj = patterns.produced_by(b, "conj")
        return a if a is b or (conj is not None and patterns.strip(conj.inputs[0]) is a) else None
    if op.primitive == "integer_pow":
        return op.inputs[0] if op.params.get("y") == 2 else None
    if op.primitive == "pow":
        return op.inputs[0] if patterns.scalar(op.inputs[1]) == 2.0 else None
    return op.inputs[0]


def _gradient_flows(value: Value) -> bool:
    """Some live use of ``value`` (through layout ops) passes a gradient back: anything but a
    comparison, ``stop_gradient`` or a rounding; a returned value counts. Dead uses do not: JAX's
    linearization of ``jnp.linalg.norm`` computes sqrt's derivative even when nothing reads it."""
    stack = [value]
    while stack:
        value = stack.pop()
        if patterns.returned(value):
            return True
        for use in value.uses:
            if use.primitive in patterns.TRANSPARENT:
                stack.extend(use.outputs)
            elif not traits(use.primitive).gradient_free and not (
                    use.primitive == "convert_element_type" and not patterns.inexact(use.outputs[0])) \
                    and any(_live(out) for out in use.outputs):
                return True
    return False


def _live(value: Value) -> bool:
    """``value`` reaches an output of its region through its uses (is not dead code)."""
    stack, seen = [value], set()
    while stack:
        value = stack.pop()
        if id(value) in seen:
            continue
        seen.add(id(value))
        if patterns.returned(value):
            return True
        stack.extend(out for use in value.uses for out in use.outputs)
    return False


def _source_node(index: SourceIndex, span: Span) -> ast.expr | None:
    """The source's ``jnp.sqrt(...)``, ``... ** 0.5`` or ``jnp.linalg.norm(...)`` at the op."""
    call = index.call_at(span, ("sqrt", "norm", "vector_norm"))
    if call is not None:
        return call
    power = index.node_at(span, ast.BinOp)
    return power if power is not None and isinstance(power.op, ast.Pow) else None


def _differentiated(match: Match) -> str | None:
    """How the sqrt is differentiated, or None when nothing shows it is."""
    ctx, index = match.ctx, match.index
    if "jvp" in match.op.transforms:
        return "the traced function takes its derivative"
    if ctx.differentiated:
        return "the tests called it under a derivative transform"
    if index.tree is None:
        return None
    names = index.function_names_around(match.op.location.span.start_line) | (  # type: ignore[union-attr]
        {ctx.target.qualname.rpartition(".")[2]} if ctx.in_target_file and ctx.target is not None else set())
    passed = index.differentiated_names & names
    return f"{sorted(passed)[0]} is passed to a derivative transform" if passed else None


def _message(match: Match) -> str:
    return (f"{match.index.text(match.node)} is differentiated ({_differentiated(match)}), and its gradient is NaN "
            f"where the vector is all zero (sqrt's derivative there is inf, times 0): the same point twice, a == b "
            f"in norm(a - b), or a zero initial state. Guard it with a double where: "
            f"s = sum(d ** 2); where(s > 0, sqrt(where(s > 0, s, 1.0)), 0.0), which gives the "
            f"gradient 0 there.")


class NormGradientAtZero(StableRewrite, Rule):
    code = "JX704"
    name = "norm-gradient-at-zero"
    summary = "The gradient of a norm (sqrt of a sum of squares) is NaN where its input is zero."
    severity = "warning"
    rewrites = (Rewrite(("sqrt", "pow"), pattern=_norm, points_at=_source_node, message=_message,
                        quiet_for=lambda match: _differentiated(match) is None),)
