"""How the run-time rules know a line is inside a loop and how many times that loop went round
(JX309): the project's modules the watched imports compile (watched_imports.py) get one more
statement at the top of each ``for`` and ``while`` body, a call that counts the iteration of
that loop (its number in ``SITES``, where the loop's lines and the callables its body calls are
kept). The call is quiet (returns at once) except while a run-time watcher counts
(runtime.py/syncs.py). As the call the functions get, it takes the place (line and column) of
the body's first statement, so tracebacks and JAX's source locations are the file's.

Comprehensions are not counted: a conversion in one is placed at the loop around it, if any.
"""
from __future__ import annotations

import ast
import builtins
from typing import Callable

from jaxlint.events import LoopSite

# A name no source can spell, found through builtins whatever globals a function runs with.
COUNT = "@jaxlint_loop"
MAX_CALLEES = 32  # dotted names kept per loop: the jitted call is rarely past the first few

SITES: list[LoopSite] = []  # every loop compiled with the call in this process; its index is its id
_BY_FUNCTION: dict[tuple[str, int], list[int]] = {}  # (path, function's first line) -> its loops
_counting = False


def quiet(site: int) -> None:
    """The call when nothing counts."""


def enable() -> None:
    """Modules compiled from now on get the call (a run-time rule that reads loops is selected)."""
    global _counting
    _counting = True
    if not callable(getattr(builtins, COUNT, None)):
        setattr(builtins, COUNT, quiet)


def counting() -> bool:
    return _counting


def count_with(counter: Callable[[int], None] | None) -> None:
    """Where the compiled loops' calls go: ``counter``, or nowhere (None)."""
    if _counting:
        setattr(builtins, COUNT, counter if counter is not None else quiet)


def site_at(path: str, function_line: int, line: int) -> int | None:
    """The innermost counted loop of the function starting at ``function_line`` in ``path`` whose
    lines hold ``line`` (None: the line is in no loop of that function)."""
    best: int | None = None
    for site in _BY_FUNCTION.get((path, function_line), ()):
        loop = SITES[site]
        if loop.start_line <= line <= loop.end_line and (best is None or loop.start_line >= SITES[best].start_line):
            best = site
    return best


class CountLoops(ast.NodeTransformer):
    """``for x in xs: body`` -> ``for x in xs: @jaxlint_loop(N); body`` (``while`` alike), each
    loop kept in ``SITES`` with the first line of the function it is in."""

    def __init__(self, path: str) -> None:
        self.path = path
        self.function_line = 1  # a module's code starts at line 1

    def _scope(self, node: ast.FunctionDef | ast.AsyncFunctionDef | ast.ClassDef) -> ast.AST:
        outer = self.function_line
        # A code object's first line is its first decorator's.
        self.function_line = min([node.lineno] + [d.lineno for d in node.decorator_list])
        try:
            self.generic_visit(node)
        finally:
            self.function_line = outer
        return node

    visit_FunctionDef = visit_AsyncFunctionDef = visit_ClassDef = _scope

    def _loop(self, node: ast.For | ast.AsyncFor | ast.While) -> ast.AST:
        self.generic_visit(node)
        site = len(SITES)
        end = getattr(node, "end_lineno", None) or node.lineno
        SITES.append(LoopSite(self.path, node.lineno, end, self.function_line, _callees(node.body)))
        _BY_FUNCTION.setdefault((self.path, self.function_line), []).append(site)
        call = ast.Call(func=ast.Name(id=COUNT, ctx=ast.Load()), args=[ast.Constant(site)], keywords=[])
        statement = ast.copy_location(ast.Expr(call), node.body[0])
        for part in (call, call.func, call.args[0]):
            ast.copy_location(part, statement)
        node.body.insert(0, statement)
        return node

    visit_For = visit_AsyncFor = visit_While = _loop


def _callees(body: list[ast.stmt]) -> tuple[str, ...]:
    """The dotted names the statements call (``step``, ``self.update``), not looking into the
    functions and classes they define."""
    names: dict[str, None] = {}
    pending: list[ast.AST] = list(body)
    while pending and len(names) < MAX_CALLEES:
        node = pending.pop(0)
        if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef, ast.Lambda)):
            continue
        if isinstance(node, ast.Call):
            dotted = _dotted(node.func)
            if dotted and dotted != COUNT:  # an inner loop's count
                names[dotted] = None
        pending.extend(ast.iter_child_nodes(node))
    return tuple(names)


def _dotted(node: ast.expr) -> str | None:
    parts: list[str] = []
    while isinstance(node, ast.Attribute):
        parts.append(node.attr)
        node = node.value
    if not isinstance(node, ast.Name):
        return None
    parts.append(node.id)
    return ".".join(reversed(parts))
