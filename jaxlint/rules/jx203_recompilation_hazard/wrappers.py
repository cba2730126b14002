"""JX203's per-step wrapper: ``jax.jit(f)`` evaluated in a loop with ``f`` defined outside it
(numpyro 0.21.0's ``svi_state, loss = jit(body_fn)(svi_state, None)``), and ``jax.vmap(g)`` of a
jitted ``g`` in a loop.

Nothing is traced or compiled again there: jit keys its caches on the function and the static
arguments, which are the same each step. What is lost is jit's C++ fast path, which belongs to
the wrapper object: a new wrapper's first call goes through Python (measured, bench/
bench_jit_wrapper.py). vmap keeps no cache at all, so hoisting ``jax.vmap(g)`` alone gains
nothing; ``jax.jit(jax.vmap(g))`` made once does. The safe fix hoists ``jax.jit(f, ...)`` out of
the loop (fixes/hoist.py) where the source proves the wrapper is the same object each step would
be: ``f`` and the wrapper's arguments are not rebound in the loop, nor changed in place.
"""
from __future__ import annotations

import ast
import dataclasses

from jaxlint.model import Finding
from jaxlint.rules.base import Rule, SourceContext
from jaxlint.scan.index import COMPREHENSIONS, SourceIndex, bound_names, free_names
from jaxlint.scan.mutation import in_place_changes

# Measured with bench/bench_jit_wrapper.py (2 shared cores, CPU, JAX 0.4.35 and 0.10.2, a busy
# machine: the ranges are wide): rules/JX203.md#cost.
JIT_COST = "measured on a 2-core CPU: 0.05-0.3 ms per call against 0.008-0.04 ms with the wrapper made once"
VMAP_COST = ("measured on a 2-core CPU: 0.3-2 ms per call, about the same with `jax.vmap(...)` made once, "
             "against under 0.03 ms with `jax.jit(jax.vmap(...))` made once")


def check_jit_wrapper(rule: type[Rule], ctx: SourceContext, call: ast.Call, loops: list[ast.AST]) -> Finding | None:
    """``jax.jit(f, ...)`` in ``loops`` (innermost first, none of them traced) of an ``f`` that the
    innermost loop does not bind, with arguments that do not depend on it."""
    from jaxlint.rules.jx203_recompilation_hazard.loops import loop_kind

    index = ctx.index
    function = _function_argument(call)
    if not isinstance(function, ast.Name) or _depends_on(call, loops[0], index):
        return None  # f or static_argnums=... set by the loop: a different wrapper each step
    if isinstance(index.parent(call), ast.Attribute):
        return None  # jax.jit(f).lower(...), .trace(...): ahead-of-time use, no call to speed up
    name = function.id
    more = ", ..." if len(call.args) + len(call.keywords) > 1 else ""
    message = (f"`{index.text(call.func)}({name}{more})` is evaluated inside a {loop_kind(loops[0])}: `{name}` is "
               "defined outside it, so jit's caches still hit and nothing is traced or compiled again, "
               "but the jitted wrapper is a new object on every iteration and its call misses jit's C++ "
               f"fast path ({JIT_COST}). Create the jitted function once, before the loop")
    fix = None
    if not any(isinstance(loop, COMPREHENSIONS) for loop in loops):
        from jaxlint.fixes.hoist import hoist_fix  # imports libcst (0.2 s): only when a fix is built

        fix = hoist_fix(index, call, function, loops, f"{name}_jit")
        changed = _changed(index, call, loops)
        if fix is not None and changed:
            # jit keys its cache on the function object: one changed in place may need a new trace.
            fix = dataclasses.replace(fix, applicability="unsafe",
                                      message=f"{fix.message} (unsafe: {changed})")
    return ctx.finding(rule, message + ".", index.span(call), fix)


def check_vmap_of_jitted(rule: type[Rule], ctx: SourceContext, call: ast.Call,
                         loops: list[ast.AST]) -> Finding | None:
    """``jax.vmap(g, ...)`` in ``loops`` of a ``g`` the file jits, bound outside the innermost loop."""
    from jaxlint.rules.jx203_recompilation_hazard.loops import loop_kind

    index = ctx.index
    function = _function_argument(call)
    if not isinstance(function, ast.Name) or function.id not in _jitted_names(index, loops[0]):
        return None
    if _depends_on(call, loops[0], index):
        return None
    name = function.id
    more = ", ..." if len(call.args) + len(call.keywords) > 1 else ""
    message = (f"`{index.text(call.func)}({name}{more})` of the jitted `{name}` is evaluated inside a "
               f"{loop_kind(loops[0])}: vmap keeps no cache, so every call batches `{name}` again in "
               f"Python and dispatches the result outside jit's C++ fast path ({VMAP_COST}). Create "
               f"`jax.jit(jax.vmap({name}, ...))` once, before the loop")
    return ctx.finding(rule, message + ".", index.span(call))


def _function_argument(call: ast.Call) -> ast.expr | None:
    if call.args:
        return call.args[0]
    return next((k.value for k in call.keywords if k.arg == "fun"), None)


def _depends_on(call: ast.Call, loop: ast.AST, index: SourceIndex) -> bool:
    """A name the wrapper call reads (the function, static_argnums=..., in_axes=...) is bound by
    ``loop`` (a comprehension's targets; a statement loop's targets and assignments), or the loop
    declares global/nonlocal names."""
    if isinstance(loop, COMPREHENSIONS):
        bound: set[str] | None = {n.id for g in loop.generators for n in ast.walk(g.target)
                                  if isinstance(n, ast.Name)}
        bound |= {n.target.id for n in ast.walk(loop) if isinstance(n, ast.NamedExpr)}  # type: ignore[operator]
    else:
        bound = bound_names(loop)
    if bound is None:
        return True
    reads = free_names(call) - index.module_names
    return bool(reads & bound)


def _jitted_names(index: SourceIndex, loop: ast.AST) -> set[str]:
    """Names bound to a jitted function: the file's jitted targets, and ``g = jax.jit(...)``
    assignments outside ``loop``."""
    names = {t.bound_name or t.name for t in index.targets if t.kind in ("jit-decorated", "jit-bound")}
    inside = {id(n) for n in ast.walk(loop)}
    for call in index.calls:
        statement = index.parent(call)
        if (id(call) not in inside and isinstance(statement, ast.Assign) and statement.value is call
                and "jax.jit" in index.call_names(call)):
            names |= {t.id for t in statement.targets if isinstance(t, ast.Name)}
    return names


def _changed(index: SourceIndex, call: ast.Call, loops: list[ast.AST]) -> str:
    """How a loop around ``call`` changes, or may change, in place an object the call reads."""
    reads = free_names(call) - index.module_names
    jitted = {t.bound_name or t.name for t in index.targets if t.kind in ("jit-decorated", "jit-bound")}
    for loop in loops:
        changes = in_place_changes(index, loop, reads, call, jitted)
        for change in sorted(changes.values(), key=lambda c: (not c.certain, c.line)):
            verb = "changes" if change.certain else "may change"
            return f"the loop {verb} `{change.name}` in place (line {change.line} {change.how})"
    return ""
