"""The JX501 rewrite: guard the unsafe op's input with the where's own predicate (the double where).

``jnp.where(x > 0, jnp.log(x), 0.0)`` -> ``jnp.where(x > 0, jnp.log(jnp.where(x > 0, x, 1.0)), 0.0)``.
The forward value is unchanged (the outer where discards the guarded elements); the gradient at
the excluded elements goes from NaN to 0. Offered as "unsafe": it changes the gradient, which is
the point, so ``--fix`` never applies it.
"""
from __future__ import annotations

import ast

from jaxlint.fixes.ast_spans import node_span, node_text
from jaxlint.model import Edit, Fix


def guard_edit(source: str, where: ast.Call, argument: ast.expr, safe: str, branch_is_true: bool) -> Edit:
    """Replace ``argument`` by ``where(pred, argument, safe)`` (or ``(pred, safe, argument)``)."""
    func, pred, arg = (node_text(source, n) for n in (where.func, where.args[0], argument))
    cases = f"{arg}, {safe}" if branch_is_true else f"{safe}, {arg}"
    return Edit(node_span(source, argument), f"{func}({pred}, {cases})")


def build_fix(edits: list[Edit]) -> Fix | None:
    if not edits:
        return None
    return Fix(applicability="unsafe",
               message="guard the input with the same predicate (double where): same forward value, "
                       "finite gradient",
               edits=tuple(sorted(set(edits), key=lambda e: (e.span.start_line, e.span.start_col))))
