"""The source index: what rules ask of a file's source, built once per file and shared by every
rule (``ctx.index``): its AST with parents, nodes by character span, the scanner's targets and
transform calls, names resolved through imports and scopes by the scanner's own resolver
(jaxlint.scan.names), what a call calls, which functions are differentiated, and its comments
(tokenized once per text: jaxlint.scan.noqa), so a rule never parses, tokenizes, scans or
resolves names itself. Facts a rule derives from the whole file go in ``memo``, not in a cache of
the rule's own.

Everything is computed on first use: a rule that only reads the IR costs nothing here.
"""
from __future__ import annotations

import ast
import functools
from functools import cached_property
from typing import Any, Callable, Iterable, Iterator, TypeVar

from jaxlint.model import Span, Target
from jaxlint.scan import ScanSyntaxError, gc_paused, scan_source
from jaxlint.scan.names import DIFFERENTIATING, Scope, qualified_names
from jaxlint.scan.noqa import tokenized
from jaxlint.scan.walk import MODULE_TOP, Walker
from jaxlint.text import char_column, offset_of, split_lines

SCOPES = (ast.FunctionDef, ast.AsyncFunctionDef, ast.Lambda, ast.ClassDef)
COMPREHENSIONS = (ast.ListComp, ast.SetComp, ast.DictComp, ast.GeneratorExp)
DEFS = (ast.FunctionDef, ast.AsyncFunctionDef)
N = TypeVar("N", bound=ast.AST)


class Parsed:
    """A source text's AST; its parents and its expressions by character span are computed on
    first use (most files never need them). One cache for all users: see ``parse``."""

    def __init__(self, tree: ast.Module, source: str) -> None:
        self.tree = tree
        self.lines = split_lines(source)

    @cached_property
    def parents(self) -> dict[ast.AST, ast.AST]:
        return {child: node for node in ast.walk(self.tree) for child in ast.iter_child_nodes(node)}

    @cached_property
    def by_span(self) -> dict[Span, list[ast.AST]]:
        found: dict[Span, list[ast.AST]] = {}
        for node in ast.walk(self.tree):  # breadth-first: the outermost node of a span comes first
            if isinstance(node, ast.expr):
                found.setdefault(self.span(node), []).append(node)
        return found

    def span(self, node: ast.AST) -> Span:
        """``node``'s span in characters (ast counts UTF-8 bytes)."""
        return Span(node.lineno, self._column(node.lineno, node.col_offset),  # type: ignore[attr-defined]
                    node.end_lineno, self._column(node.end_lineno, node.end_col_offset))  # type: ignore[attr-defined]

    def _column(self, line: int, byte_col: int) -> int:
        return char_column(self.lines[line - 1] if 0 < line <= len(self.lines) else "", byte_col)


@functools.lru_cache(maxsize=8)
def parse(source: str) -> Parsed | None:
    """The parsed source, None when it does not parse. Cached per text: rules, fixes and the
    index of one file share one AST."""
    try:
        with gc_paused():  # as in the scan: a fresh AST makes no reference cycles
            return Parsed(ast.parse(source), source)
    except (SyntaxError, ValueError, RecursionError, MemoryError):
        return None


