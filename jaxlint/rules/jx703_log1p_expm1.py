"""JX703 log1p-expm1: ``log(1 + x)`` and ``exp(x) - 1`` lose the digits of a small x.

In the jaxpr: ``log`` of an ``add`` of the literal 1 and a computed float, or a ``sub`` of the
literal 1 from an ``exp``. ``log(1 + exp(x))`` is softplus: it also overflows for large x, so the
finding offers ``jax.nn.softplus``. ``log(x + c)`` with any other constant is quiet.
"""
from __future__ import annotations

import ast
from typing import Iterable

from jaxlint.fixes import stable_calls
from jaxlint.fixes.ast_spans import node_at, node_span, node_text
from jaxlint.ir import Op, patterns
from jaxlint.model import Finding, Fix, Span
from jaxlint.rules.base import ProgramContext, Rule


class Log1pExpm1(Rule):
    code = "JX703"
    name = "log1p-expm1"
    summary = "log(1 + x) and exp(x) - 1 lose precision for small x: use jnp.log1p and jnp.expm1."
    severity = "warning"
    fix = "unsafe"
    stabilizing_fix = True

    @classmethod
    def check_program(cls, ctx: ProgramContext) -> Iterable[Finding]:
        seen: set[Span] = set()
        for op in ctx.ops_here("log", "sub"):
            if op.location.span in seen:
                continue
            found = _log_of_one_plus(ctx, op) if op.primitive == "log" else _exp_minus_one(ctx, op)
            if found is not None:
                seen.add(op.location.span)
                yield found


def _log_of_one_plus(ctx: ProgramContext, op: Op) -> Finding | None:
    add = patterns.produced_by(op.inputs[0], "add")
    if add is None:
        return None
    rest = [v for v in add.inputs if patterns.scalar(v) != 1.0]
    if len(rest) != 1 or not patterns.inexact(rest[0]) or not patterns.varies(rest[0]):
        return None
    call = stable_calls.call_at(ctx.source, op.location.span, ("log",))
    if call is None:
        return None
    softplus = patterns.produced_by(rest[0], "exp") is not None
    if softplus:
        message = ("log(1 + exp(x)) is softplus written by hand: exp overflows to inf once x exceeds "
                   "about 88.7 in float32 (the result is inf, the gradient NaN), and for very negative x "
                   "the 1 + swallows exp(x). jax.nn.softplus is exact on both ends.")
    else:
        message = ("log(1 + x) rounds 1 + x first, losing the digits of a small x: in float32 at x = 1e-7 "
                   "it gives 1.19e-7 (19% off), and 0 below 6e-8. jnp.log1p(x) is exact there.")
    return ctx.finding(Log1pExpm1, message, node_span(ctx.source, call), _log_fix(ctx.source, call, softplus))


def _exp_minus_one(ctx: ProgramContext, op: Op) -> Finding | None:
    exp = patterns.produced_by(op.inputs[0], "exp")
    if exp is None or patterns.scalar(op.inputs[1]) != 1.0 or not patterns.varies(exp.inputs[0]):
        return None
    node = node_at(ctx.source, op.location.span, ast.BinOp)
    if node is None or not isinstance(node.op, ast.Sub):
        return None
    return ctx.finding(Log1pExpm1, (
        "exp(x) - 1 cancels the leading 1 and keeps only float rounding for a small x: in float32 at "
        "x = 1e-7 it gives 1.19e-7 (19% off), and 0 below 6e-8. jnp.expm1(x) is exact there."),
        node_span(ctx.source, node), _expm1_fix(ctx.source, node))


def _one(node: ast.expr) -> bool:
    return isinstance(node, ast.Constant) and type(node.value) in (int, float) and node.value == 1


def _log_fix(source: str, log: ast.Call, softplus: bool) -> Fix | None:
    """``log(1 + x)`` -> ``log1p(x)``; ``log(1 + exp(x))`` -> ``softplus(x)``."""
    inner = stable_calls.single_argument(log)
    if not isinstance(inner, ast.BinOp) or not isinstance(inner.op, ast.Add):
        return None
    x = inner.right if _one(inner.left) else inner.left if _one(inner.right) else None
    if x is None:
        return None
    if softplus:
        exp = stable_calls.as_call(source, x, "exp")
        x = stable_calls.single_argument(exp) if exp is not None else None
        if x is None:
            return None
        name, extra = stable_calls.qualified(source, "jax.nn", "softplus")
    else:
        name, extra = stable_calls.qualified(source, "jax.numpy", "log1p")
    text = f"{name}({node_text(source, x)})"
    return stable_calls.rewrite(source, log, text, extra, f"use `{text}`")


def _expm1_fix(source: str, node: ast.BinOp) -> Fix | None:
    exp = stable_calls.as_call(source, node.left, "exp")
    x = stable_calls.single_argument(exp) if exp is not None and _one(node.right) else None
    if x is None:
        return None
    name, extra = stable_calls.qualified(source, "jax.numpy", "expm1")
    text = f"{name}({node_text(source, x)})"
    return stable_calls.rewrite(source, node, text, extra, f"use `{text}`")
