"""JX203's loop half: ``jax.jit`` of a lambda, a partial or a def made inside a loop, and
``@jax.jit`` on a def inside a loop; the safe fix hoists ``jax.jit(lambda ...)`` out (fixes/hoist.py)."""
from __future__ import annotations

import ast

from jaxlint.model import Finding, Fix
from jaxlint.rules.base import Rule, SourceContext
from jaxlint.rules.jx203_recompilation_hazard.configurations import over_configurations
from jaxlint.scan.index import COMPREHENSIONS, DEFS, SourceIndex, bound_names, free_names, walk_scope
from jaxlint.scan.mutation import InPlaceChange, in_place_changes

# JAX transforms that return a new function object on every call (measured: ``jax.jit(jax.grad(f))``
# and ``jax.jit(jax.vmap(f))`` in a 3-step loop compile each step, JAX 0.4.35 and 0.10.2).
NEW_FUNCTION_TRANSFORMS = frozenset({
    "jax.vmap", "jax.grad", "jax.value_and_grad", "jax.jacfwd", "jax.jacrev", "jax.hessian",
    "jax.checkpoint", "jax.remat"})


def check_call(rule: type[Rule], ctx: SourceContext, call: ast.Call) -> Finding | None:
    index = ctx.index
    function = call.args[0] if call.args else next((k.value for k in call.keywords if k.arg == "fun"), None)
    if function is None or isinstance(function, ast.Starred):
        return None
    loops, in_comprehension, scope = index.loops_around(call)
    if not loops or traced(scope, index) or over_configurations(function, loops, scope, index.tree):
        return None
    if isinstance(function, ast.Lambda):
        what = "a lambda"
    elif isinstance(function, ast.Call) and "functools.partial" in index.call_names(function):
        what = "a functools.partial object"
    elif isinstance(function, ast.Call) and index.call_names(function) & NEW_FUNCTION_TRANSFORMS:
        what = f"the result of `{_short(index.text(function))}`"
    elif isinstance(function, ast.Name) and _defined_in(function.id, loops, index):
        what = f"`{function.id}`, a function defined in the loop body,"
    else:
        return None  # a function defined once: jit's cache hits on the next iteration
    message = (f"jax.jit is applied to {what} inside a {loop_kind(loops[0])}: a new function object on "
               "every iteration, and jit caches traces and compiled code per function object, so the "
               "function is traced and compiled again each iteration. Create the jitted function "
               "once, before the loop")
    captured = sorted({n for loop in loops for n in _captured(function, loop)})
    message += _captured_words(captured)
    # Hoisted, it would be traced once and keep what it read of these at the first iteration.
    changed = _changed(index, call, function, loops)
    message += _changed_words(changed)
    fix = None
    if isinstance(function, ast.Lambda) and not in_comprehension and not changed:
        fix = _hoist_fix(index, call, function, loops)
    return ctx.finding(rule, message + ".", index.span(call), fix)


def decorates(call: ast.Call, index: SourceIndex) -> bool:
    """``call`` is a decorator (``@jax.jit(static_argnums=0)``)."""
    parent = index.parent(call)
    return isinstance(parent, DEFS) and any(d is call for d in parent.decorator_list)


def check_decorated(rule: type[Rule], ctx: SourceContext, function: ast.FunctionDef) -> Finding | None:
    """``@jax.jit`` on a def inside a loop: the def makes a new function object each iteration."""
    index = ctx.index
    decorator = next((d for d in function.decorator_list if index.is_jit_decorator(d)), None)
    if decorator is None:
        return None
    loops, _, scope = index.loops_around(function)
    if not loops or traced(scope, index) or over_configurations(function, loops, scope, index.tree):
        return None
    message = (f"`{function.name}` is decorated with jax.jit inside a {loop_kind(loops[0])}: the def makes "
               "a new function object on every iteration, and jit caches traces and compiled code per "
               "function object, so the function is traced and compiled again each iteration. "
               "Define the jitted function once, before the loop")
    bound = {n for loop in loops if not isinstance(loop, COMPREHENSIONS) for n in bound_names(loop) or ()}
    captured = sorted(_free_in_def(function) & bound - {function.name})
    message += _captured_words(captured)
    return ctx.finding(rule, message + ".", index.span(decorator))


def _captured_words(captured: list[str]) -> str:
    """What the message advises for the names the function reads that the loop sets. Unchecked
    advice, so it says when it holds: a value jit cannot trace (a list of strings, a shape, a
    function) raises as an argument, and is a configuration that needs a compile of its own anyway."""
    if not captured:
        return ""
    it = "it" if len(captured) == 1 else "them"
    return (f"; it uses {', '.join(f'`{n}`' for n in captured)}, set in the loop: if {it} holds arrays or numbers, "
            f"pass {it} as an argument instead (any other value is a configuration, which needs a compile of "
            "its own either way)")


