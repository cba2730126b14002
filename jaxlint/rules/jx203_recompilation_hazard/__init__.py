"""JX203 recompilation-hazard: ``jax.jit`` applied to a new function object on every loop iteration.

A source-level rule (``ast`` over the file): jit caches its traces and compiled code per function
object, so ``jax.jit(lambda ...)``, ``jax.jit(partial(...))`` or ``jax.jit(g)`` of a ``g`` defined
in the loop traces and compiles again each iteration (measured: 5 traces for 5 iterations, 1 for a
module-level function). The other half, a static argument fed changing floats, is in
jx203_static_float. Rules run once per traced target; every target of a file reports the same
findings (same message, span and fix) and jaxlint.engine.check removes the duplicates.
"""
from __future__ import annotations

import ast
from typing import Iterable

from jaxlint.fixes.ast_spans import node_span, node_text, parse
from jaxlint.model import Edit, Finding, Fix, Span
from jaxlint.rules.base import Rule, RuleContext

_SCOPES = (ast.FunctionDef, ast.AsyncFunctionDef, ast.Lambda, ast.ClassDef)
_COMPREHENSIONS = (ast.ListComp, ast.SetComp, ast.DictComp, ast.GeneratorExp)
_LOOPS = (ast.For, ast.AsyncFor, ast.While)


class RecompilationHazard(Rule):
    code = "JX203"
    name = "recompilation-hazard"
    summary = ("`jax.jit` applied in a loop to a lambda, partial or local def, or a static argument fed "
               "changing floats: one compile per iteration or value.")
    severity = "warning"
    fix = "safe"

    @classmethod
    def check(cls, ctx: RuleContext) -> Iterable[Finding]:
        parsed = parse(ctx.source)
        if parsed is None:
            return
        tree = _module(parsed.parents)
        if tree is None:
            return
        aliases = import_aliases(tree)
        for node in ast.walk(tree):
            finding = None
            if isinstance(node, ast.Call) and qualified(node.func, aliases) == "jax.jit" \
                    and not _decorated(node, parsed.parents):
                finding = _check_call(cls, ctx, node, parsed.parents, aliases, tree)
            elif isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef)):
                finding = _check_decorated(cls, ctx, node, parsed.parents, aliases, tree)
            if finding is not None:
                yield finding
        from jaxlint.rules.jx203_recompilation_hazard.static_float import (
            problems,  # it imports JX204's helpers
        )

        for message, span in problems(ctx.path, ctx.source, ctx.config):
            yield ctx.finding(cls, message, span)


def _module(parents: dict[ast.AST, ast.AST]) -> ast.Module | None:
    return next((p for p in parents.values() if isinstance(p, ast.Module)), None)


def import_aliases(tree: ast.AST) -> dict[str, str]:
    """Local name -> the dotted name it was imported as (``jnp`` -> ``jax.numpy``)."""
    aliases: dict[str, str] = {}
    for node in ast.walk(tree):
        if isinstance(node, ast.Import):
            for alias in node.names:
                if alias.asname:
                    aliases[alias.asname] = alias.name
                else:
                    top = alias.name.partition(".")[0]
                    aliases[top] = top
        elif isinstance(node, ast.ImportFrom) and node.module and not node.level:
            for alias in node.names:
                aliases[alias.asname or alias.name] = f"{node.module}.{alias.name}"
    return aliases


def qualified(node: ast.AST, aliases: dict[str, str]) -> str | None:
    """``jx.jit`` -> ``jax.jit`` through the module's imports; None for anything else."""
    if isinstance(node, ast.Name):
        return aliases.get(node.id)
    if isinstance(node, ast.Attribute):
        base = qualified(node.value, aliases)
        return f"{base}.{node.attr}" if base else None
    return None


def _loops(call: ast.Call, parents: dict) -> tuple[list[ast.AST], bool, ast.AST | None]:
    """(loops running ``call`` once per iteration, innermost first; whether a comprehension is among
    them; the scope the walk stopped at)."""
    loops: list[ast.AST] = []
    child, parent = call, parents.get(call)
    while parent is not None and not isinstance(parent, (*_SCOPES, ast.Module)):
        if isinstance(parent, (ast.For, ast.AsyncFor)) and any(s is child for s in parent.body):
            loops.append(parent)
        elif isinstance(parent, ast.While) and (child is parent.test or any(s is child for s in parent.body)):
            loops.append(parent)
        elif isinstance(parent, _COMPREHENSIONS) and not isinstance(child, ast.comprehension):
            loops.append(parent)  # the element: evaluated per item
        elif isinstance(parent, ast.comprehension) and (
                any(c is child for c in parent.ifs) or child is parent.target
                or (child is parent.iter and parents[parent].generators[0] is not parent)):
            loops.append(parents[parent])
        child, parent = parent, parents.get(parent)
    unique = list(dict.fromkeys(loops))
    return unique, any(isinstance(loop, _COMPREHENSIONS) for loop in unique), parent


