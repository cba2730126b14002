"""Which lines of a file made equations in a trace.

- JX800 (engine/suppressions.py) reports an unused suppression only on a statement that did: one
  that did not run while tracing (a branch on a static argument, say) may need its comment for
  other arguments.
- Coverage counts a JAX function (scan/functions.py) as linted when one of its own lines did.
"""
from __future__ import annotations

from functools import lru_cache
from typing import Any, Callable, Iterator

from jaxlint.jaxapi import jaxprs, tracebacks
from jaxlint.rules import codes_by_name
from jaxlint.scan.functions import JaxFunction
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


def equations(closed_jaxpr: Any) -> Iterator[Any]:
    """Every equation of ``closed_jaxpr``, sub-jaxprs included, each jaxpr once (a cached inner
    jaxpr is shared by its call sites); a caller that has what it needs stops iterating."""
    seen: set[int] = set()
    pending = [jaxprs.open_jaxpr(closed_jaxpr)[0]]
    while pending:
        jaxpr = pending.pop()
        if id(jaxpr) in seen:
            continue
        seen.add(id(jaxpr))
        for eqn in jaxpr.eqns:
            yield eqn
            pending.extend(jaxprs.open_jaxpr(sub)[0] for _, sub in jaxprs.subjaxprs(eqn.params))


def equation_lines(closed_jaxpr: Any, path: str, wanted: frozenset[int] | set[int]) -> set[int]:
    """The ``wanted`` lines of ``path`` found on the user call stack of an equation (sub-jaxprs
    included); stops as soon as all are found (reading tracebacks costs ~20 us an equation)."""
    found: set[int] = set()
    if wanted <= found:
        return found
    for eqn in equations(closed_jaxpr):
        found |= tracebacks.user_lines_in(eqn.source_info, path) & wanted
        if wanted <= found:
            break
    return found


class LineOwners:
    """One file's JAX functions by line, built once per file: the function each own line is of.
    Built again per traced target, with the known functions left out, it made coverage's
    bookkeeping grow with the square of the file (a module of 5,001 jitted functions)."""

    def __init__(self, functions: list[JaxFunction]) -> None:
        self.first_line_of = {line: f.first_line for f in functions for line in f.own_lines}
        self.first_lines = frozenset(f.first_line for f in functions)


def reached_functions(closed_jaxpr: Any, path: str, functions: list[JaxFunction] | LineOwners,
                      known: set[int]) -> set[int]:
    """First lines of the ``functions`` (of ``path``) not in ``known`` that one of their own lines
    made an equation of ``closed_jaxpr``; stops once all are found."""
    owners = functions if isinstance(functions, LineOwners) else LineOwners(functions)
    return reached_in_files(closed_jaxpr, {path: (owners, known)})[path]


def reached_in_files(closed_jaxpr: Any, files: dict[str, tuple[LineOwners, set[int]]]) -> dict[str, set[int]]:
    """``reached_functions`` for several files (path -> its functions and the known ones) in one walk."""
    found: dict[str, set[int]] = {path: set() for path in files}
    remaining = {path: len(owners.first_lines - known) for path, (owners, known) in files.items()}
    remaining = {path: count for path, count in remaining.items() if count}
    for eqn in equations(closed_jaxpr):
        if not remaining:
            break
        for path, lines in tracebacks.user_lines_by_file(eqn.source_info, remaining.keys()).items():
            owners, known = files[path]
            reached = found[path]
            for line in lines:
                first = owners.first_line_of.get(line)
                if first is not None and first not in known and first not in reached:
                    reached.add(first)
                    remaining[path] -= 1
            if not remaining[path]:
                del remaining[path]
    return found


def equation_files(closed_jaxpr: Any, wanted: Callable[[str], bool] | None = None) -> set[str]:
    """The files (``wanted`` ones; default: every user file) on the user call stacks of the
    equations of ``closed_jaxpr``, sub-jaxprs included: the code its operations came from."""
    return {file for file, _ in user_lines(closed_jaxpr) if wanted is None or wanted(file)}


def user_lines(closed_jaxpr: Any) -> set[tuple[str, int]]:
    """(file, line) of every user frame on the equations of ``closed_jaxpr``, sub-jaxprs included."""
    found: set[tuple[str, int]] = set()
    for eqn in equations(closed_jaxpr):
        try:
            found.update((file, line) for file, _, line in tracebacks.user_frames(eqn.source_info))
        except Exception:  # a malformed traceback must not stop the analysis
            pass
    return found
