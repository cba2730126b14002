"""Worker side: which statements holding a suppression comment made equations in a trace.

JX800 (jaxlint/suppressions.py) reports an unused suppression only on such a statement: one that
did not run while tracing (a branch on a static argument, say) may need its comment for other
arguments.
"""
from __future__ import annotations

from functools import lru_cache
from typing import Any

from jaxlint.ir import compat
from jaxlint.rules import codes_by_name
from jaxlint.scan.noqa import MAY_HAVE_DIRECTIVES, read_comments


@lru_cache(maxsize=4)
def suppression_lines(source: str) -> frozenset[int]:
    """Every line of the statements that hold a line-level directive naming codes."""
    if not MAY_HAVE_DIRECTIVES.search(source):
        return frozenset()
    comments = read_comments(source, codes_by_name())
    lines: set[int] = set()
    for directive in comments.directives:
        if directive.items and not directive.file_level:
            first, last = comments.statements.get(directive.line, (directive.line, directive.line))
            lines.update(range(first, last + 1))
    return frozenset(lines)


def equation_lines(closed_jaxpr: Any, path: str, wanted: frozenset[int] | set[int]) -> set[int]:
    """The ``wanted`` lines of ``path`` found on the user call stack of an equation (sub-jaxprs
    included); stops as soon as all are found (reading tracebacks costs ~20 us an equation)."""
    found: set[int] = set()
    seen: set[int] = set()
    pending = [compat.open_jaxpr(closed_jaxpr)[0]]
    while pending and not wanted <= found:
        jaxpr = pending.pop()
        if id(jaxpr) in seen:  # a cached inner jaxpr is shared by its call sites
            continue
        seen.add(id(jaxpr))
        for eqn in jaxpr.eqns:
            found |= compat.user_lines_in(eqn.source_info, path) & wanted
            if wanted <= found:
                break
            pending.extend(compat.open_jaxpr(sub)[0] for _, sub in compat.subjaxprs(eqn.params))
    return found
