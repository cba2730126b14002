"""JX704 norm-gradient-at-zero: the gradient of ``sqrt(sum(d ** 2))`` is NaN where d is all zero.

In the jaxpr: ``sqrt`` of a ``reduce_sum`` of a square (``d * d``, ``d ** 2``, ``jnp.square``) of
a value that depends on the function's inputs; ``jnp.linalg.norm`` is exactly this. The derivative
of sqrt at 0 is inf, and the chain rule multiplies it by d = 0: NaN. Reported only on a
differentiated path: the sqrt sits under ``jvp`` in the jaxpr (the traced function takes the
gradient), the source passes the function holding it to ``grad``, ``value_and_grad``, ``jvp``
and the like, or (``pytest --jaxlint``) the tests called the function under such a transform.
A guarded input (``sum + eps``, ``maximum(sum, eps)``, a double ``where``) is not
a bare sum of squares, so it is quiet; so is a norm only compared with a threshold (no gradient
flows back through a comparison).
"""
from __future__ import annotations

import ast
import functools
from typing import Iterable

from jaxlint.fixes import stable_calls
from jaxlint.fixes.ast_spans import node_at, node_span, node_text, parse
from jaxlint.ir import Op, Value, patterns
from jaxlint.ir.primitives import traits
from jaxlint.model import Finding, Span
from jaxlint.rules.base import ProgramContext, Rule

DIFFERENTIATING = frozenset({"grad", "value_and_grad", "jvp", "vjp", "linearize", "jacfwd", "jacrev",
                             "jacobian", "hessian", "filter_grad", "filter_value_and_grad", "filter_jvp",
                             "filter_vjp"})


class NormGradientAtZero(Rule):
    code = "JX704"
    name = "norm-gradient-at-zero"
    summary = "The gradient of a norm (sqrt of a sum of squares) is NaN where its input is zero."
    severity = "warning"

    @classmethod
    def check_program(cls, ctx: ProgramContext) -> Iterable[Finding]:
        seen: set[Span] = set()
        for op in ctx.ops_here("sqrt", "pow"):
            if op.location.span in seen or (op.primitive == "pow" and patterns.scalar(op.inputs[1]) != 0.5):
                continue
            squared = _squared(op.inputs[0])
            if squared is None or not patterns.differentiable(squared) or not _gradient_flows(op.outputs[0]):
                continue
            node = _source_node(ctx.source, op.location.span)
            if node is None:
                continue
            how = _differentiated(ctx, op)
            if how is None:
                continue
            seen.add(op.location.span)
            text = node_text(ctx.source, node)
            yield ctx.finding(cls, (
                f"{text} is differentiated ({how}), and its gradient is NaN where the vector is all zero "
                f"(sqrt's derivative there is inf, times 0): the same point twice, a == b in "
                f"norm(a - b), or a zero initial state. Guard it with a double where: "
                f"s = sum(d ** 2); where(s > 0, sqrt(where(s > 0, s, 1.0)), 0.0), which gives the "
                f"gradient 0 there."), node_span(ctx.source, node))


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


def _source_node(source: str, span: Span) -> ast.expr | None:
    """The source's ``jnp.sqrt(...)``, ``... ** 0.5`` or ``jnp.linalg.norm(...)`` at the op."""
    call = stable_calls.call_at(source, span, ("sqrt", "norm", "vector_norm"))
    if call is not None:
        return call
    power = node_at(source, span, ast.BinOp)
    return power if power is not None and isinstance(power.op, ast.Pow) else None


def _differentiated(ctx: ProgramContext, op: Op) -> str | None:
    """How the sqrt is differentiated, or None when nothing shows it is."""
    if "jvp" in op.transforms:
        return "the traced function takes its derivative"
    if ctx.differentiated:
        return "the tests called it under a derivative transform"
    parsed = parse(ctx.source)
    if parsed is None:
        return None
    names = _enclosing_functions(parsed.tree, op.location.span.start_line) | (
        {ctx.target.qualname.rpartition(".")[2]} if ctx.in_target_file and ctx.target is not None else set())
    passed = _differentiated_names(ctx.source) & names
    return f"{sorted(passed)[0]} is passed to a derivative transform" if passed else None


def _enclosing_functions(tree: ast.Module, line: int) -> set[str]:
    return {node.name for node in ast.walk(tree) if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef))
            and node.lineno <= line <= (node.end_lineno or node.lineno)}


@functools.lru_cache(maxsize=8)
def _differentiated_names(source: str) -> frozenset[str]:
    """Names passed as the first argument of grad(...), value_and_grad(...), ... or decorated with them."""
    parsed = parse(source)
    found: set[str] = set()
    for node in ast.walk(parsed.tree) if parsed is not None else ():
        if isinstance(node, ast.Call) and stable_calls.callee(source, node) in DIFFERENTIATING and node.args:
            first = node.args[0]
            if isinstance(first, ast.Name):
                found.add(first.id)
            elif isinstance(first, ast.Attribute):
                found.add(first.attr)
        if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef)):
            for decorator in node.decorator_list:
                target = decorator.func if isinstance(decorator, ast.Call) else decorator
                name = target.attr if isinstance(target, ast.Attribute) else getattr(target, "id", None)
                if name in DIFFERENTIATING:
                    found.add(node.name)
    return frozenset(found)
