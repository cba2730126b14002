"""The one pass over a module's AST behind ``jaxlint.scan``.

It records every binding into jaxlint.scan.names scopes, numbering them the way libcst's scope
analysis does (a name bound by a statement is visible from the next statement on), and collects
the scan candidates with the call sites inside them, resolved once the whole module is seen.

Expressions are walked iteratively (deeply nested arithmetic must not hit the recursion limit);
statements recursively: Python caps their nesting at 100 levels.
"""
from __future__ import annotations

import ast
from typing import Any

from jaxlint.scan.names import ANNOTATION, CLASS, COMPREHENSION, FUNCTION, GLOBAL, PREFIXES, Scope, visible

MODULE_TOP = ""  # statements at module level; in a module-level class body: the class name
_ENTER, _EXIT, _BOUNDARY, _PARAMS = range(4)  # markers on the expression walk's stack
_COMPREHENSIONS = (ast.ListComp, ast.SetComp, ast.GeneratorExp, ast.DictComp)
# Expression fields that hold child expressions, in source order (ctx/op fields left out).
_CHILDREN: dict[type, tuple[str, ...]] = {
    ast.BinOp: ("left", "right"), ast.BoolOp: ("values",), ast.UnaryOp: ("operand",),
    ast.Compare: ("left", "comparators"), ast.Subscript: ("value", "slice"),
    ast.Tuple: ("elts",), ast.List: ("elts",), ast.Set: ("elts",), ast.Starred: ("value",),
    ast.IfExp: ("body", "test", "orelse"), ast.Slice: ("lower", "upper", "step"),
    ast.Await: ("value",), ast.Yield: ("value",), ast.YieldFrom: ("value",),
    ast.JoinedStr: ("values",), ast.FormattedValue: ("value", "format_spec"),
}


def parameters(args: ast.arguments) -> list[ast.arg]:
    """A signature's parameters in order: positional-only, positional, *args, keyword-only, **kw."""
    return [*args.posonlyargs, *args.args, *([args.vararg] if args.vararg else []),
            *args.kwonlyargs, *([args.kwarg] if args.kwarg else [])]


class Candidate:
    """A module-level def or method ("def"), or a module-level ``name = call(...)`` ("bound").

    ``scope``/``index`` place its decorators (or the bound call) for name resolution; ``sites``
    are the calls and nested decorators inside it: (node, scope, index, is_decorator).
    """

    __slots__ = ("kind", "node", "scope", "index", "owner", "sites")

    def __init__(self, kind: str, node: ast.AST, scope: Scope, owner: str | None) -> None:
        self.kind, self.node, self.scope, self.index, self.owner = kind, node, scope, scope.count, owner
        self.sites: list[tuple[ast.AST, Scope, int, bool]] = []


