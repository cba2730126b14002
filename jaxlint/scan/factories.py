"""Factories, from the source alone: a module-level function whose ``return`` hands back functions
defined in its own body (``return init_fn, update_fn``, ``return GradientTransformation(init_fn,
update_fn)``, ``return {"update": update}``, ``return jax.jit(step)``). The JAX functions among
those closures are targets of kind "closure" (engine/targets.py); the worker calls the factory to
get them (worker/closures.py).

A name passed to a JAX function that runs it rather than returning a function (``lax.scan(body,
...)``) is not handed back: the def around it computes, it makes nothing.
"""
from __future__ import annotations

import ast

from jaxlint.scan.index import DEFS, SourceIndex

# JAX calls that return a function made of their argument: a factory may return what they make.
_WRAPPING = frozenset({"jax.jit", "jax.vmap", "jax.pmap", "jax.grad", "jax.value_and_grad", "jax.jacfwd",
                       "jax.jacrev", "jax.hessian", "jax.checkpoint", "jax.remat", "jax.custom_jvp",
                       "jax.custom_vjp", "jax.named_call", "jax.tree_util.Partial"})


def returned_closures(index: SourceIndex) -> dict[str, set[str]]:
    """Module-level function name -> the names of the defs in its own body that it returns."""
    tree = index.tree
    if tree is None:
        return {}
    found: dict[str, set[str]] = {}
    for node in tree.body:
        if not isinstance(node, DEFS):
            continue
        nested, returns = _own_defs_and_returns(node)
        handed = set()
        for statement in returns:
            handed |= _names_handed_back(index, statement.value, nested) if statement.value is not None else set()
        if handed:
            found[node.name] = handed
    return found


def _own_defs_and_returns(function: ast.FunctionDef | ast.AsyncFunctionDef) -> tuple[set[str], list[ast.Return]]:
    """The names of the defs right inside ``function`` and its own return statements (not those
    of the functions and classes nested in it)."""
    names: set[str] = set()
    returns: list[ast.Return] = []
    stack: list[ast.AST] = list(function.body)
    while stack:
        node = stack.pop()
        if isinstance(node, DEFS):
            names.add(node.name)
            continue
        if isinstance(node, (ast.ClassDef, ast.Lambda)):
            continue
        if isinstance(node, ast.Return):
            returns.append(node)
        stack.extend(ast.iter_child_nodes(node))
    return names, returns


def _names_handed_back(index: SourceIndex, value: ast.expr, nested: set[str]) -> set[str]:
    """The nested defs' names the returned expression holds: itself, in a tuple, list or dict
    display, or as an argument of a call that is not a JAX function running it."""
    if isinstance(value, ast.Name):
        return {value.id} & nested
    if isinstance(value, (ast.Tuple, ast.List)):
        return {name for item in value.elts for name in _names_handed_back(index, item, nested)}
    if isinstance(value, ast.Dict):
        return {name for item in value.values for name in _names_handed_back(index, item, nested)}
    if isinstance(value, ast.Starred):
        return _names_handed_back(index, value.value, nested)
    if isinstance(value, ast.Call):
        called = index.call_names(value)
        if any(name.startswith("jax.") for name in called) and not called & _WRAPPING:
            return set()
        arguments = [*value.args, *(keyword.value for keyword in value.keywords)]
        return {name for item in arguments for name in _names_handed_back(index, item, nested)}
    return set()
