"""The JX303 fix: ``x[:, np.arange(0, 512)]`` -> ``x[:, 0:512]``.

The IR keeps no values of closed-over constants, so the index values come from the source: the
subscript at the gather's location, whose index along one axis is a literal range or list
(``np.arange(a[, b[, s]])``, ``jnp.arange(...)``, ``np.array([0, 2, 4])``, ``jnp.asarray(...)``)
and whose other entries are full slices ``:``. The rule checks these values against the jaxpr
(index count, gathered axis) before using them.
"""
from __future__ import annotations

import ast
from dataclasses import dataclass

from jaxlint.fixes.ast_spans import node_span
from jaxlint.model import Edit, Fix
from jaxlint.scan.index import int_literal

_ARRAY_BUILDERS = frozenset({"array", "asarray"})
_ALLOWED_KEYWORDS = frozenset({"dtype"})  # an integer dtype does not change the values


@dataclass(frozen=True)
class LiteralIndex:
    axis: int  # position of the index in the subscript (the gathered operand axis)
    node: ast.expr  # the index expression
    values: list[int]  # as written (negative values not yet normalized)


def literal_index(subscript: ast.Subscript | None) -> LiteralIndex | None:
    """The one literal integer-array index of ``subscript``, all other entries being ``:``."""
    if subscript is None or not isinstance(subscript.ctx, ast.Load):
        return None
    entries = subscript.slice.elts if isinstance(subscript.slice, ast.Tuple) else [subscript.slice]
    found = None
    for axis, entry in enumerate(entries):
        if isinstance(entry, ast.Slice) and entry.lower is None and entry.upper is None and entry.step is None:
            continue
        values = _values(entry)
        if values is None or found is not None:
            return None  # Ellipsis, None, an int, a bounded slice, a second array index
        found = LiteralIndex(axis, entry, values)
    return found


def _values(node: ast.expr) -> list[int] | None:
    if not isinstance(node, ast.Call) or not isinstance(node.func, ast.Attribute):
        return None
    if any(k.arg not in _ALLOWED_KEYWORDS for k in node.keywords):
        return None
    if node.func.attr == "arange":
        bounds = [int_literal(a) for a in node.args]
        if not 1 <= len(bounds) <= 3 or None in bounds or (len(bounds) == 3 and bounds[2] == 0):
            return None
        return list(range(*bounds))
    if node.func.attr in _ARRAY_BUILDERS and len(node.args) == 1 \
            and isinstance(node.args[0], (ast.List, ast.Tuple)):
        values = [int_literal(e) for e in node.args[0].elts]
        return None if None in values else values
    return None


def as_range(values: list[int], size: int) -> tuple[int, int, int] | None:
    """(start, last, step) when ``values`` (normalized against ``size``) step up evenly in bounds."""
    normalized = [v + size if v < 0 else v for v in values]
    if len(normalized) < 2 or any(not 0 <= v < size for v in normalized):
        return None
    step = normalized[1] - normalized[0]
    if step < 1 or any(b - a != step for a, b in zip(normalized, normalized[1:])):
        return None  # a permutation, a repeat, a decreasing or uneven range
    return normalized[0], normalized[-1], step


def slice_text(start: int, last: int, step: int) -> str:
    """The slice selecting exactly start, start+step, ..., last."""
    return f"{start}:{last + 1}" if step == 1 else f"{start}:{last + 1}:{step}"


def build_fix(source: str, index: LiteralIndex, start: int, last: int, step: int) -> Fix | None:
    """Replace the index expression by the equivalent slice, written with the same signs.

    All-negative indices (``[-3, -2, -1]``) count from the end as a slice does (``-3:``); indices of
    mixed signs have no slice that stays right when the size changes: no fix.
    """
    values = index.values
    if all(v < 0 for v in values):
        stop = values[-1] + 1
        text = f"{values[0]}:{'' if stop == 0 else stop}" + ("" if step == 1 else f":{step}")
    elif all(v >= 0 for v in values):
        text = slice_text(start, last, step)
    else:
        return None
    return Fix("safe", f"Use the static slice `{text}`", (Edit(node_span(source, index.node), text),))