def _check_call(rule: type[Rule], ctx: RuleContext, call: ast.Call, parents: dict,
                aliases: dict[str, str], tree: ast.Module) -> Finding | None:
    function = call.args[0] if call.args else next((k.value for k in call.keywords if k.arg == "fun"), None)
    if function is None or isinstance(function, ast.Starred):
        return None
    loops, in_comprehension, scope = _loops(call, parents)
    if not loops or _traced(scope, parents, aliases, tree):
        return None
    if isinstance(function, ast.Lambda):
        what = "a lambda"
    elif isinstance(function, ast.Call) and qualified(function.func, aliases) == "functools.partial":
        what = "a functools.partial object"
    elif isinstance(function, ast.Name) and _defined_in(function.id, loops, aliases):
        what = f"`{function.id}`, a function defined in the loop body,"
    else:
        return None  # a function defined once: jit's cache hits on the next iteration
    loop_kind = "comprehension" if isinstance(loops[0], _COMPREHENSIONS) else f"`{_keyword(loops[0])}` loop"
    message = (f"jax.jit is applied to {what} inside a {loop_kind}: a new function object on every "
               "iteration, and jit caches traces and compiled code per function object, so the "
               "function is traced and compiled again each iteration. Create the jitted function "
               "once, before the loop")
    captured = sorted({n for loop in loops for n in _captured(function, loop)})
    if captured:
        message += (f"; it uses {', '.join(f'`{n}`' for n in captured)}, set in the loop: pass "
                    f"{'it' if len(captured) == 1 else 'them'} as an argument instead")
    fix = None
    if isinstance(function, ast.Lambda) and not in_comprehension:
        fix = _hoist_fix(ctx.source, call, function, loops, parents, tree)
    return ctx.finding(rule, message + ".", node_span(ctx.source, call), fix)


def _decorated(call: ast.Call, parents: dict) -> list[ast.AST]:
    """The def ``call`` decorates (``@jax.jit(static_argnums=0)``), if it is a decorator."""
    parent = parents.get(call)
    if isinstance(parent, (ast.FunctionDef, ast.AsyncFunctionDef)) and any(d is call for d in parent.decorator_list):
        return [parent]
    return []


def _check_decorated(rule: type[Rule], ctx: RuleContext, function: ast.FunctionDef, parents: dict,
                     aliases: dict[str, str], tree: ast.Module) -> Finding | None:
    """``@jax.jit`` on a def inside a loop: the def makes a new function object each iteration."""
    decorator = next((d for d in function.decorator_list if _is_jit_decorator(d, aliases)), None)
    if decorator is None:
        return None
    loops, _, scope = _loops(function, parents)  # type: ignore[arg-type]
    if not loops or _traced(scope, parents, aliases, tree):
        return None
    loop_kind = "comprehension" if isinstance(loops[0], _COMPREHENSIONS) else f"`{_keyword(loops[0])}` loop"
    message = (f"`{function.name}` is decorated with jax.jit inside a {loop_kind}: the def makes a new "
               "function object on every iteration, and jit caches traces and compiled code per "
               "function object, so the function is traced and compiled again each iteration. "
               "Define the jitted function once, before the loop")
    bound = {n for loop in loops if not isinstance(loop, _COMPREHENSIONS) for n in bound_names(loop) or ()}
    captured = sorted(_free_in_def(function) & bound - {function.name})
    if captured:
        message += (f"; it uses {', '.join(f'`{n}`' for n in captured)}, set in the loop: pass "
                    f"{'it' if len(captured) == 1 else 'them'} as an argument instead")
    return ctx.finding(rule, message + ".", node_span(ctx.source, decorator))


