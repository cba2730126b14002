"""Per-parameter rank floors for inferred arguments (issue 48): the rank one parameter needs where
the ladder (inferred.py) gives every array parameter the same rank on a rung, read before any
trace from the body's AST (``floors``, merged into inferred.ranks_used, so functions, methods,
closures and constructors all take them):

  =================================================================  ====================
  use in the body                                                    rank at least
  =================================================================  ====================
  mapped by vmap or pmap: ``jax.vmap(f)(p)``, ``vmap(f, in_axes=(0,  the mapped axis + 1
  None))(p, q)``, ``g = jax.vmap(f, in_axes=1); g(p)``
  an axis counted from the end: ``p.shape[-2]``                      2
  reduced or moved along an axis: ``jnp.sum(p, axis=1)``,            the axis + 1 (``-k``:
  ``p.mean(-1)``, ``jnp.concatenate([p, q], axis=1)``                k)
  a matrix product's operand: ``jnp.matmul(p, q)`` (not ``dot``,     1
  ``vdot``, ``inner``: they take scalars, whose rung then traces)
  a matrix: ``jnp.linalg.inv(p)``, ``cholesky``, ``jnp.trace(p)``    2
  sized: ``len(p)``                                                  1
  =================================================================  ====================

  (``p @ q``, ``p.T``, ``p.shape[1]``, ``p[:, 0]`` and ``n, d = p.shape`` are inferred.py's own.)
  A floor past inferred.MAX_BODY_RANK is not taken: the ladder keeps its rungs.

The error-driven retry of a rung, where the AST says nothing, is rank_retry.py's.
"""
from __future__ import annotations

import ast
from typing import Any

MAX_FLOOR = 4  # inferred.MAX_BODY_RANK: a floor past it is not taken
_MAPS = ("vmap", "pmap")
_AXIS_CALLS = frozenset({
    "sum", "mean", "max", "min", "prod", "std", "var", "argmax", "argmin", "any", "all", "cumsum", "cumprod",
    "logsumexp", "median", "sort", "argsort", "flip", "nansum", "nanmean", "nanmax", "nanmin", "average",
    "softmax", "log_softmax", "norm", "diff", "concatenate", "cumulative_sum", "amax", "amin", "ptp",
})
_POSITIONAL_AXIS = frozenset({"sum", "mean", "max", "min", "prod", "std", "var", "argmax", "argmin", "any", "all",
                              "cumsum", "cumprod", "logsumexp", "median", "nansum", "nanmean", "amax", "amin"})
_PRODUCTS = frozenset({"matmul"})  # dot, vdot and inner take a scalar: a floor would drop a rung that traces
_MATRICES = frozenset({"inv", "det", "slogdet", "cholesky", "eigh", "eigvalsh", "qr", "svd", "pinv", "trace",
                       "diagonal", "matrix_power", "solve_triangular"})


def floors(definition: ast.AST | None, params: set[str]) -> dict[str, int]:
    """Least rank per parameter (or ``self.<field>``) from the table above; ``params``: the
    definition's parameter names."""
    if not isinstance(definition, (ast.FunctionDef, ast.AsyncFunctionDef)):
        return {}
    found: dict[str, int] = {}

    def at_least(node: ast.AST, rank: int) -> None:
        name = _named(node)
        if name is not None and (name in params or name.startswith("self.")) and 0 < rank <= MAX_FLOOR:
            found[name] = max(found.get(name, 0), rank)

    mapped = _mapped_locals(definition)
    for node in ast.walk(definition):
        if isinstance(node, ast.Call):
            _call_floors(node, mapped, at_least)
        elif isinstance(node, ast.Subscript) and _is_shape(node.value) and _int(node.slice) is not None \
                and _int(node.slice) < 0:  # type: ignore[operator]
            at_least(node.value.value, -_int(node.slice))  # type: ignore[attr-defined,operator]
    return found


def _call_floors(call: ast.Call, mapped: dict[str, Any], at_least: Any) -> None:
    """The floors one call gives its arguments."""
    axes = _map_axes(call.func, mapped)
    if axes is not None:
        for position, arg in enumerate(call.args):
            axis = axes[position] if isinstance(axes, list) and position < len(axes) else \
                None if isinstance(axes, list) else axes
            if isinstance(axis, int) and axis >= 0:
                at_least(arg, axis + 1)
        return
    callee = _callee(call)
    if callee == "len" and isinstance(call.func, ast.Name) and len(call.args) == 1:
        at_least(call.args[0], 1)
    elif callee in _PRODUCTS and _by_module(call):  # ``jnp.matmul(p, q)``, not ``self.matmul(x)``
        for arg in call.args[:2]:
            at_least(arg, 1)
    elif callee in _MATRICES and call.args and _by_module(call):
        at_least(call.args[0], 2)
    elif callee in _AXIS_CALLS:
        _axis_floors(call, callee, at_least)