class SourceIndex:
    """One file's source as rules query it. ``targets``: the scanner's, when the caller has them."""

    def __init__(self, path: str, source: str, targets: list[Target] | None = None) -> None:
        self.path = path
        self.source = source
        self._targets = targets
        self._memo: dict[str, Any] = {}

    def memo(self, key: str, compute: Callable[[], Any]) -> Any:
        """A fact about the whole file that a program rule computes once, not once per traced
        target: walking the tree per target made rule time grow with the square of the file."""
        if key not in self._memo:
            self._memo[key] = compute()
        return self._memo[key]

    # -- syntax ---------------------------------------------------------------------------

    @cached_property
    def parsed(self) -> Parsed | None:
        return parse(self.source)

    @property
    def tree(self) -> ast.Module | None:
        return self.parsed.tree if self.parsed is not None else None

    def parent(self, node: ast.AST) -> ast.AST | None:
        return self.parsed.parents.get(node) if self.parsed is not None else None

    @property
    def parents(self) -> dict[ast.AST, ast.AST]:
        return self.parsed.parents if self.parsed is not None else {}

    def span(self, node: ast.AST) -> Span:
        assert self.parsed is not None
        return self.parsed.span(node)

    def text(self, node: ast.AST) -> str:
        """The source text of ``node``."""
        span = self.span(node)
        return self.source[offset_of(self.source, span.start_line, span.start_col):
                           offset_of(self.source, span.end_line, span.end_col)]

    def node_at(self, span: Span, kind: type[N]) -> N | None:
        """The outermost expression of type ``kind`` whose span is exactly ``span``."""
        return node_at(self.source, span, kind)

    # -- comments -------------------------------------------------------------------------

    @property
    def comment_lines(self) -> tuple[int, ...]:
        """The lines of the file's comments (not a ``#`` in a string); none when the tokenizer
        cannot read the file to its end."""
        return tokenized(self.source).comment_lines or ()

    @cached_property
    def calls(self) -> list[ast.Call]:
        """Every call in the file, in source order."""
        if self.tree is None:
            return []
        return sorted((n for n in ast.walk(self.tree) if isinstance(n, ast.Call)),
                      key=lambda n: (n.lineno, n.col_offset))

    @cached_property
    def functions(self) -> list[ast.FunctionDef | ast.AsyncFunctionDef]:
        """Every def in the file (nested ones too), in walk order."""
        return [n for n in ast.walk(self.tree) if isinstance(n, DEFS)] if self.tree is not None else []

    # -- the scanner's view ---------------------------------------------------------------

    @property
    def targets(self) -> list[Target]:
        """The functions jaxlint traces in this file (jaxlint.scan.scan_source)."""
        if self._targets is None:
            try:
                self._targets = scan_source(self.path, self.source, self.tree)  # one parse for both
            except ScanSyntaxError:
                self._targets = []
        return self._targets

    @cached_property
    def transform_calls(self) -> list:
        """Every transform call (vmap, scan, cond, ...) inside the file's targets."""
        return [call for target in self.targets for call in target.calls]

    @cached_property
    def jitted_with_static(self) -> dict[str, Target]:
        """Module-level name -> the jit target with static arguments that name calls (a
        ``@jax.jit(static_...)``/``partial(jax.jit, ...)`` def or a ``g = jax.jit(f, static_...)``),
        if nothing else at module level binds the name."""
        found: dict[str, Target] = {}
        for target in self.targets:
            if not (target.static_argnums or target.static_argnames):
                continue
            if target.kind == "jit-bound" and target.bound_name:
                found[target.bound_name] = target
            elif target.kind == "jit-decorated" and "." not in target.qualname:
                found[target.qualname] = target
        tree = self.tree
        return {name: t for name, t in found.items() if tree is not None and _bound_once(tree, name, t)}

    # -- names ----------------------------------------------------------------------------

    @cached_property
    def _scopes(self) -> dict[int, tuple[Scope, int]]:
        """id(call or decorator) -> (its scope, the bindings made there before it)."""
        if self.tree is None:
            return {}
        walker = Walker()
        walker.scopes_at = {}
        try:
            walker.body(self.tree.body, MODULE_TOP)
        except SyntaxError:  # what the compiler rejects (the scan reports it): resolve nothing
            return {}
        return walker.scopes_at

    def names(self, node: ast.AST, at: ast.AST | None = None) -> frozenset[str]:
        """The qualified names ``node`` (a Name or attribute chain) may stand for, resolved in the
        scope of ``at`` (a call or decorator around it; default ``node`` itself): ``jnp.array``
        -> {"jax.numpy.array"} after ``import jax.numpy as jnp``, {} when a local shadows it."""
        place = self._scopes.get(id(at if at is not None else node))
        if place is None:
            return frozenset()
        return frozenset(qualified_names(node, *place))

    def call_names(self, call: ast.Call) -> frozenset[str]:
        """What ``call`` calls: ``self.names(call.func, at=call)``."""
        return self.names(call.func, at=call)

    def callee(self, call: ast.Call) -> str | None:
        """The called function's own name: ``log`` for ``jnp.log(...)``, ``x.log(...)``, ``log(...)``
        and for ``ln(...)`` after ``from jax.numpy import log as ln`` (resolved in the call's scope)."""
        func = call.func
        if isinstance(func, ast.Attribute):
            return func.attr
        if not isinstance(func, ast.Name):
            return None
        imported = {name.rpartition(".")[2] for name in self.call_names(call)}
        return imported.pop() if len(imported) == 1 else func.id

    def as_call(self, node: ast.AST | None, *names: str) -> ast.Call | None:
        """``node`` when it is a call of one of ``names`` (function or method form) with plain arguments."""
        if not isinstance(node, ast.Call) or self.callee(node) not in names:
            return None
        if any(isinstance(a, ast.Starred) for a in node.args) or any(k.arg is None for k in node.keywords):
            return None
        return node

    def call_at(self, span: Span, names: Iterable[str]) -> ast.Call | None:
        """The call at ``span`` when it calls one of ``names`` with plain arguments."""
        node = self.node_at(span, ast.Call)
        return self.as_call(node, *names) if node is not None else None

    @cached_property
    def module_names(self) -> frozenset[str]:
        """Names import statements bind anywhere in the file (modules, mostly)."""
        return frozenset(imported_names(self.tree)) if self.tree is not None else frozenset()

    def module_like(self, node: ast.expr) -> bool:
        """``jnp``, ``jax.numpy``: a path starting at a name the file imports (not ``x`` of ``x.sum()``)."""
        while isinstance(node, ast.Attribute):
            node = node.value
        return isinstance(node, ast.Name) and node.id in self.module_names

    def reduction_operand(self, call: ast.Call) -> tuple[ast.expr, dict[str, ast.expr]] | None:
        """``jnp.sum(a, axis, keepdims=...)`` or ``a.sum(axis, ...)``: the reduced operand and the
        ``axis``/``keepdims`` arguments by name; None when other arguments are passed."""
        func = call.func
        method = isinstance(func, ast.Attribute) and not self.module_like(func.value)
        operand = func.value if method else (call.args[0] if call.args else None)  # type: ignore[union-attr]
        positional = call.args if method else call.args[1:]
        if operand is None or len(positional) > 1:
            return None
        named = {"axis": positional[0]} if positional else {}
        for keyword in call.keywords:
            if keyword.arg not in ("axis", "keepdims") or keyword.arg in named:
                return None
            named[keyword.arg] = keyword.value
        return operand, named

    @cached_property
    def differentiated_names(self) -> frozenset[str]:
        """Names passed as the first argument of a differentiating transform (``grad(f)``,
        ``value_and_grad(f)``, ...: jaxlint.scan.names.DIFFERENTIATING) or decorated with one."""
        found: set[str] = set()
        for node in ast.walk(self.tree) if self.tree is not None else ():
            if isinstance(node, ast.Call) and self.callee(node) in DIFFERENTIATING and node.args:
                first = node.args[0]
                if isinstance(first, ast.Name):
                    found.add(first.id)
                elif isinstance(first, ast.Attribute):
                    found.add(first.attr)
            if isinstance(node, DEFS):
                for decorator in node.decorator_list:
                    target = decorator.func if isinstance(decorator, ast.Call) else decorator
                    name = target.attr if isinstance(target, ast.Attribute) else getattr(target, "id", None)
                    if name in DIFFERENTIATING:
                        found.add(node.name)
        return frozenset(found)

    def is_jit_decorator(self, decorator: ast.expr) -> bool:
        """``@jax.jit``, ``@jax.jit(...)`` or ``@partial(jax.jit, ...)``."""
        if isinstance(decorator, ast.Call):
            called = self.call_names(decorator)
            if "jax.jit" in called:
                return True
            return "functools.partial" in called and bool(decorator.args) \
                and "jax.jit" in self.names(decorator.args[0], at=decorator)
        return "jax.jit" in self.names(decorator)

    def shadowed(self, name: ast.Name) -> bool:
        """A function (or comprehension) around ``name`` binds it locally."""
        scope = self.parent(name)
        while scope is not None and not isinstance(scope, ast.Module):
            if isinstance(scope, (*DEFS, ast.Lambda)):
                if name.id in parameter_names(scope):
                    return True
                body = scope.body if isinstance(scope.body, list) else [scope.body]
                if any(binds(node, name.id) for statement in body for node in walk_scope(statement)):
                    return True
            elif isinstance(scope, COMPREHENSIONS):
                if any(binds(node, name.id) for g in scope.generators for node in ast.walk(g.target)):
                    return True
            scope = self.parent(scope)
        return False

    # -- loops ----------------------------------------------------------------------------

    def loops_around(self, node: ast.AST) -> tuple[list[ast.AST], bool, ast.AST | None]:
        """(loops running ``node`` once per iteration, innermost first; whether a comprehension is
        among them; the scope the walk stopped at: a def, lambda, class or the module)."""
        loops: list[ast.AST] = []
        parents = self.parents
        child, parent = node, parents.get(node)
        while parent is not None and not isinstance(parent, (*SCOPES, ast.Module)):
            if isinstance(parent, (ast.For, ast.AsyncFor)) and any(s is child for s in parent.body):
                loops.append(parent)
            elif isinstance(parent, ast.While) and (child is parent.test or any(s is child for s in parent.body)):
                loops.append(parent)
            elif isinstance(parent, COMPREHENSIONS) and not isinstance(child, ast.comprehension):
                loops.append(parent)  # the element: evaluated per item
            elif isinstance(parent, ast.comprehension) and (
                    any(c is child for c in parent.ifs) or child is parent.target
                    or (child is parent.iter and parents[parent].generators[0] is not parent)):
                loops.append(parents[parent])
            child, parent = parent, parents.get(parent)
        unique = list(dict.fromkeys(loops))
        return unique, any(isinstance(loop, COMPREHENSIONS) for loop in unique), parent

    def function_names_around(self, line: int) -> set[str]:
        """The names of the defs whose lines hold ``line``."""
        return {node.name for node in self.functions if node.lineno <= line <= (node.end_lineno or node.lineno)}

    def enclosing_defs(self, node: ast.AST) -> list[ast.AST]:
        """The defs around ``node``, innermost first."""
        found = []
        current: ast.AST | None = node
        while current is not None:
            if isinstance(current, DEFS):
                found.append(current)
            current = self.parent(current)
        return found


