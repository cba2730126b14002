"""Per-parameter rank floors for inferred arguments (issue 48): what rank, and for an index what
dtype, one parameter needs where the ladder (inferred.py) gives every array parameter the same
rank on a rung. Two readings:

- before any trace, the body's AST (``floors``, merged into inferred.ranks_used, so functions,
  methods, closures and constructors all take them):

  =================================================================  ====================
  use in the body                                                    rank at least
  =================================================================  ====================
  mapped by vmap or pmap: ``jax.vmap(f)(p)``, ``vmap(f, in_axes=(0,  the mapped axis + 1
  None))(p, q)``, ``g = jax.vmap(f, in_axes=1); g(p)``
  an axis counted from the end: ``p.shape[-2]``                      2
  reduced or moved along an axis: ``jnp.sum(p, axis=1)``,            the axis + 1 (``-k``:
  ``p.mean(-1)``, ``jnp.concatenate([p, q], axis=1)``                k)
  a matrix product's operand: ``jnp.dot(p, q)``, ``jnp.matmul``      1
  a matrix: ``jnp.linalg.inv(p)``, ``cholesky``, ``jnp.trace(p)``    2
  sized: ``len(p)``                                                  1
  =================================================================  ====================

  (``p @ q``, ``p.T``, ``p.shape[1]``, ``p[:, 0]`` and ``n, d = p.shape`` are inferred.py's own.)
  A floor past inferred.MAX_BODY_RANK is not taken: the ladder keeps its rungs.

- after a rung fails, the error (``retried``): where a rung's trace fails with an error that says
  an array had too few dimensions (``vmap was requested to map its argument along axis 0``,
  ``axis -1 is out of bounds``, ``Too many indices``, ``must have ndim at least``, ...) or that an
  index was a float (``Indexer must have integer or boolean type``), the failing expression of the
  function's own frame (the traceback's, by its code positions) is read: where the arrays it
  names (a parameter, or a local assigned once from exactly one parameter; for the index error,
  only what its subscripts' indices name) are exactly one parameter's, that parameter gets one
  rank more (or i32 for the index error) and the rung is traced once more. At most one such retry
  per rung; an error that names two parameters, or none, keeps the rung's failure.
"""
from __future__ import annotations

import ast
import dataclasses
import inspect
import re
from typing import Any

from jaxlint.scan.index import first_line
from jaxlint.worker.argsources import ArgumentRequest, ArgumentSet

MAX_FLOOR = 4  # inferred.MAX_BODY_RANK: a floor past it is not taken
_MAPS = ("vmap", "pmap")
_AXIS_CALLS = frozenset({
    "sum", "mean", "max", "min", "prod", "std", "var", "argmax", "argmin", "any", "all", "cumsum", "cumprod",
    "logsumexp", "median", "sort", "argsort", "flip", "nansum", "nanmean", "nanmax", "nanmin", "average",
    "softmax", "log_softmax", "norm", "diff", "concatenate", "cumulative_sum", "amax", "amin", "ptp",
})
_POSITIONAL_AXIS = frozenset({"sum", "mean", "max", "min", "prod", "std", "var", "argmax", "argmin", "any", "all",
                              "cumsum", "cumprod", "logsumexp", "median", "nansum", "nanmean", "amax", "amin"})
_PRODUCTS = frozenset({"dot", "matmul", "vdot", "inner"})
_MATRICES = frozenset({"inv", "det", "slogdet", "cholesky", "eigh", "eigvalsh", "qr", "svd", "pinv", "trace",
                       "diagonal", "matrix_power", "solve_triangular"})
_RANK_ERRORS = re.compile(
    r"vmap was requested to map its argument along axis|is out of bounds for array of dimension"
    r"|must be at least one-dimensional|dim -?\d+ out of range|Too many indices"
    r"|must have ndim at least|not enough values to unpack|iteration over a 0-d array")
_INDEX_ERROR = re.compile(r"Indexer must have integer or boolean type")


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
    elif callee in _PRODUCTS:
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


# The error-driven retry.

