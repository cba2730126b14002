"""JX504 discarded-functional-update: ``x.at[i].set(v)`` as a statement, its new array thrown away."""
from __future__ import annotations

import ast
from typing import Iterable, cast

from jaxlint.ir import Location, Op
from jaxlint.model import Edit, Finding, Fix, Span
from jaxlint.rules.base import ProgramContext, Rule
from jaxlint.scan.index import SourceIndex

# ``.at[...]`` method -> the primitives its result comes from, on JAX 0.4.35 and 0.10 alike.
# ``divide`` and ``power`` are ``x / ones.at[i].mul(v)`` and ``x ** ...``: the final op is div/pow.
UPDATES: dict[str, frozenset[str]] = {
    "set": frozenset({"scatter"}),
    "apply": frozenset({"scatter"}),
    "add": frozenset({"scatter-add"}),
    "subtract": frozenset({"scatter-sub"}),
    "multiply": frozenset({"scatter-mul"}),
    "mul": frozenset({"scatter-mul"}),
    "min": frozenset({"scatter-min"}),
    "max": frozenset({"scatter-max"}),
    "divide": frozenset({"div"}),
    "power": frozenset({"pow"}),
}


class DiscardedFunctionalUpdate(Rule):
    code = "JX504"
    name = "discarded-functional-update"
    summary = "An `x.at[...].set/add/...` whose result is never used: the update is lost."
    severity = "error"
    fix = "display-only"

    @classmethod
    def check_program(cls, ctx: ProgramContext) -> Iterable[Finding]:
        # The source proves the result is discarded (an expression statement); the trace proves
        # the call was a JAX array update: a dead op of the right primitive at that very place.
        statements = ctx.index.memo("jx504.discarded", lambda: _discarded_updates(ctx.index))
        if not statements:
            return
        ops = list(ctx.ops_here())
        for span, stmt, method in statements:
            dead = [op for op in ops if op.primitive in UPDATES[method]
                    and span.contains(cast(Location, op.location).span) and _dead(op)]
            if dead:
                yield ctx.finding(cls, _message(ctx.source, stmt, method, dead[0]), span,
                                  _fix(ctx.source, stmt, span))


def _discarded_updates(index: SourceIndex) -> list[tuple[Span, ast.Expr, str]]:
    """Expression statements ``<base>.at[<index>].<method>(...)``, with their character spans."""
    if index.tree is None:
        return []
    found = []
    for node in ast.walk(index.tree):
        if not isinstance(node, ast.Expr) or not isinstance(node.value, ast.Call):
            continue
        func = node.value.func
        if (isinstance(func, ast.Attribute) and func.attr in UPDATES
                and isinstance(func.value, ast.Subscript)
                and isinstance(func.value.value, ast.Attribute) and func.value.value.attr == "at"):
            span = index.span(node)
            found.append((span, node, func.attr))
    return found


def _dead(op: Op) -> bool:
    """No op reads the result and no region (function, loop body, branch) returns it."""
    region = op.region
    return all(not value.uses and not (region is not None and any(out is value for out in region.outputs))
               for value in op.outputs)


def _base(stmt: ast.Expr) -> ast.expr:
    return stmt.value.func.value.value.value  # type: ignore[attr-defined]


def _message(source: str, stmt: ast.Expr, method: str, op: Op) -> str:
    text = ast.get_source_segment(source, stmt.value) or f".at[...].{method}(...)"
    base = ast.get_source_segment(source, _base(stmt)) or "the array"
    value = op.outputs[0]
    shape = f"{getattr(value.dtype, 'name', value.dtype)}[{','.join(str(d) for d in value.shape)}]"
    return (f"the result of `{text}` is discarded: JAX arrays are immutable, so `.at[...].{method}` "
            f"returns a new array ({shape}) and leaves `{base}` unchanged; the update is lost. "
            f"Assign the result, e.g. `{base} = {text}`.")


def _fix(source: str, stmt: ast.Expr, span: Span) -> Fix | None:
    # Display-only: rebinding the name changes every later read of it, which is the intent but
    # a change in behaviour the user must accept.
    base = _base(stmt)
    if not isinstance(base, ast.Name):
        return None
    text = ast.get_source_segment(source, stmt.value)
    if text is None:
        return None
    return Fix("display-only", f"assign the result to `{base.id}`",
               (Edit(span, f"{base.id} = {text}"),))
