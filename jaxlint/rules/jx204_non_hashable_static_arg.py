"""JX204 non-hashable-static-arg: a list, dict, set or array passed at a static argument of a jit.

A source-level rule (``ast`` over the file): jit hashes static arguments to key its cache, and
raises ``ValueError: Non-hashable static arguments are not supported`` for these. The jitted
functions are the module's own ``@jax.jit(static_argnums=...)`` / ``partial(jax.jit, ...)``
decorated functions and ``g = jax.jit(f, static_argnames=...)`` bindings (jaxlint's scan finds
them). Every traced target of a file reports the same findings; jaxlint.engine.check removes duplicates.
"""
from __future__ import annotations

import ast
import functools
from typing import Iterable

from jaxlint.fixes.ast_spans import node_span, node_text, parse
from jaxlint.model import Edit, Finding, Fix, Span, Target
from jaxlint.rules.base import Rule, RuleContext
from jaxlint.rules.jx203_recompilation_hazard import (
    _COMPREHENSIONS,
    _walk_scope,
    import_aliases,
    qualified,
)

_ARRAY_MAKERS = {f"{m}.{f}" for m in ("numpy", "jax.numpy") for f in ("array", "asarray")}
_KINDS = {ast.List: "a list", ast.Dict: "a dict", ast.Set: "a set", ast.ListComp: "a list comprehension",
          ast.DictComp: "a dict comprehension", ast.SetComp: "a set comprehension"}


class NonHashableStaticArg(Rule):
    code = "JX204"
    name = "non-hashable-static-arg"
    summary = "A list, dict, set or array passed where jit's static_argnums/static_argnames needs a hashable value."
    severity = "error"
    fix = "unsafe"

    @classmethod
    def check(cls, ctx: RuleContext) -> Iterable[Finding]:
        for message, span, fix in _problems(ctx.path, ctx.source):
            yield ctx.finding(cls, message, span, fix)

    @classmethod
    def explain(cls, path: str, source: str, target: Target | None, error: BaseException,
                span: Span) -> list[Finding]:
        """The findings that explain an import or trace failure raised at ``span`` (the innermost
        frame in ``path``), for the pipeline to report instead of the JX601/JX901 finding; [] when
        the failure is not a non-hashable static argument this rule sees in the source."""
        if not isinstance(error, ValueError) or "Non-hashable static arguments" not in str(error):
            return []
        return [cls.finding(path, call, message, fix, target.qualname if target is not None else None)
                for message, call, fix in _problems(path, source)
                if call.start_line <= span.start_line <= call.end_line]


def _problems(path: str, source: str) -> list[tuple[str, Span, Fix | None]]:
    """(message, span of the call, fix) for each call passing an unhashable static argument."""
    parsed = parse(source)
    jitted = _jitted(path, source)
    if parsed is None or not jitted:
        return []
    tree = next((p for p in parsed.parents.values() if isinstance(p, ast.Module)), None)
    if tree is None:
        return []
    aliases = import_aliases(tree)
    jitted = {name: t for name, t in jitted.items() if _bound_once(tree, name, t)}
    problems = []
    for call in ast.walk(tree):
        if not isinstance(call, ast.Call):
            continue
        func = call.func
        if isinstance(func, ast.Attribute) and func.attr in ("lower", "trace"):
            func = func.value  # f.lower(...) / f.trace(...) take f's arguments
        if not (isinstance(func, ast.Name) and func.id in jitted) or _shadowed(func, parsed.parents):
            continue
        target = jitted[func.id]
        bad = [(where, node) for where, argument in _static_arguments(call, target)
               for node in _unhashable(argument, aliases)]
        if bad:  # one finding per call: the call is where it fails
            problems.append((_message(source, func.id, target, bad, aliases), node_span(source, call),
                             _tuple_fix(source, [n for _, n in bad])))
    return problems


@functools.lru_cache(maxsize=8)
def _jitted(path: str, source: str) -> dict[str, Target]:
    """Module-level name -> the jit target with static arguments it calls."""
    if "static_arg" not in source:
        return {}  # no static_argnums/static_argnames anywhere: nothing to scan
    from jaxlint import scan

    try:
        targets = scan.scan_source(path, source)
    except scan.ScanSyntaxError:
        return {}
    found = {}
    for t in targets:
        if not (t.static_argnums or t.static_argnames):
            continue
        if t.kind == "jit-bound" and t.bound_name:
            found[t.bound_name] = t
        elif t.kind == "jit-decorated" and "." not in t.qualname:
            found[t.qualname] = t
    return found


