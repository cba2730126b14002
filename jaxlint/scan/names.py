"""Which names are JAX transforms, and what a name in a module stands for.

Names resolve as libcst's QualifiedNameProvider (jaxlint's former scanner engine) resolves them,
so ``jax.jit`` is found through ``import jax as j``, ``from jax import jit as J`` and friends, and
a parameter or local variable named like an import shadows it:

* the bindings a name may refer to are all of its bindings in the nearest scope that has any
  (a "may" union: ``if x: from jax import jit`` / ``else: jit = mine`` gives both);
* a bare name sees only the bindings its own scope made before it (when all come later, the
  enclosing scope's); an attribute chain ``jax.lax.scan`` sees all of them;
* class bodies are invisible to the functions inside them; lambdas and comprehensions are
  scopes; ``global`` / ``nonlocal`` redirect a function's bindings.

jaxlint.scan.walk fills the scopes.
"""
from __future__ import annotations

import ast
from collections.abc import Collection
from typing import Any

JIT = "jit"
# Qualified names (as resolved through imports) -> short kind.
TRANSFORMS: dict[str, str] = {
    "jax.jit": JIT,
    "jax.api.jit": JIT,
    "jax._src.api.jit": JIT,
    "jax.vmap": "vmap",
    "jax.api.vmap": "vmap",
    "jax._src.api.vmap": "vmap",
    **{f"jax.lax.{k}": k for k in ("scan", "fori_loop", "while_loop", "cond", "switch", "map")},
}
PARTIAL = frozenset({"functools.partial"})
# Short names of the transforms that differentiate the function they are given (JAX's and
# equinox's): a call's own name (SourceIndex.callee), so any module's ``grad`` counts.
DIFFERENTIATING = frozenset({"grad", "value_and_grad", "jvp", "vjp", "linearize", "jacfwd", "jacrev",
                             "jacobian", "hessian", "filter_grad", "filter_value_and_grad", "filter_jvp",
                             "filter_vjp"})
# Module paths a transform (or partial) lives under: "jax", "jax.lax", "jax._src.api", ...
PREFIXES = frozenset(q.rsplit(".", i)[0] for q in (*TRANSFORMS, *PARTIAL) for i in range(q.count(".") + 1))
GLOBAL, FUNCTION, CLASS, COMPREHENSION, ANNOTATION = range(5)  # scope kinds (ANNOTATION: PEP 695)


class Scope:
    """A namespace: the module, a function or lambda, a class body, a comprehension."""

    __slots__ = ("kind", "parent", "prefix", "names", "overwrites", "count")

    def __init__(self, kind: int, parent: Scope | None, name: str | None = None) -> None:
        self.kind = kind
        self.parent = parent
        # name -> bindings, each (index, import info or None); no reference back to the scope,
        # so scopes are freed without the cyclic GC (jaxlint.scan pauses it)
        self.names: dict[str, list[tuple[int, Any]]] = {}
        self.overwrites: dict[str, Scope] = {}  # global / nonlocal declarations
        self.count = 0  # bumped after every binding statement: orders bindings and uses
        outer = parent.prefix if parent is not None else ""
        parts = {FUNCTION: (outer, name, "<locals>"), CLASS: (outer, name),
                 COMPREHENSION: (outer, "<comprehension>")}.get(kind, (outer,))
        self.prefix = ".".join(p for p in parts if p)


def visible(scope: Scope, from_scope: Scope) -> Scope:
    """``scope``, or the first enclosing one that is not a class body hidden from ``from_scope``."""
    while scope.kind == CLASS and not (from_scope.kind == ANNOTATION and from_scope.parent is scope):
        scope = scope.parent  # type: ignore[assignment]
    return scope


def _resolve(name: str, scope: Scope | None, from_scope: Scope) -> tuple[Scope | None, list]:
    """(scope, bindings): what ``name`` may refer to from ``from_scope``, searching from ``scope``."""
    while scope is not None:
        redirect = scope.overwrites.get(name)
        if redirect is not None:
            scope = visible(redirect, from_scope)
            continue
        found = scope.names.get(name)
        if found:
            return scope, found
        scope = visible(scope.parent, from_scope) if scope.parent is not None else None
    return None, []  # a builtin or unbound: never a transform