def retried(request: ArgumentRequest, arguments: ArgumentSet, error: BaseException, size: Any) -> ArgumentSet | None:
    """``arguments`` with the one parameter ``error`` names raised by a rank (or made i32), or
    None where the error is not one of those or does not name exactly one parameter. ``size``:
    the dimension a raised rank adds."""
    import jax

    index_error = _INDEX_ERROR.search(str(error)) is not None
    if not index_error and _RANK_ERRORS.search(str(error)) is None:
        return None
    definition, code = _definition(request), _code(request.function)
    if definition is None or code is None:
        return None
    span = _failing_span(error, code)
    if span is None:
        return None
    node = _node_at(definition, span)
    if node is None:
        return None
    arrays = {name for name, value in arguments.kwargs.items() if _raisable(value)}
    named = _parameters_named(node, definition, arrays, index_error)
    if len(named) != 1:
        return None
    [name] = named
    value = arguments.kwargs[name]
    if index_error:
        if value.dtype.kind in "iub":
            return None
        raised = jax.ShapeDtypeStruct(value.shape, "int32")
    else:
        if len(value.shape) >= MAX_FLOOR:
            return None
        raised = jax.ShapeDtypeStruct((*value.shape, value.shape[0] if value.shape else size), value.dtype)
    return dataclasses.replace(arguments, kwargs={**arguments.kwargs, name: raised})


def _raisable(value: Any) -> bool:
    """An array the ladder guessed (f32 or i32, not a key, not a Python float's weak scalar)."""
    import jax
    import numpy as np

    return isinstance(value, jax.ShapeDtypeStruct) and isinstance(value.dtype, np.dtype) \
        and value.dtype.kind in "fiu" and not getattr(value, "weak_type", False)


def _definition(request: ArgumentRequest) -> ast.FunctionDef | ast.AsyncFunctionDef | None:
    index = request.index
    if index is None:
        return None
    for node in index.functions:
        if first_line(node) == request.target.first_line and node.name == request.target.name:
            return node
    return None


def _code(function: Any) -> Any:
    """The code object whose frame runs the target's body."""
    function = function.fget if isinstance(function, property) else function
    try:
        return inspect.unwrap(function).__code__
    except (AttributeError, ValueError):
        return None


def _failing_span(error: BaseException, code: Any) -> tuple[int, int, int, int] | None:
    """The positions (line, end line, column, end column) of the instruction the innermost frame
    of ``code`` was running when ``error`` was raised."""
    found = None
    traceback = error.__traceback__
    while traceback is not None:
        frame_code = traceback.tb_frame.f_code
        if frame_code is code or (frame_code.co_filename, frame_code.co_firstlineno, frame_code.co_name) == \
                (code.co_filename, code.co_firstlineno, code.co_name):
            positions = list(frame_code.co_positions())
            at = traceback.tb_lasti // 2
            found = positions[at] if 0 <= at < len(positions) else None
        traceback = traceback.tb_next
    if found is None or None in found:
        return None
    return found


def _node_at(definition: ast.AST, span: tuple[int, int, int, int]) -> ast.AST | None:
    """The expression (or statement) of ``definition`` at exactly ``span``."""
    line, end_line, column, end_column = span
    for node in ast.walk(definition):
        if isinstance(node, (ast.expr, ast.stmt)) and (node.lineno, node.end_lineno, node.col_offset,
                                                       node.end_col_offset) == (line, end_line, column, end_column):
            return node
    return None


def _parameters_named(node: ast.AST, definition: ast.AST, arrays: set[str], index_error: bool) -> set[str]:
    """The array parameters ``node`` names, itself or through a local assigned once from exactly
    one of them; for an index error, only in its subscripts' indices."""
    if index_error:
        parts = [n.slice for n in ast.walk(node) if isinstance(n, ast.Subscript)]
    else:
        parts = [node.value] if isinstance(node, ast.Assign) else [node]
    aliases = _aliases(definition, arrays)
    named = set()
    for part in parts:
        for name in ast.walk(part):
            if isinstance(name, ast.Name) and isinstance(name.ctx, ast.Load):
                named |= {name.id} if name.id in arrays else aliases.get(name.id, set())
    return named


def _aliases(definition: ast.AST, arrays: set[str]) -> dict[str, set[str]]:
    """Locals assigned once, from an expression naming exactly one array parameter: that parameter."""
    assigned: dict[str, list[ast.AST]] = {}
    for node in ast.walk(definition):
        if isinstance(node, (ast.Assign, ast.AugAssign, ast.AnnAssign)):
            for target in node.targets if isinstance(node, ast.Assign) else [node.target]:
                for name in ast.walk(target):
                    if isinstance(name, ast.Name):
                        assigned.setdefault(name.id, []).append(node.value if isinstance(node, ast.Assign)
                                                                and isinstance(target, ast.Name) else None)
    found = {}
    for local, values in assigned.items():
        if local in arrays or len(values) != 1 or values[0] is None:
            continue
        named = {n.id for n in ast.walk(values[0]) if isinstance(n, ast.Name) and n.id in arrays}
        if len(named) == 1:
            found[local] = named
    return found
