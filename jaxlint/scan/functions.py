"""The denominator of coverage: a file's *JAX functions*, the named functions (``def``, any
nesting) whose own body calls into ``jax`` (``jax.numpy``, ``jax.lax``, ``jax.random``, ...,
resolved through imports and aliases), plus every target, less the tests of test files (pytest
runs those; ``pytest --jaxlint`` lints what they call; a test that calls a transformation is a
target for the source rules, and still no JAX function, unless it is jitted or hinted: then it is
traced as any target is). Found from the source alone.

A function's *own lines* are its body's lines without those of the defs nested in it (each its
own function); a lambda's lines are its enclosing function's. A JAX function counts as linted when
one of its own lines made an equation in a jaxpr the rules read (worker/traced_lines.py).
"""
from __future__ import annotations

import ast
import os
import re
from dataclasses import dataclass, field

from jaxlint.model import Span, Target
from jaxlint.scan.index import DEFS, SourceIndex, first_line

# Parameter names that say what a parameter holds, for guessed arguments and suggested hints.
KEY_PARAMETER = re.compile(r"(?:key|rng|seed|prng\w*|rng_\w+|\w+_key|\w+_rng)")
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
    in_test_class: bool = False  # a method of a test class in a test file (pytest makes its instances)

    def inferable(self) -> bool:
        """Traced with inferred arguments when nothing names it: a module-level function, or a
        method of a class (an instance is built for it: worker/argsources/instances.py), not one
        of a test class nor a class hook or pytree hook (a constructor is: by making an instance)."""
        if "<locals>" in self.qualname:
            return False
        return "." not in self.qualname or (not self.in_test_class and self.qualname.rpartition(".")[2]
                                             not in _NOT_INFERRED_METHODS)

    def target(self) -> Target:
        """As a target traced with inferred arguments (``infer-arguments``)."""
        return Target(self.qualname.rpartition(".")[2], self.qualname, "inferred", self.span, self.name_span,
                      self.first_line, list(self.params))


def jax_functions(index: SourceIndex) -> list[JaxFunction]:
    """The JAX functions of the file, in source order."""
    tree = index.tree
    if tree is None:
        return []
    defs, calls = _defs_and_calls(tree)
    calling: set[int] = set()  # id of each def whose own body calls into jax
    for call, around in calls:
        if around is not None and id(around.node) not in calling and any(
                name == "jax" or name.startswith("jax.") for name in index.call_names(call)):
            calling.add(id(around.node))
    targets = {target.first_line for target in index.targets}
    traced_tests = {target.first_line for target in index.targets if target.kind in TRACED_TEST_KINDS}
    tests = is_test_file(index.path)
    found = []
    for record in sorted(defs, key=lambda d: d.node.lineno):
        node = record.node
        first = first_line(node)
        if tests and first not in traced_tests and _is_test(index, node):
            continue  # pytest runs it; `pytest --jaxlint` lints what it calls, not the test itself
        if id(node) in calling or first in targets:
            found.append(_function(index, record, tests))
    return found


def functions_named(index: SourceIndex, qualnames: set[str]) -> list[JaxFunction]:
    """The defs of the file with these qualnames, JAX functions or not, as records (tests of test
    files left out, as above): the outer functions jaxlint tries for their nested JAX functions
    (engine/targets.py). Not JAX functions themselves, they are never counted."""
    tree = index.tree
    if tree is None or not qualnames:
        return []
    tests = is_test_file(index.path)
    return [_function(index, record, tests) for record in _defs_and_calls(tree)[0] if record.qualname in qualnames
            and not (tests and _is_test(index, record.node))]


def _function(index: SourceIndex, record: _Def, tests: bool) -> JaxFunction:
    node = record.node
    return JaxFunction(record.qualname, first_line(node), node.lineno, tuple(p.arg for p in _parameters(node.args)),
                       _own_lines(node, record.nested), index.span(node), _name_span(index, node),
                       tests and _in_test_class(index, node))


# A test that is a target of these kinds is traced as its target (a jitted test, a hinted one);
# one that only calls a transformation is not: its arguments are pytest's fixtures.
TRACED_TEST_KINDS = frozenset({"jit-decorated", "hinted"})

# A constructor is traced by making an instance (worker/argsources/constructors.py); these only
# run where Python or JAX makes a class or an instance of its own accord.
_NOT_INFERRED_METHODS = frozenset({"__new__", "__init_subclass__", "tree_flatten", "tree_unflatten",
                                   "tree_flatten_with_keys"})


def is_test_file(path: str) -> bool:
    """A file pytest collects by default: ``test_*.py`` or ``*_test.py``."""
    name = os.path.basename(path)
    return name.endswith(".py") and (name.startswith("test_") or name.endswith("_test.py"))