def _contains(name: str, scope: Scope) -> bool:
    """libcst's ``name in scope``: as _resolve, but each parent judges visibility for itself."""
    while True:
        redirect = scope.overwrites.get(name)
        if redirect is not None:
            scope = redirect
            continue
        if scope.names.get(name):
            return True
        if scope.parent is None:
            return False
        scope = visible(scope.parent, scope)


def _names_of(scope: Scope, binding: tuple, full_name: str) -> list[str]:
    """Qualified names of ``full_name`` through one binding (in ``scope``) of its first part(s)."""
    imported = binding[1]
    if imported is None:
        return [f"{scope.prefix}.{full_name}" if scope.prefix else full_name]
    module, aliases = imported
    results = []
    for dotted, asname in aliases:  # every alias of the statement, as libcst does
        parts = dotted.split(".")
        for i in range(len(parts), 0, -1):
            real = as_name = ".".join(parts[:i])
            if module.endswith("."):
                real = module + real
            elif module:
                real = f"{module}.{real}"
            if asname:
                as_name = asname
            if full_name.startswith(as_name):
                rest = full_name[len(as_name):]
                if rest and not rest.startswith("."):
                    continue
                rest = rest.lstrip(".")
                results.append(f"{real}.{rest}" if rest else real)
                break
    return results


def full_name(node: ast.AST) -> str:
    """libcst's dotted name of an attribute chain: calls and subscripts are looked through."""
    parts = []
    while True:
        kind = type(node)
        if kind is ast.Attribute:
            parts.append(node.attr)  # type: ignore[attr-defined]
            node = node.value  # type: ignore[attr-defined]
        elif kind is ast.Call:
            node = node.func  # type: ignore[attr-defined]
        elif kind is ast.Subscript:
            node = node.value  # type: ignore[attr-defined]
        else:
            if kind is ast.Name:
                parts.append(node.id)  # type: ignore[attr-defined]
            elif kind is ast.Constant and any(node.value is v for v in (None, True, False)):  # type: ignore[attr-defined]
                parts.append(str(node.value))  # type: ignore[attr-defined]  # names in libcst
            else:
                parts.append("None")  # libcst formats an unnamed base as None
            return ".".join(reversed(parts))


def qualified_names(node: ast.AST, scope: Scope, index: int) -> list[str]:
    """Every qualified name ``node`` (a Name or Attribute) may stand for; [] for other nodes."""
    if type(node) is ast.Name:
        name = node.id  # type: ignore[attr-defined]
        owner, found = _resolve(name, scope, scope)
        earlier = [b for b in found if owner is not scope or b[0] < index]
        if not earlier and found:  # only later bindings here: look outside
            owner, earlier = _resolve(name, scope.parent, scope)
        return [q for b in earlier for q in _names_of(owner, b, name)]  # type: ignore[arg-type]
    if type(node) is not ast.Attribute:
        return []
    dotted = full_name(node)
    prefix: str | None = dotted
    while prefix:
        if _contains(prefix, scope):
            owner, found = _resolve(prefix, scope, scope)
            return [q for b in found for q in _names_of(owner, b, dotted)]  # type: ignore[arg-type]
        cut = prefix.rfind(".")
        prefix = prefix[:cut] if cut != -1 else None
    return []


def _qualified(node: ast.AST, scope: Scope, index: int, table: Collection[str]) -> str | None:
    matches = [q for q in qualified_names(node, scope, index) if q in table]
    return min(matches) if matches else None


def _first_arg(call: ast.Call) -> tuple[str | None, ast.AST] | None:
    """(keyword, value) of a call's first argument in source order (``*a`` and ``**k`` have none)."""
    first = [(None, a.value if type(a) is ast.Starred else a) for a in call.args[:1]]
    first += [(k.arg, k.value) for k in call.keywords[:1]]
    if len(first) == 2 and (call.keywords[0].lineno, call.keywords[0].col_offset) < (
            call.args[0].lineno, call.args[0].col_offset):
        first.reverse()  # ``f(k=1, *rest)``
    return first[0] if first else None


