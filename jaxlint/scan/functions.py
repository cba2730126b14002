"""The denominator of coverage: a file's *JAX functions*, the named functions (``def``, any
nesting) whose own body calls into ``jax`` (``jax.numpy``, ``jax.lax``, ``jax.random``, ...,
resolved through imports and aliases), plus every target, less the tests of test files (pytest
runs those; ``pytest --jaxlint`` lints what they call). Found from the source alone.

A function's *own lines* are its body's lines without those of the defs nested in it (each its
own function); a lambda's lines are its enclosing function's. A JAX function counts as linted when
one of its own lines made an equation in a jaxpr the rules read (worker/traced_lines.py).
"""
from __future__ import annotations

import ast
import os
import re
from dataclasses import dataclass

from jaxlint.model import Span, Target
from jaxlint.scan.index import DEFS, SourceIndex, first_line

# Parameter names that say what a parameter holds, for guessed arguments and suggested hints.
KEY_PARAMETER = re.compile(r"(?:key|rng|prng\w*|rng_\w+|\w+_key|\w+_rng)")
FUNCTION_PARAMETER = re.compile(r"(?:f|fn|fun|func|function|callback|\w+_fn|\w+_fun|\w+_func)")


@dataclass(frozen=True)
class JaxFunction:
    qualname: str  # "Model.apply", "make_step.<locals>.step"
    first_line: int  # of the first decorator, else the def (a code object's co_firstlineno)
    line: int  # of the def keyword
    params: tuple[str, ...]
    own_lines: frozenset[int]
    span: Span  # the def statement
    name_span: Span  # the function's name

    def target(self) -> Target:
        """As a target traced with inferred arguments (``infer-arguments``)."""
        return Target(self.qualname.rpartition(".")[2], self.qualname, "inferred", self.span, self.name_span,
                      self.first_line, list(self.params))


def jax_functions(index: SourceIndex) -> list[JaxFunction]:
    """The JAX functions of the file, in source order."""
    tree = index.tree
    if tree is None:
        return []
    calling: set[int] = set()  # id of each def whose own body calls into jax
    for call in index.calls:
        if any(name == "jax" or name.startswith("jax.") for name in index.call_names(call)):
            defs = index.enclosing_defs(call)
            if defs:
                calling.add(id(defs[0]))
    targets = {target.first_line for target in index.targets}
    tests = _is_test_file(index.path)
    found = []
    for node in sorted(index.functions, key=lambda n: n.lineno):
        first = first_line(node)
        if tests and first not in targets and _is_test(index, node):
            continue  # pytest runs it; `pytest --jaxlint` lints what it calls, not the test itself
        if id(node) in calling or first in targets:
            found.append(JaxFunction(_qualname(index, node), first, node.lineno,
                                     tuple(p.arg for p in _parameters(node.args)), _own_lines(node),
                                     index.span(node), _name_span(index, node)))
    return found


def _is_test_file(path: str) -> bool:
    """A file pytest collects by default: ``test_*.py`` or ``*_test.py``."""
    name = os.path.basename(path)
    return name.endswith(".py") and (name.startswith("test_") or name.endswith("_test.py"))


def _is_test(index: SourceIndex, node: ast.FunctionDef | ast.AsyncFunctionDef) -> bool:
    """A test pytest collects: ``test*`` at module level or in a ``Test*`` class at module level."""
    if not node.name.startswith("test"):
        return False
    parent = index.parent(node)
    if isinstance(parent, ast.ClassDef) and parent.name.startswith("Test"):
        parent = index.parent(parent)
    return isinstance(parent, ast.Module)


def _name_span(index: SourceIndex, node: ast.FunctionDef | ast.AsyncFunctionDef) -> Span:
    line = index.parsed.lines[node.lineno - 1]  # split once per file, not once per function
    match = re.search(rf"\bdef\s+({re.escape(node.name)})\b", line)
    if match is None:  # a name spelled otherwise than Python binds it (NFKC): the def keyword
        return Span(node.lineno, 0, node.lineno, 0)
    return Span(node.lineno, match.start(1), node.lineno, match.end(1))


def _parameters(args: ast.arguments) -> list[ast.arg]:
    return [*args.posonlyargs, *args.args, *([args.vararg] if args.vararg else []), *args.kwonlyargs,
            *([args.kwarg] if args.kwarg else [])]


def _qualname(index: SourceIndex, node: ast.AST) -> str:
    """Python's ``__qualname__`` for the def ``node``."""
    parts = [node.name]  # type: ignore[attr-defined]
    current = index.parent(node)
    while current is not None and not isinstance(current, ast.Module):
        if isinstance(current, DEFS):
            parts.append(f"{current.name}.<locals>")
        elif isinstance(current, ast.ClassDef):
            parts.append(current.name)
        current = index.parent(current)
    return ".".join(reversed(parts))


def _own_lines(node: ast.FunctionDef | ast.AsyncFunctionDef) -> frozenset[int]:
    lines = {n for statement in node.body
             for n in range(statement.lineno, (statement.end_lineno or statement.lineno) + 1)}
    nested = [child for statement in node.body for child in ast.walk(statement) if isinstance(child, DEFS)]
    for inner in nested:
        start = first_line(inner)
        lines.difference_update(range(start, (inner.end_lineno or inner.lineno) + 1))
    return frozenset(lines)