class Walker:
    """One pass over a module: bindings per scope, candidates, and the imports seen."""

    def __init__(self) -> None:
        self.scope = Scope(GLOBAL, None)
        self.region: list | None = None  # the current candidate's sites
        self.candidates: list[Candidate] = []
        self.imports: list[tuple[str, tuple[tuple[str, str | None], ...]]] = []
        self.class_named_like_module = False  # e.g. ``class jax:``: its bindings read "jax.*"
        # id(call or decorator) -> (scope, bindings before it): filled only for the source index,
        # which resolves names anywhere in the file (the scan needs them inside candidates only).
        self.scopes_at: dict[int, tuple[Scope, int]] | None = None

    def bind(self, name: str, imported: Any = None) -> None:
        scope = self.scope
        while name in scope.overwrites:
            scope = visible(scope.overwrites[name], scope)
        scope.names.setdefault(name, []).append((scope.count, imported))

    # -- statements -------------------------------------------------------------------

    def body(self, statements: list[ast.stmt], top: str | None) -> None:
        for node in statements:
            kind = type(node)
            if kind is ast.Expr or kind is ast.Return:
                if node.value is not None:  # type: ignore[attr-defined]
                    self.expr(node.value)  # type: ignore[attr-defined]
            elif kind is ast.Assign or kind is ast.AnnAssign or kind is ast.AugAssign:
                self._assign(node, top)
            elif kind is ast.FunctionDef or kind is ast.AsyncFunctionDef:
                self._function(node, top)  # type: ignore[arg-type]
            elif kind is ast.ClassDef:
                self._class(node, top)  # type: ignore[arg-type]
            elif kind is ast.If or kind is ast.While:
                self.expr(node.test)  # type: ignore[attr-defined]
                self.body(node.body, top)  # type: ignore[attr-defined]
                self.body(node.orelse, top)  # type: ignore[attr-defined]
            elif kind is ast.For or kind is ast.AsyncFor:
                self.expr(node.target)  # type: ignore[attr-defined]
                self.scope.count += 1
                self.expr(node.iter)  # type: ignore[attr-defined]
                self.body(node.body, top)  # type: ignore[attr-defined]
                self.body(node.orelse, top)  # type: ignore[attr-defined]
            elif kind is ast.Import or kind is ast.ImportFrom:
                self._import(node)  # type: ignore[arg-type]
            elif kind is ast.Global or kind is ast.Nonlocal:
                self._declare(node)  # type: ignore[arg-type]
            elif kind in (ast.Pass, ast.Break, ast.Continue):
                pass
            elif kind is ast.With or kind is ast.AsyncWith:
                for item in node.items:  # type: ignore[attr-defined]
                    self.expr(item.context_expr)
                    if item.optional_vars is not None:
                        self.expr(item.optional_vars)
                    self.scope.count += 1
                self.body(node.body, top)  # type: ignore[attr-defined]
            elif kind is ast.Try or kind.__name__ == "TryStar":
                self.body(node.body, top)  # type: ignore[attr-defined]
                for handler in node.handlers:  # type: ignore[attr-defined]
                    if handler.type is not None:
                        self.expr(handler.type)
                    if handler.name:
                        self.bind(handler.name)
                        self.scope.count += 1
                    self.body(handler.body, top)
                self.body(node.orelse, top)  # type: ignore[attr-defined]
                self.body(node.finalbody, top)  # type: ignore[attr-defined]
            elif kind is ast.Match:
                self._match(node, top)  # type: ignore[arg-type]
            else:  # Delete, Raise, Assert, TypeAlias and anything newer
                self._generic(node, top)

    def _generic(self, node: ast.AST, top: str | None) -> None:
        if type(node).__name__ == "TypeAlias":  # ``type X[T] = ...`` (3.12+)
            self.expr(node.name)  # type: ignore[attr-defined]
            outer = self.scope
            self._type_params(node)
            self.expr(node.value)  # type: ignore[attr-defined]
            self.scope = outer
            outer.count += 1
            return
        for child in ast.iter_child_nodes(node):
            if isinstance(child, ast.stmt):
                self.body([child], top)
            elif isinstance(child, ast.expr):
                self.expr(child)

    def _assign(self, node: Any, top: str | None) -> None:
        region = self.region
        target = node.targets[0] if type(node) is ast.Assign and len(node.targets) == 1 else None
        if type(node) is ast.AnnAssign:
            target = node.target
        if top == MODULE_TOP and type(target) is ast.Name and type(node.value) is ast.Call:
            candidate = Candidate("bound", node, self.scope, None)
            self.candidates.append(candidate)
            self.region = candidate.sites
        for child in node.targets if type(node) is ast.Assign else (node.target,):
            self.expr(child)
        if type(node) is ast.AnnAssign:
            self.expr(node.annotation)
        if node.value is not None:
            self.expr(node.value)
        self.scope.count += 1
        self.region = region

    def _decorators(self, node: Any, scope: Scope) -> None:
        for decorator in node.decorator_list:
            if self.region is not None:
                self.region.append((decorator, scope, scope.count, True))
            if self.scopes_at is not None:
                self.scopes_at[id(decorator)] = (scope, scope.count)
            self.expr(decorator)

    def _function(self, node: ast.FunctionDef | ast.AsyncFunctionDef, top: str | None) -> None:
        outer, region = self.scope, self.region
        self.bind(node.name)
        if top is not None:  # its own decorators are not sites inside it
            candidate = Candidate("def", node, outer, top or None)
            self.candidates.append(candidate)
            for decorator in node.decorator_list:
                if self.scopes_at is not None:
                    self.scopes_at[id(decorator)] = (outer, outer.count)
                self.expr(decorator)
            self.region = candidate.sites
        else:
            self._decorators(node, outer)
        self._type_params(node)
        args = node.args
        params = parameters(args)
        for default in (*args.defaults, *args.kw_defaults):
            if default is not None:
                self.expr(default)
        for param in params:
            if param.annotation is not None:
                self.expr(param.annotation)
        if node.returns is not None:
            self.expr(node.returns)
        self.scope = Scope(FUNCTION, self.scope, node.name)
        for param in params:
            self.bind(param.arg)
        self.scope.count += 1
        self.body(node.body, None)
        self.scope, self.region = outer, region
        outer.count += 1

    def _class(self, node: ast.ClassDef, top: str | None) -> None:
        outer = self.scope
        self.bind(node.name)
        self._decorators(node, outer)
        self._type_params(node)
        for base in node.bases:
            self.expr(base)
        for keyword in node.keywords:
            self.expr(keyword.value)
        self.scope = Scope(CLASS, self.scope, node.name)
        if self.scope.prefix in PREFIXES:
            self.class_named_like_module = True
        self.body(node.body, node.name if top == MODULE_TOP else None)
        self.scope = outer
        outer.count += 1

    def _type_params(self, node: Any) -> None:
        """PEP 695 type parameters (3.12+) live in a scope of their own around the def."""
        params = getattr(node, "type_params", None)
        if not params:
            return
        self.scope = Scope(ANNOTATION, self.scope)
        for param in params:
            self.bind(param.name)
            for field in ("bound", "default_value"):
                if getattr(param, field, None) is not None:
                    self.expr(getattr(param, field))
            self.scope.count += 1

    def _import(self, node: ast.Import | ast.ImportFrom) -> None:
        module = ""
        if type(node) is ast.ImportFrom:
            module = "." * node.level + (node.module or "")
        aliases = tuple((alias.name, alias.asname) for alias in node.names)
        if aliases[0][0] != "*":  # a star import binds nothing we can see
            info = (module, aliases)
            self.imports.append(info)
            for dotted, asname in aliases:
                if asname:
                    self.bind(asname, info)
                else:  # ``import a.b`` binds "a.b" and "a"
                    parts = dotted.split(".")
                    for i in range(len(parts), 0, -1):
                        self.bind(".".join(parts[:i]), info)
        self.scope.count += 1

    def _declare(self, node: ast.Global | ast.Nonlocal) -> None:
        scope = self.scope
        if scope.kind == GLOBAL:
            if type(node) is ast.Nonlocal:  # CPython rejects this when compiling
                raise SyntaxError("nonlocal declaration not allowed at module level",
                                  ("", node.lineno, node.col_offset + 1, ""))
        else:
            for name in node.names:
                scope.overwrites[name] = scope.parent if type(node) is ast.Nonlocal else self._globals()
        scope.count += 1

    def _globals(self) -> Scope:
        scope = self.scope
        while scope.parent is not None:
            scope = scope.parent
        return scope

    def _match(self, node: ast.Match, top: str | None) -> None:
        self.expr(node.subject)
        for case in node.cases:
            # Capture patterns bind names (libcst treated them as uses).
            captured = [n.name for n in ast.walk(case.pattern)
                        if isinstance(n, (ast.MatchAs, ast.MatchStar)) and n.name]
            captured += [n.rest for n in ast.walk(case.pattern) if isinstance(n, ast.MatchMapping) and n.rest]
            for name in captured:
                self.bind(name)
            if captured:
                self.scope.count += 1
            if case.guard is not None:
                self.expr(case.guard)
            self.body(case.body, top)

    # -- expressions ------------------------------------------------------------------

    def expr(self, root: ast.AST) -> None:
        region = self.region
        stack: list = [root]
        pop, push, extend = stack.pop, stack.append, stack.extend
        while stack:
            node = pop()
            kind = type(node)
            if kind is ast.Name:
                if type(node.ctx) is ast.Store:
                    self.bind(node.id)
            elif kind is ast.Attribute:
                push(node.value)
            elif kind is ast.Constant:
                pass
            elif kind is ast.Call:
                if region is not None:
                    region.append((node, self.scope, self.scope.count, False))
                if self.scopes_at is not None:
                    self.scopes_at[id(node)] = (self.scope, self.scope.count)
                for keyword in reversed(node.keywords):
                    push(keyword.value)
                extend(reversed(node.args))
                push(node.func)
            elif kind is tuple:
                self._marker(node)
            elif kind in _CHILDREN:
                for field in reversed(_CHILDREN[kind]):
                    value = getattr(node, field)
                    if type(value) is list:
                        extend(reversed(value))
                    elif value is not None:
                        push(value)
            elif kind is ast.Dict:
                for key, value in reversed(list(zip(node.keys, node.values))):
                    push(value)
                    if key is not None:
                        push(key)
            else:
                extend(reversed(self._scoped(node)))

    def _scoped(self, node: Any) -> list:
        """Children of a scope-making or binding expression, with markers, in visit order."""
        kind = type(node)
        outer = self.scope
        if kind is ast.NamedExpr:
            return [node.target, node.value, (_BOUNDARY, None)]
        if kind is ast.Lambda:
            args = node.args
            defaults = [d for d in (*args.defaults, *args.kw_defaults) if d is not None]
            names = [p.arg for p in parameters(args)]
            return [*defaults, (_PARAMS, (Scope(FUNCTION, outer, None), names)), node.body, (_EXIT, outer)]
        if kind in _COMPREHENSIONS:
            first, *inner = node.generators
            children = [first.iter, (_ENTER, Scope(COMPREHENSION, outer)), first.target,
                        (_BOUNDARY, None), *first.ifs]
            for generator in inner:
                children += [generator.target, generator.iter, *generator.ifs]
            if inner:
                children.append((_BOUNDARY, None))
            children += [node.key, node.value] if kind is ast.DictComp else [node.elt]
            return [*children, (_EXIT, outer)]
        return list(ast.iter_child_nodes(node))  # expression kinds newer than this code

    def _marker(self, marker: tuple) -> None:
        op, arg = marker
        if op == _BOUNDARY:
            self.scope.count += 1
        elif op == _PARAMS:
            scope, names = arg
            self.scope = scope
            for name in names:
                self.bind(name)
            scope.count += 1
        else:  # _ENTER / _EXIT
            self.scope = arg