def _is_jit_decorator(decorator: ast.expr, aliases: dict[str, str]) -> bool:
    head = decorator.func if isinstance(decorator, ast.Call) else decorator
    if qualified(head, aliases) == "jax.jit":
        return True
    return isinstance(decorator, ast.Call) and qualified(head, aliases) == "functools.partial" \
        and bool(decorator.args) and qualified(decorator.args[0], aliases) == "jax.jit"


def _free_in_def(function: ast.FunctionDef) -> set[str]:
    a = function.args
    params = {p.arg for p in (*a.posonlyargs, *a.args, *a.kwonlyargs, a.vararg, a.kwarg) if p is not None}
    loaded = {n.id for s in function.body for n in ast.walk(s) if isinstance(n, ast.Name)}
    return loaded - params


def _keyword(loop: ast.AST) -> str:
    return {ast.For: "for", ast.AsyncFor: "async for", ast.While: "while"}[type(loop)]


def _traced(scope: ast.AST | None, parents: dict, aliases: dict[str, str], tree: ast.Module) -> bool:
    """The loop runs while a jitted function is traced (it or an enclosing def is jitted): the
    inner jits are then inlined into one program, compiled once."""
    wrapped = {call.args[0].id for call in ast.walk(tree) if isinstance(call, ast.Call) and call.args
               and isinstance(call.args[0], ast.Name) and qualified(call.func, aliases) == "jax.jit"}
    while scope is not None and not isinstance(scope, ast.Module):
        if isinstance(scope, (ast.FunctionDef, ast.AsyncFunctionDef)):
            if scope.name in wrapped:
                return True
            if any(_is_jit_decorator(d, aliases) for d in scope.decorator_list):
                return True
        scope = parents.get(scope)
    return False


def _defined_in(name: str, loops: list[ast.AST], aliases: dict[str, str]) -> bool:
    """``name`` is bound in one of the loops by a def, a lambda or a partial (a new object each time)."""
    for loop in loops:
        if isinstance(loop, _COMPREHENSIONS):
            continue
        for node in _walk_scope(loop):
            if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef)) and node.name == name:
                return True
            if isinstance(node, ast.Assign) and any(isinstance(t, ast.Name) and t.id == name for t in node.targets) \
                    and (isinstance(node.value, ast.Lambda) or (isinstance(node.value, ast.Call) and qualified(
                        node.value.func, aliases) == "functools.partial")):
                return True
    return False


def _walk_scope(node: ast.AST) -> Iterable[ast.AST]:
    """``node`` and its descendants; nested functions, lambdas and classes are yielded (a def binds
    its name here) but not entered."""
    yield node
    if isinstance(node, _SCOPES):
        return
    stack = list(ast.iter_child_nodes(node))
    while stack:
        current = stack.pop()
        yield current
        if not isinstance(current, _SCOPES):
            stack.extend(ast.iter_child_nodes(current))


def bound_names(loop: ast.AST) -> set[str] | None:
    """Names a loop statement (re)binds: its targets and everything assigned in its body.
    None when it declares global/nonlocal names (bindings reach outside)."""
    names: set[str] = set()
    for node in _walk_scope(loop):
        if isinstance(node, ast.Name) and not isinstance(node.ctx, ast.Load):
            names.add(node.id)
        elif isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef)) and node is not loop:
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


def _free_names(function: ast.AST) -> set[str]:
    """Names the jitted function reads (over-approximated: nested scopes count too)."""
    names = {n.id for n in ast.walk(function) if isinstance(n, ast.Name)}
    if isinstance(function, ast.Lambda):
        a = function.args
        names -= {p.arg for p in (*a.posonlyargs, *a.args, *a.kwonlyargs, a.vararg, a.kwarg) if p is not None}
    return names


def _captured(function: ast.AST, loop: ast.AST) -> list[str]:
    if isinstance(loop, _COMPREHENSIONS):
        bound = {n.id for g in loop.generators for n in ast.walk(g.target) if isinstance(n, ast.Name)}
    else:
        bound = bound_names(loop) or set()
    if not isinstance(function, (ast.Lambda, ast.Call)):
        return []  # a def in the loop: what it captures is in its body
    return sorted(_free_names(function) & bound)


# ---------------------------------------------------------------------------------------------
# The fix: evaluate ``jax.jit(lambda ...)`` once, before the outermost loop it does not depend on