def _is_test(index: SourceIndex, node: ast.FunctionDef | ast.AsyncFunctionDef) -> bool:
    """A test pytest collects: ``test*`` at module level, or in a class at module level that is a
    ``Test*`` class or a unittest ``TestCase`` (any name; by its bases' names, as absltest's and
    chex's ``TestCase`` are, so ``class AdamTest(chex.TestCase)`` counts)."""
    if not node.name.startswith("test"):
        return False
    parent = index.parent(node)
    return isinstance(parent, ast.Module) or (_in_test_class(index, node)
                                              and isinstance(index.parent(parent), ast.Module))


def _in_test_class(index: SourceIndex, node: ast.FunctionDef | ast.AsyncFunctionDef) -> bool:
    """A method of a ``Test*`` class or a unittest ``TestCase``, by names: its bases' (``TestCase``,
    or absltest's ``*Test`` bases a project derives from its own, as distrax's ``EquivalenceTest``),
    or its own ``*Test``/``*Tests`` where it has a base (unittest's naming; a plain class has none)."""
    parent = index.parent(node)
    if not isinstance(parent, ast.ClassDef):
        return False
    bases = [ast.unparse(base) for base in parent.bases]
    return parent.name.startswith("Test") or any(base.endswith(_TEST_CLASS_ENDINGS) for base in bases) or (
        bool(bases) and parent.name.endswith(("Test", "Tests")))


_TEST_CLASS_ENDINGS = ("TestCase", "Test", "Tests")


@dataclass
class _Def:
    node: ast.FunctionDef | ast.AsyncFunctionDef
    qualname: str  # Python's __qualname__
    nested: list[ast.FunctionDef | ast.AsyncFunctionDef] = field(default_factory=list)  # the defs right inside


def _defs_and_calls(tree: ast.Module) -> tuple[list[_Def], list[tuple[ast.Call, _Def | None]]]:
    """Every def and every call (with the innermost def around it) in one walk of the tree: on a
    module of thousands of functions, walking it once per question was most of the scan."""
    defs: list[_Def] = []
    calls: list[tuple[ast.Call, _Def | None]] = []
    bodies: list[tuple[ast.AST, _Def | None, str]] = [(tree, None, "")]  # a def's or class's own nodes
    while bodies:
        root, around, prefix = bodies.pop()
        stack = [root]
        while stack:
            node = stack.pop()
            for name in node._fields:
                value = getattr(node, name, None)
                for child in value if type(value) is list else (value,):
                    kind = type(child)
                    if kind in _DEF_TYPES:
                        record = _Def(child, prefix + child.name)
                        if around is not None:
                            around.nested.append(child)
                        defs.append(record)
                        bodies.append((child, record, record.qualname + ".<locals>."))
                    elif kind is ast.ClassDef:
                        bodies.append((child, around, prefix + child.name + "."))
                    elif isinstance(child, ast.AST) and kind not in _LEAF_TYPES:
                        if kind is ast.Call:
                            calls.append((child, around))
                        stack.append(child)
    return defs, calls


_DEF_TYPES = frozenset(DEFS)
# Nodes that hold no def and no call (a third of a tree's nodes: every name's Load or Store).
_LEAF_TYPES = frozenset(kind for base in (ast.expr_context, ast.operator, ast.boolop, ast.cmpop, ast.unaryop)
                        for kind in base.__subclasses__())


# Where a def's name starts: the name is found after the keyword without compiling a pattern per
# name (thousands of names overflow re's cache and each compile costs more than the search).
_DEF_KEYWORD = re.compile(r"\bdef\s+")
_WORD_BOUNDARY = re.compile(r"\b")


def _name_span(index: SourceIndex, node: ast.FunctionDef | ast.AsyncFunctionDef) -> Span:
    line = index.parsed.lines[node.lineno - 1]  # split once per file, not once per function
    for keyword in _DEF_KEYWORD.finditer(line):
        start, end = keyword.end(), keyword.end() + len(node.name)
        if line.startswith(node.name, start) and _WORD_BOUNDARY.match(line, end):
            return Span(node.lineno, start, node.lineno, end)
    # A name spelled otherwise than Python binds it (NFKC): the def keyword.
    return Span(node.lineno, 0, node.lineno, 0)


def _parameters(args: ast.arguments) -> list[ast.arg]:
    return [*args.posonlyargs, *args.args, *([args.vararg] if args.vararg else []), *args.kwonlyargs,
            *([args.kwarg] if args.kwarg else [])]


def _own_lines(node: ast.FunctionDef | ast.AsyncFunctionDef,
               nested: list[ast.FunctionDef | ast.AsyncFunctionDef]) -> frozenset[int]:
    """``node``'s body lines without those of ``nested``, the defs right inside it (a def deeper
    down lies within one of them)."""
    lines = {n for statement in node.body
             for n in range(statement.lineno, (statement.end_lineno or statement.lineno) + 1)}
    for inner in nested:
        lines.difference_update(range(first_line(inner), (inner.end_lineno or inner.lineno) + 1))
    return frozenset(lines)