# ---------------------------------------------------------------------------------------------
# Plain questions about a node (no index needed)


def node_at(source: str, span: Span, kind: type[N]) -> N | None:
    """The outermost node of type ``kind`` of ``source`` whose span is exactly ``span`` (for fix
    builders, which get the text; rules ask ``ctx.index.node_at``)."""
    parsed = parse(source)
    if parsed is None:
        return None
    # ast.walk is breadth-first: the outermost node of a span comes first
    return next((n for n in parsed.by_span.get(span, []) if isinstance(n, kind)), None)


def int_literal(node: ast.AST) -> int | None:
    """``3`` or ``-3`` written as a literal, else None (bools are not ints here)."""
    sign = 1
    if isinstance(node, ast.UnaryOp) and isinstance(node.op, (ast.USub, ast.UAdd)):
        sign = -1 if isinstance(node.op, ast.USub) else 1
        node = node.operand
    if isinstance(node, ast.Constant) and type(node.value) is int:
        return sign * node.value
    return None


def single_argument(call: ast.AST | None) -> ast.expr | None:
    """The only argument of ``f(x)`` (``jnp.exp(x)``), no keywords; None for anything else."""
    if isinstance(call, ast.Call) and len(call.args) == 1 and not call.keywords:
        return call.args[0]
    return None


