"""The numerics rules' one form (JX701-JX708): a rule declares what it reports as ``Rewrite``s,
each a jaxpr pattern, the source expression the finding points at, when it stays quiet, its
message and the fix builder; ``StableRewrite.check_program`` does the rest, the same way for all.

A finding needs both views: the pattern on the jaxpr (what the values do) and the expression of
the source at the op's location (what the user wrote, and what the fix rewrites). Library code
that keeps its own ops (``jax.nn.logsumexp`` itself) has no such expression there, so it is quiet.
"""
from __future__ import annotations

import ast
from dataclasses import dataclass
from typing import Any, Callable, ClassVar, Iterable

from jaxlint.ir import Op
from jaxlint.model import Finding, Fix, Span
from jaxlint.rules.base import ProgramContext
from jaxlint.scan.index import SourceIndex


@dataclass(frozen=True)
class Match:
    """One op the pattern matched, and the source expression it comes from."""

    ctx: ProgramContext
    op: Op
    found: Any  # what the pattern returned
    node: ast.expr

    @property
    def index(self) -> SourceIndex:
        return self.ctx.index


@dataclass(frozen=True)
class Rewrite:
    """One shape a numerics rule reports."""

    primitives: tuple[str, ...]  # the op the pattern starts at
    pattern: Callable[[Op], Any]  # the jaxpr around it: anything but None is a match
    points_at: Callable[[SourceIndex, Span], ast.expr | None]  # the source expression at the op
    message: str | Callable[[Match], str]
    fix: Callable[[Match], Fix | None] = lambda match: None
    quiet_for: Callable[[Match], bool] = lambda match: False  # another rule's, or harmless here


def call_of(*names: str) -> Callable[[SourceIndex, Span], ast.expr | None]:
    """Points at a call of one of ``names`` (``jnp.log(...)``, ``x.log()``) with plain arguments."""
    return lambda index, span: index.call_at(span, names)


def operator(kind: type[ast.operator]) -> Callable[[SourceIndex, Span], ast.expr | None]:
    """Points at a binary operation of ``kind`` (``ast.Div``: ``a / b``)."""
    def at(index: SourceIndex, span: Span) -> ast.expr | None:
        node = index.node_at(span, ast.BinOp)
        return node if node is not None and isinstance(node.op, kind) else None
    return at


class StableRewrite:
    """The check of a numerics rule (mixed into its Rule class before ``Rule``): one finding per
    source expression, by the first of ``rewrites`` that matches an op located there."""

    rewrites: ClassVar[tuple[Rewrite, ...]]

    @classmethod
    def check_program(cls, ctx: ProgramContext) -> Iterable[Finding]:
        primitives = {p for rewrite in cls.rewrites for p in rewrite.primitives}
        seen: set[Span] = set()
        for op in ctx.ops_here(*primitives):
            span = op.location.span  # type: ignore[union-attr]
            if span in seen:
                continue
            for rewrite in cls.rewrites:
                match = _match(rewrite, ctx, op) if op.primitive in rewrite.primitives else None
                if match is not None:
                    seen.add(span)
                    message = rewrite.message if isinstance(rewrite.message, str) else rewrite.message(match)
                    span = ctx.index.span(match.node)
                    yield ctx.finding(cls, message, span, rewrite.fix(match))  # type: ignore[arg-type]
                    break


def _match(rewrite: Rewrite, ctx: ProgramContext, op: Op) -> Match | None:
    found = rewrite.pattern(op)
    if found is None:
        return None
    node = rewrite.points_at(ctx.index, op.location.span)  # type: ignore[union-attr]
    if node is None:
        return None
    match = Match(ctx, op, found, node)
    return None if rewrite.quiet_for(match) else match