def _free_in_def(function: ast.FunctionDef) -> set[str]:
    a = function.args
    params = {p.arg for p in (*a.posonlyargs, *a.args, *a.kwonlyargs, a.vararg, a.kwarg) if p is not None}
    loaded = {n.id for s in function.body for n in ast.walk(s) if isinstance(n, ast.Name)}
    return loaded - params


def loop_kind(loop: ast.AST) -> str:
    """How a message names the loop: "comprehension", "`for` loop", "`while` loop"."""
    if isinstance(loop, COMPREHENSIONS):
        return "comprehension"
    return "`" + {ast.For: "for", ast.AsyncFor: "async for", ast.While: "while"}[type(loop)] + "` loop"


def traced(scope: ast.AST | None, index: SourceIndex) -> bool:
    """The loop runs while a jitted function is traced (it or an enclosing def is jitted): the
    inner jits are then inlined into one program, compiled once."""
    wrapped = {call.args[0].id for call in index.calls if call.args and isinstance(call.args[0], ast.Name)
               and "jax.jit" in index.call_names(call)}
    while scope is not None and not isinstance(scope, ast.Module):
        if isinstance(scope, DEFS):
            if scope.name in wrapped or any(index.is_jit_decorator(d) for d in scope.decorator_list):
                return True
        scope = index.parent(scope)
    return False


def _defined_in(name: str, loops: list[ast.AST], index: SourceIndex) -> bool:
    """``name`` is bound in one of the loops by a def, a lambda or a partial (a new object each time)."""
    for loop in loops:
        if isinstance(loop, COMPREHENSIONS):
            continue
        for node in walk_scope(loop):
            if isinstance(node, DEFS) and node.name == name:
                return True
            assigned = isinstance(node, ast.Assign) and any(isinstance(t, ast.Name) and t.id == name
                                                            for t in node.targets)
            if assigned and (isinstance(node.value, ast.Lambda) or (
                    isinstance(node.value, ast.Call) and "functools.partial" in index.call_names(node.value))):
                return True
    return False


def _changed(index: SourceIndex, call: ast.Call, function: ast.AST, loops: list[ast.AST]) -> list[InPlaceChange]:
    """The objects the jitted function reads that a loop around it changes, or may change, in place."""
    if not isinstance(function, (ast.Lambda, ast.Call)):
        return []
    reads = free_names(function) - index.module_names
    jitted = {t.bound_name or t.name for t in index.targets if t.kind in ("jit-decorated", "jit-bound")}
    found: dict[str, InPlaceChange] = {}
    for loop in loops:
        if isinstance(loop, COMPREHENSIONS):
            continue
        for name, change in in_place_changes(index, loop, reads, call, jitted).items():
            old = found.get(name)
            if old is None or (change.certain and not old.certain):
                found[name] = change
    return sorted(found.values(), key=lambda c: c.name)


def _changed_words(changed: list[InPlaceChange]) -> str:
    """What the message says of them: a change the source shows as one, a possible one as possible."""
    words = ""
    for certain in (True, False):
        these = [c for c in changed if c.certain is certain]
        if not these:
            continue
        names = " and ".join(", ".join(f"`{c.name}`" for c in these).rsplit(", ", 1))
        hows = "; ".join(f"line {c.line} {c.how}" for c in sorted(these, key=lambda c: c.line))
        if certain:
            words += (f"; it reads {names}, which the loop changes in place ({hows}): pass the values it "
                      "needs as arguments instead")
        else:
            words += (f"; it reads {names}, which the loop may change in place ({hows}): if it does, pass "
                      "the values it needs as arguments instead")
    return words


def _short(text: str) -> str:
    return text if len(text) <= 40 else text[:37] + "..."


def _captured(function: ast.AST, loop: ast.AST) -> list[str]:
    if isinstance(loop, COMPREHENSIONS):
        bound = {n.id for g in loop.generators for n in ast.walk(g.target) if isinstance(n, ast.Name)}
    else:
        bound = bound_names(loop) or set()
    if not isinstance(function, (ast.Lambda, ast.Call)):
        return []  # a def in the loop: what it captures is in its body
    return sorted(free_names(function) & bound)


# ---------------------------------------------------------------------------------------------
# The fix: evaluate ``jax.jit(lambda ...)`` once, before the outermost loop it does not depend on


def _hoist_fix(index: SourceIndex, call: ast.Call, function: ast.Lambda, loops: list[ast.AST]) -> Fix | None:
    """Computed on the loop statement's CST, emitted as text edits: jaxlint.fixes.hoist."""
    from jaxlint.fixes.hoist import hoist_fix  # imports libcst (0.2 s): only when a fix is built

    return hoist_fix(index, call, function, loops)