def same_expression(a: ast.AST, b: ast.AST) -> bool:
    """Both are the same expression (spacing and parentheses aside)."""
    return ast.dump(a) == ast.dump(b)


def first_line(function: ast.FunctionDef | ast.AsyncFunctionDef) -> int:
    """Line of its first decorator, else of ``def``: a code object's ``co_firstlineno``."""
    return min([d.lineno for d in function.decorator_list] + [function.lineno])


def walk_scope(node: ast.AST) -> Iterator[ast.AST]:
    """``node`` and its descendants; nested functions, lambdas and classes are yielded (a def binds
    its name here) but not entered."""
    yield node
    if isinstance(node, SCOPES):
        return
    stack = list(ast.iter_child_nodes(node))
    while stack:
        current = stack.pop()
        yield current
        if not isinstance(current, SCOPES):
            stack.extend(ast.iter_child_nodes(current))


def parameter_names(function: ast.AST) -> set[str]:
    a = function.args  # type: ignore[attr-defined]
    return {p.arg for p in (*a.posonlyargs, *a.args, *a.kwonlyargs, a.vararg, a.kwarg) if p is not None}


def binds(node: ast.AST, name: str) -> bool:
    """``node`` binds ``name`` (an assignment target, def, class, import, except/match name,
    global/nonlocal declaration)."""
    if isinstance(node, ast.Name):
        return node.id == name and not isinstance(node.ctx, ast.Load)
    if isinstance(node, (*DEFS, ast.ClassDef, ast.ExceptHandler, ast.MatchAs, ast.MatchStar)):
        return node.name == name
    if isinstance(node, ast.alias):
        return (node.asname or node.name.partition(".")[0]) == name
    return isinstance(node, (ast.Global, ast.Nonlocal)) and name in node.names