def _hoist_fix(source: str, call: ast.Call, function: ast.Lambda, loops: list[ast.AST], parents: dict,
               tree: ast.Module) -> Fix | None:
    a = function.args
    if a.defaults or any(d is not None for d in a.kw_defaults):
        return None  # defaults are evaluated when the lambda is created
    others = [*call.args[1:], *call.keywords]
    if any(k.arg is None for k in call.keywords) or not all(_literal(n) for n in others):
        return None  # static_argnums=..., donate_argnums=...: literals only, no calls moved
    free = {n.id for n in ast.walk(call.func) if isinstance(n, ast.Name)} | _free_names(function)
    target = None
    for loop in loops:  # innermost first; bindings of an outer loop include the inner one's
        bound = bound_names(loop)
        if bound is None or free & bound:
            break
        target = loop
    if target is None:
        return None
    lines = source.splitlines(keepends=True)
    loop_span = node_span(source, target)
    indent = lines[loop_span.start_line - 1][:loop_span.start_col]
    if indent.strip():
        return None
    text = node_text(source, call)
    insert = Span(loop_span.start_line, loop_span.start_col, loop_span.start_line, loop_span.start_col)
    moved = _movable_assignment(source, call, target, parents, free)
    if moved is not None:
        statement, name = moved
        span = node_span(source, statement)
        # The statement's whole lines move, a trailing comment included.
        whole = "".join(lines[span.start_line - 1:span.end_line])[span.start_col:].rstrip("\r\n")
        delete = Span(span.start_line, 0, span.end_line + 1, 0)
        return Fix("safe", f"Move `{name} = jax.jit(...)` before the loop",
                   (Edit(insert, f"{whole}\n{indent}"), Edit(delete, "")))
    name = _fresh_name(tree, call, parents)
    return Fix("safe", f"Create the jitted function once before the loop, as `{name}`",
               (Edit(insert, f"{name} = {text}\n{indent}"), Edit(node_span(source, call), name)))


def _literal(node: ast.AST) -> bool:
    value = node.value if isinstance(node, ast.keyword) else node
    try:
        ast.literal_eval(value)
    except (ValueError, TypeError, SyntaxError, MemoryError, RecursionError):
        return False
    return True


def _movable_assignment(source: str, call: ast.Call, loop: ast.AST, parents: dict,
                        free: set[str]) -> tuple[ast.Assign, str] | None:
    """``name = jax.jit(...)`` alone on its lines, directly in the loop body, the only binding of
    ``name`` in the loop and not read before it: the whole statement can move before the loop."""
    statement = parents.get(call)
    if not (isinstance(statement, ast.Assign) and statement.value is call and len(statement.targets) == 1
            and isinstance(statement.targets[0], ast.Name) and parents.get(statement) is loop
            and any(s is statement for s in loop.body) and len(loop.body) > 1):
        return None
    name = statement.targets[0].id
    if name in free:
        return None
    span = node_span(source, statement)
    lines = source.splitlines()
    rest = lines[span.end_line - 1][span.end_col:].strip()
    if lines[span.start_line - 1][:span.start_col].strip() or (rest and not rest.startswith("#")):
        return None  # shares its lines with another statement
    for node in ast.walk(loop):
        if isinstance(node, ast.Name) and node.id == name and node is not statement.targets[0]:
            if not isinstance(node.ctx, ast.Load) or (node.lineno, node.col_offset) < (
                    statement.end_lineno, statement.end_col_offset):
                return None
        if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef)) and node.name == name:
            return None
    return statement, name


def _fresh_name(tree: ast.Module, call: ast.Call, parents: dict) -> str:
    """``jitted``; with several jit calls in loops in the file, ``jitted_<line>`` so that two
    fixes never bind the same name."""
    used = {n.id for n in ast.walk(tree) if isinstance(n, ast.Name)} | {
        n.arg for n in ast.walk(tree) if isinstance(n, ast.arg)} | {
        getattr(n, "name", None) for n in ast.walk(tree)} | {
        n.asname or n.name.partition(".")[0] for n in ast.walk(tree) if isinstance(n, ast.alias)}
    aliases = import_aliases(tree)
    in_loops = [n for n in ast.walk(tree) if isinstance(n, ast.Call)
                and qualified(n.func, aliases) == "jax.jit" and _loops(n, parents)[0]]
    name = "jitted" if len(in_loops) == 1 else f"jitted_{call.lineno}"
    while name in used:
        name += "_"
    return name