def _decorator_transform(expr: ast.AST, scope: Scope, index: int) -> tuple[str, list[ast.keyword]] | None:
    """Transform used as a decorator and the keyword args configuring it.

    Accepts ``@T``, ``@partial(T, ...)`` and ``@jax.jit(...)`` (jit's decorator-factory form).
    """
    name = _qualified(expr, scope, index, TRANSFORMS)
    if name is not None:
        return name, []
    if type(expr) is ast.Call:
        name = _qualified(expr.func, scope, index, TRANSFORMS)
        if name is not None and TRANSFORMS[name] == JIT and not expr.args and all(k.arg for k in expr.keywords):
            return name, list(expr.keywords)
        first = _first_arg(expr)
        if first is not None and first[0] is None and _qualified(expr.func, scope, index, PARTIAL):
            name = _qualified(first[1], scope, index, TRANSFORMS)
            if name is not None:
                return name, [k for k in expr.keywords if k.arg]
    return None


def root_name(node: ast.AST) -> str | None:
    """The first part of the dotted name a Name/Attribute (chain) resolves by."""
    while type(node) is not ast.Name:
        if type(node) is ast.Attribute or type(node) is ast.Subscript:
            node = node.value  # type: ignore[attr-defined]
        elif type(node) is ast.Call:
            node = node.func  # type: ignore[attr-defined]
        else:
            return None
    return node.id  # type: ignore[attr-defined]


class Resolver:
    """Finds the transforms among the sites of a walked module (see jaxlint.scan.walk)."""

    def __init__(self, imports: list[tuple[str, tuple]], any_name: bool) -> None:
        # Names a transform can be reached through, so the rest (``np.sum``) skip resolution;
        # None when any name can (``class jax:`` makes its attributes "jax.*").
        self.roots: frozenset[str] | None = None
        if not any_name:
            roots = {"jax", "functools"}  # module-level variables too: ``jax = importorskip("jax")``
            for module, aliases in imports:
                for dotted, asname in aliases:
                    real = f"{module}.{dotted}" if module else dotted
                    if real in PREFIXES and (module or asname):  # ``import jax.lax`` binds "jax"
                        roots.add(asname or dotted)
            self.roots = frozenset(roots)

    def _maybe(self, node: ast.AST) -> bool:
        return self.roots is None or root_name(node) in self.roots

    def decorator(self, expr: ast.AST, scope: Scope, index: int) -> tuple[str, list[ast.keyword]] | None:
        """(qualified name, configuring keywords) of a transform used as decorator ``expr``."""
        if not self._maybe(expr.func if type(expr) is ast.Call else expr):  # type: ignore[attr-defined]
            return None
        return _decorator_transform(expr, scope, index)

    def calls(self, sites: list[tuple], handled: set[int]) -> list[tuple[ast.AST, ast.AST, str]]:
        """(call, transform, qualified name) of the transform uses among ``sites``, in source order.

        ``jax.vmap(f)(x)`` is one use: the call is the application, the transform ``jax.vmap(f)``.
        ``handled`` holds the ids of calls already accounted for, and receives the new ones.
        """
        sites = sorted(sites, key=lambda s: (s[0].lineno, s[0].col_offset, -s[0].end_lineno,
                                             -s[0].end_col_offset, not s[3]))  # pre-order
        found = []
        for node, scope, index, is_decorator in sites:
            if is_decorator:
                transform = self.decorator(node, scope, index)
                if transform is not None:
                    handled.add(id(node))
                    found.append((node, node, transform[0]))
                continue
            func = node.func
            if id(node) in handled or not self._maybe(func):
                continue
            if type(func) is ast.Call:  # the applied form
                name = _qualified(func.func, scope, index, TRANSFORMS)
                if name is not None:
                    handled.add(id(func))
                    found.append((node, func, name))
                continue
            name = _qualified(func, scope, index, TRANSFORMS)
            if name is not None:
                found.append((node, node, name))
        return found

    def jit_bound(self, value: ast.Call, scope: Scope, index: int) -> tuple[ast.expr, list, set[int]] | None:
        """(wrapped function, configuring keywords, ids of the jit calls) when ``value`` jits.

        ``jax.jit(f, ...)``, ``partial(jax.jit, ...)(f)`` or ``jax.jit(...)(f)``.
        """
        positional = [a for a in value.args if type(a) is not ast.Starred]
        name = _qualified(value.func, scope, index, TRANSFORMS) if self._maybe(value.func) else None
        if name is not None and TRANSFORMS[name] == JIT and positional:
            return positional[0], value.keywords, {id(value)}
        transform = self.decorator(value.func, scope, index)
        if transform is None or TRANSFORMS[transform[0]] != JIT or len(positional) != 1:
            return None
        return positional[0], transform[1], {id(value), id(value.func)}