def _axis_floors(call: ast.Call, callee: str, at_least: Any) -> None:
    """``jnp.sum(p, axis=1)``, ``p.sum(1)``, ``jnp.concatenate([p, q], axis=-1)``: the axis's rank."""
    by_module = _by_module(call)
    operand = (call.args[0] if call.args else None) if by_module else call.func.value  # type: ignore[attr-defined]
    axis = next((k.value for k in call.keywords if k.arg == "axis"), None)
    if axis is None and callee in _POSITIONAL_AXIS:
        rest = call.args[1:] if by_module else call.args
        axis = rest[0] if rest else None
    ranks = [a + 1 if a >= 0 else -a for a in _ints(axis)]
    if operand is None or not ranks:
        return
    for item in operand.elts if isinstance(operand, (ast.List, ast.Tuple)) else [operand]:
        at_least(item, max(ranks))


def _map_axes(func: ast.AST, mapped: dict[str, Any]) -> Any:
    """The in_axes of a vmap'd function being called (an int, or a list of int/None per argument),
    or None when ``func`` is not one."""
    if isinstance(func, ast.Name) and func.id in mapped:
        return mapped[func.id]
    return _axes_of(func) if isinstance(func, ast.Call) else None


def _axes_of(call: ast.Call) -> Any:
    """``jax.vmap(f, in_axes=...)``'s in_axes (0 by default); None for any other call or an
    in_axes jaxlint cannot read (a variable, a dict)."""
    if _callee(call) not in _MAPS:
        return None
    axes: Any = next((k.value for k in call.keywords if k.arg == "in_axes"), None)
    if axes is None and len(call.args) > 1:
        axes = call.args[1]
    if axes is None:
        return 0
    if _int(axes) is not None:
        return _int(axes)
    if isinstance(axes, (ast.Tuple, ast.List)):
        return [_int(item) for item in axes.elts]
    return None


def _mapped_locals(definition: ast.AST) -> dict[str, Any]:
    """Locals assigned once from a vmap'd function (``g = jax.vmap(f, in_axes=(0, None))``): their axes."""
    assigned: dict[str, list[Any]] = {}
    for node in ast.walk(definition):
        if isinstance(node, ast.Assign) and len(node.targets) == 1 and isinstance(node.targets[0], ast.Name):
            axes = _axes_of(node.value) if isinstance(node.value, ast.Call) else None
            assigned.setdefault(node.targets[0].id, []).append(axes)
    return {name: axes[0] for name, axes in assigned.items() if len(axes) == 1 and axes[0] is not None}


def _ints(node: ast.AST | None) -> list[int]:
    if node is None:
        return []
    if isinstance(node, ast.Tuple):
        values = [_int(item) for item in node.elts]
        return [] if None in values else values  # type: ignore[return-value]
    value = _int(node)
    return [] if value is None else [value]


def _int(node: ast.AST) -> int | None:
    """An int literal's value (``-1`` too), else None."""
    if isinstance(node, ast.UnaryOp) and isinstance(node.op, ast.USub):
        inner = _int(node.operand)
        return None if inner is None else -inner
    return node.value if isinstance(node, ast.Constant) and type(node.value) is int else None


def _by_module(call: ast.Call) -> bool:
    """``jnp.sum(p)`` (a module's or a namespace's function), not ``p.sum()``: the callee's
    receiver is a dotted name that is no parameter of ours (``jnp``, ``jax.nn``, ``jnp.linalg``)."""
    func = call.func
    if isinstance(func, ast.Name):
        return True
    base = func.value if isinstance(func, ast.Attribute) else None
    while isinstance(base, ast.Attribute):
        base = base.value
    return isinstance(base, ast.Name) and base.id in ("jnp", "np", "jax", "numpy", "onp", "lax", "nn", "linalg",
                                                      "scipy", "jsp")


def _callee(call: ast.Call) -> str | None:
    func = call.func
    return func.attr if isinstance(func, ast.Attribute) else func.id if isinstance(func, ast.Name) else None


def _named(node: ast.AST) -> str | None:
    """``x`` for a name, ``self.x`` for an attribute of ``self``; None for anything else."""
    if isinstance(node, ast.Name):
        return node.id
    if isinstance(node, ast.Attribute) and isinstance(node.value, ast.Name) and node.value.id == "self":
        return f"self.{node.attr}"
    return None


def _is_shape(node: ast.AST) -> bool:
    return isinstance(node, ast.Attribute) and node.attr == "shape" and _named(node.value) is not None
