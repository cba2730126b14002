"""JX203's loops over configurations: ``for output_fields in (["means", "covs"], ["covs"]):`` with
``jax.jit(lambda y: filter(y, output_fields))`` in the body (dynamax's tests). Each iteration
passes the jitted function another configuration (a list of names, a string, a shape, a dtype, a
function), and a configuration is static: it needs a compile of its own whether the jitted function
is made in the loop or once before it, and passing it as an argument instead raises (a list of
strings is no JAX type). Such a loop is left alone.

What the rule sees decides: a ``for`` loop (or a comprehension's ``for``) over a literal display of
items, not all of them numbers (numbers are values jit can trace: ``for k in (1, 2, 3)`` stays a
hazard), or over a name bound once, to such a display, in the function or the module
(``CONFIGS = [...]``), whose target the jitted function reads.
"""
from __future__ import annotations

import ast

from jaxlint.scan.index import COMPREHENSIONS, DEFS, free_names, walk_scope

DISPLAYS = (ast.Tuple, ast.List, ast.Set)


def _number(node: ast.expr) -> bool:
    if isinstance(node, ast.UnaryOp) and isinstance(node.op, (ast.USub, ast.UAdd)):
        node = node.operand
    return (isinstance(node, ast.Constant) and isinstance(node.value, (int, float, complex))
            and not isinstance(node.value, bool))


def _configurations(iterable: ast.expr, places: list[ast.AST]) -> bool:
    """A literal display whose items are not all numbers, or a name ``places`` (the function
    around the loop, the module) bind once, to such a display."""
    if isinstance(iterable, ast.Name):
        iterable = _bound_display(iterable.id, places)
    return isinstance(iterable, DISPLAYS) and bool(iterable.elts) and not all(_number(e) for e in iterable.elts)


def _bound_display(name: str, places: list[ast.AST]) -> ast.expr | None:
    """The display ``name = [...]`` binds, when that is the name's only binding in the first of
    ``places`` that binds it at all (a parameter, a loop target, an import: None)."""
    for place in places:
        if isinstance(place, (*DEFS, ast.Lambda)) and name in {a.arg for a in ast.walk(place.args)
                                                               if isinstance(a, ast.arg)}:
            return None
        statements = place.body if isinstance(place, (*DEFS, ast.Module)) else []
        nodes = [node for statement in statements for node in walk_scope(statement)]
        binders = [node for node in nodes if (isinstance(node, ast.Name) and node.id == name
                                              and isinstance(node.ctx, (ast.Store, ast.Del)))
                   or (isinstance(node, (ast.Import, ast.ImportFrom))
                       and any((a.asname or a.name.split(".")[0]) == name for a in node.names))
                   or (isinstance(node, (*DEFS, ast.ClassDef)) and node.name == name)]
        if not binders:
            continue
        assigned = [node for node in nodes if isinstance(node, ast.Assign) and len(node.targets) == 1
                    and isinstance(node.targets[0], ast.Name) and node.targets[0].id == name]
        return assigned[0].value if len(binders) == 1 and len(assigned) == 1 else None
    return None


def _targets(target: ast.expr) -> set[str]:
    return {n.id for n in ast.walk(target) if isinstance(n, ast.Name)}


def configuration_names(loop: ast.AST, places: list[ast.AST]) -> set[str] | None:
    """The names ``loop`` binds to configurations, or None when it is no loop over configurations
    (a ``while``, a ``range``, numbers, an iterable jaxlint cannot see)."""
    if isinstance(loop, (ast.For, ast.AsyncFor)):
        return _targets(loop.target) if _configurations(loop.iter, places) else None
    if isinstance(loop, COMPREHENSIONS):
        if all(_configurations(g.iter, places) for g in loop.generators):
            return {name for g in loop.generators for name in _targets(g.target)}
    return None


def reads(function: ast.AST, loops: list[ast.AST]) -> set[str]:
    """The names the jitted function reads from outside itself: a lambda's or a call's free names,
    a def's (decorated, or named in ``jax.jit(name)`` and defined in one of ``loops``)."""
    if isinstance(function, (ast.Lambda, ast.Call)):
        return free_names(function)
    if isinstance(function, DEFS):
        return _def_reads(function)
    if isinstance(function, ast.Name):
        for loop in loops:
            for node in ([] if isinstance(loop, COMPREHENSIONS) else walk_scope(loop)):
                if isinstance(node, DEFS) and node.name == function.id:
                    return _def_reads(node)
                if isinstance(node, ast.Assign) and any(isinstance(t, ast.Name) and t.id == function.id
                                                        for t in node.targets):
                    return free_names(node.value)
    return set()


def _def_reads(function: ast.FunctionDef | ast.AsyncFunctionDef) -> set[str]:
    """The names a def's body reads, its parameters excepted."""
    a = function.args
    params = {p.arg for p in (*a.posonlyargs, *a.args, *a.kwonlyargs, a.vararg, a.kwarg) if p is not None}
    return {n.id for s in function.body for n in ast.walk(s) if isinstance(n, ast.Name)} - params


def over_configurations(function: ast.AST, loops: list[ast.AST], scope: ast.AST | None, module: ast.AST) -> bool:
    """Every loop around the jitted function runs over configurations, and the function reads
    what one of them binds: one compile per configuration is what the code asks for. ``scope``:
    the function the loops are in (None or the module at module level)."""
    places = [place for place in (scope, module) if place is not None]
    names: set[str] = set()
    for loop in loops:
        bound = configuration_names(loop, places)
        if bound is None:
            return False
        names |= bound
    return bool(names & reads(function, loops))