def _bound_once(tree: ast.Module, name: str, target: Target) -> bool:
    """At module level ``name`` is bound only by its def and/or its jit assignment."""
    for node in _walk_scope(tree):
        if isinstance(node, ast.Name) and node.id == name and not isinstance(node.ctx, ast.Load):
            if not (target.kind == "jit-bound" and node.lineno == target.span.start_line):
                return False
        elif isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef)) and node.name == name:
            if node not in tree.body:
                return False
        elif isinstance(node, ast.alias) and (node.asname or node.name.partition(".")[0]) == name:
            return False
        elif isinstance(node, (ast.Global, ast.Nonlocal)) and name in node.names:
            return False
    return True


def _shadowed(name: ast.Name, parents: dict) -> bool:
    """A function (or comprehension) around the call binds the name locally."""
    scope = parents.get(name)
    while scope is not None and not isinstance(scope, ast.Module):
        if isinstance(scope, (ast.FunctionDef, ast.AsyncFunctionDef, ast.Lambda)):
            a = scope.args
            if name.id in {p.arg for p in (*a.posonlyargs, *a.args, *a.kwonlyargs, a.vararg, a.kwarg) if p}:
                return True
            body = scope.body if isinstance(scope.body, list) else [scope.body]
            if any(_binds(node, name.id) for statement in body for node in _walk_scope(statement)):
                return True
        elif isinstance(scope, _COMPREHENSIONS):
            if any(_binds(node, name.id) for g in scope.generators for node in ast.walk(g.target)):
                return True
        scope = parents.get(scope)
    return False


def _binds(node: ast.AST, name: str) -> bool:
    if isinstance(node, ast.Name):
        return node.id == name and not isinstance(node.ctx, ast.Load)
    if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef, ast.ExceptHandler,
                         ast.MatchAs, ast.MatchStar)):
        return node.name == name
    if isinstance(node, ast.alias):
        return (node.asname or node.name.partition(".")[0]) == name
    return isinstance(node, (ast.Global, ast.Nonlocal)) and name in node.names


def _static_arguments(call: ast.Call, target: Target) -> list[tuple[str, ast.expr]]:
    """(how the argument is named in the message, its expression) for each static argument passed."""
    return [(label, argument) for _, label, argument in static_arguments(call, target)]


def static_arguments(call: ast.Call, target: Target) -> list[tuple[str, str, ast.expr]]:
    """(the parameter's name, else its position as text; how the argument is named in a message;
    its expression) for each static argument ``call`` passes (JX203 groups calls by parameter)."""
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


def _unhashable(node: ast.expr, aliases: dict[str, str]) -> list[ast.expr]:
    """The unhashable literals in ``node``: itself, or inside a tuple literal."""
    if isinstance(node, ast.Tuple):
        return [bad for element in node.elts for bad in _unhashable(element, aliases)]
    if type(node) in _KINDS or _array_call(node, aliases):
        return [node]
    return []


def _array_call(node: ast.expr, aliases: dict[str, str]) -> bool:
    return isinstance(node, ast.Call) and qualified(node.func, aliases) in _ARRAY_MAKERS


def _message(source: str, name: str, target: Target, bad: list[tuple[str, ast.expr]],
             aliases: dict[str, str]) -> str:
    passed = []
    for where, node in bad:
        if _array_call(node, aliases):
            kind = f"an array ({qualified(node.func, aliases)})"  # type: ignore[attr-defined]
        else:
            kind = _KINDS[type(node)]
        text = node_text(source, node)
        shown = text if len(text) <= 40 and "\n" not in text else text.splitlines()[0][:37] + "..."
        passed.append(f"{where} is {kind}, `{shown}`")
    declared = ", ".join(
        [f"static_argnums={target.static_argnums!r}"] * bool(target.static_argnums)
        + [f"static_argnames={target.static_argnames!r}"] * bool(target.static_argnames))
    return (f"`{name}` is jitted with {declared}, but static {'; '.join(passed)}: not hashable, so the "
            "call raises ValueError: Non-hashable static arguments are not supported. Pass a hashable "
            "value (a tuple, a frozenset, a Python scalar) or make the argument non-static.")


def _tuple_fix(source: str, bad: list[ast.expr]) -> Fix | None:
    """List literals become tuple literals: unsafe, the function may use them as lists."""
    edits = []
    for node in bad:
        if not isinstance(node, ast.List) or any(isinstance(e, ast.Starred) for e in node.elts):
            return None
        inner = node_text(source, node)[1:-1]
        if len(node.elts) == 1 and not inner.rstrip().endswith(","):
            inner += ","
        edits.append(Edit(node_span(source, node), f"({inner})"))
    return Fix("unsafe", "Pass a tuple instead of the list", tuple(edits))