def bound_names(loop: ast.AST) -> set[str] | None:
    """Names a loop statement (re)binds: its targets and everything assigned in its body.
    None when it declares global/nonlocal names (bindings reach outside)."""
    names: set[str] = set()
    for node in walk_scope(loop):
        if isinstance(node, ast.Name) and not isinstance(node.ctx, ast.Load):
            names.add(node.id)
        elif isinstance(node, (*DEFS, ast.ClassDef)) and node is not loop:
            names.add(node.name)
        elif isinstance(node, ast.alias):
            names.add(node.asname or node.name.partition(".")[0])
        elif isinstance(node, ast.ExceptHandler) and node.name:
            names.add(node.name)
        elif isinstance(node, (ast.MatchAs, ast.MatchStar)) and node.name:
            names.add(node.name)
        elif isinstance(node, (ast.Global, ast.Nonlocal)):
            return None
    return names


def imported_names(tree: ast.AST) -> set[str]:
    """Names import statements bind anywhere in ``tree`` (modules, mostly)."""
    return {alias.asname or alias.name.partition(".")[0] for node in ast.walk(tree)
            if isinstance(node, (ast.Import, ast.ImportFrom)) for alias in node.names}


def free_names(function: ast.AST) -> set[str]:
    """Names an expression reads, a lambda's parameters excepted (over-approximated: nested scopes
    count too)."""
    names = {n.id for n in ast.walk(function) if isinstance(n, ast.Name)}
    if isinstance(function, ast.Lambda):
        names -= parameter_names(function)
    return names


def static_arguments(call: ast.Call, target: Target) -> list[tuple[str, str, ast.expr]]:
    """(the parameter's name, else its position as text; how the argument is named in a message;
    its expression) for each static argument ``call`` passes to the jitted ``target``."""
    params = target.params
    nums = {n + len(params) if n < 0 and params else n for n in target.static_argnums}
    names = set(target.static_argnames)
    # jit infers each from the other through the signature.
    names |= {params[n] for n in nums if 0 <= n < len(params)}
    nums |= {params.index(n) for n in names if n in params}
    found = []
    for index, argument in enumerate(call.args):
        if isinstance(argument, ast.Starred):
            break  # positions after *args are unknown
        if index in nums:
            label = f"argument {index}" + (f" (`{params[index]}`)" if index < len(params) else "")
            found.append((params[index] if index < len(params) else str(index), label, argument))
    for keyword in call.keywords:
        if keyword.arg is not None and keyword.arg in names:
            found.append((keyword.arg, f"argument `{keyword.arg}`", keyword.value))
    return found


def _bound_once(tree: ast.Module, name: str, target: Target) -> bool:
    """At module level ``name`` is bound only by its def and/or its jit assignment."""
    for node in walk_scope(tree):
        if isinstance(node, ast.Name) and node.id == name and not isinstance(node.ctx, ast.Load):
            if not (target.kind == "jit-bound" and node.lineno == target.span.start_line):
                return False
        elif isinstance(node, (*DEFS, ast.ClassDef)) and node.name == name:
            if node not in tree.body:
                return False
        elif isinstance(node, ast.alias) and (node.asname or node.name.partition(".")[0]) == name:
            return False
        elif isinstance(node, (ast.Global, ast.Nonlocal)) and name in node.names:
            return False
    return True
