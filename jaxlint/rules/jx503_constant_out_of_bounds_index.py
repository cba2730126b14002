"""JX503 constant-out-of-bounds-index: a constant index past the end of its axis, clamped or dropped.

JAX never raises for these: `x[7]` on a length-5 axis becomes a `dynamic_slice` (or, on older JAX,
a `gather`) whose start XLA clamps to 4, and `x.at[9].set(v)` a `scatter` in FILL_OR_DROP mode
that drops the update. The index is computed from literals only, so the rule folds it with NumPy.
"""
from __future__ import annotations

import ast
from typing import Any, Iterable

from jaxlint.ir import Op, Value
from jaxlint.model import Finding
from jaxlint.rules.base import ProgramContext, Rule
from jaxlint.scan.index import int_literal

_MAX_ELEMENTS = 1024  # larger constant index arrays are not folded
_MAX_OPS = 32


def _fold_op(np: Any, prim: str, params: dict, args: list) -> Any:
    """NumPy for the ops jnp puts between a literal index and the indexing op (None: unknown)."""
    if prim in ("add", "sub", "mul", "lt", "le", "gt", "ge", "eq", "ne", "max", "min"):
        fn = {"add": np.add, "sub": np.subtract, "mul": np.multiply, "lt": np.less,
              "le": np.less_equal, "gt": np.greater, "ge": np.greater_equal, "eq": np.equal,
              "ne": np.not_equal, "max": np.maximum, "min": np.minimum}[prim]
        return fn(args[0], args[1])
    if prim == "neg":
        return -args[0]
    if prim == "select_n":
        return np.choose(np.asarray(args[0]).astype(np.int64), args[1:]) if len(args) > 2 \
            else args[1]
    if prim == "convert_element_type":
        return np.asarray(args[0]).astype(np.dtype(params["new_dtype"]))
    if prim == "broadcast_in_dim":
        shape, dims = tuple(params["shape"]), tuple(params["broadcast_dimensions"])
        operand = np.asarray(args[0])
        expanded = operand.reshape([operand.shape[dims.index(d)] if d in dims else 1
                                    for d in range(len(shape))])
        return np.broadcast_to(expanded, shape)
    if prim == "reshape":
        return np.reshape(args[0], tuple(params["new_sizes"]))
    if prim == "squeeze":
        return np.squeeze(args[0], axis=tuple(params["dimensions"]))
    if prim == "expand_dims":
        return np.expand_dims(args[0], axis=tuple(params["dimensions"]))
    if prim == "concatenate":
        return np.concatenate([np.asarray(a) for a in args], axis=params["dimension"])
    if prim in ("device_put", "copy", "copy_p"):
        return args[0]
    return None


def _fold(value: Value) -> tuple[Any, list[int]] | None:
    """The value of ``value`` when it is computed from literals alone, and the integer literals used."""
    import numpy as np  # lazily: rule modules are imported without JAX or NumPy work

    results: dict[int, Any] = {}
    literals: list[int] = []
    ops = 0

    def visit(current: Value) -> Any:
        nonlocal ops
        if id(current) in results:
            return results[id(current)]
        if current.literal is not None:
            result = np.asarray(current.literal)
            if result.dtype.kind in "iu" and result.size == 1:
                literals.append(int(result.reshape(())))
        else:
            producer = current.producer
            ops += 1
            if producer is None or producer.regions or ops > _MAX_OPS:
                return None  # an input, a closed-over array (no value here), or control flow
            args = [visit(v) for v in producer.inputs]
            if any(a is None for a in args):
                return None
            result = _fold_op(np, producer.primitive, producer.params, args)
            if result is None or len(producer.outputs) != 1:
                return None
            result = np.asarray(result)
        if result.size > _MAX_ELEMENTS:
            return None
        results[id(current)] = result
        return result

    try:
        folded = visit(value)
    except Exception:  # noqa: BLE001 - an op form the folder does not model
        return None
    return None if folded is None else (folded, literals)


def _int_dim(dim: Any) -> int | None:
    return dim if isinstance(dim, int) else None


def _message_index(value: int, length: int, literals: list[int]) -> int:
    """The index as written: jnp wraps a negative index by adding the length before the op."""
    return value - length if value < 0 and (value - length) in literals else value


class ConstantOutOfBoundsIndex(Rule):
    code = "JX503"
    name = "constant-out-of-bounds-index"
    summary = "A constant index outside its axis: JAX silently clamps the read or drops the write."
    severity = "error"

    @classmethod
    def check_program(cls, ctx: ProgramContext) -> Iterable[Finding]:
        for op in ctx.ops_here():
            check = _CHECKS.get("scatter" if op.primitive.startswith("scatter") else op.primitive)
            if check is None:
                continue
            written = _written_index(ctx, op)
            message = None if written is None else check(op, written)
            if message is not None:
                yield ctx.finding(cls, message, op.location.span)


# Calls whose own semantics are the indexing: `.at[i].<method>(...)` and lax's dynamic slicing.
_AT_METHODS = frozenset({"set", "add", "multiply", "mul", "divide", "power", "min", "max", "get", "apply"})
_LAX_CALLS = frozenset({"dynamic_slice", "dynamic_slice_in_dim", "dynamic_index_in_dim",
                        "dynamic_update_slice", "dynamic_update_slice_in_dim",
                        "dynamic_update_index_in_dim"})


def _written_index(ctx: ProgramContext, op: Op) -> list[int] | None:
    """The integer literals of the indexing written at the op's location, or None when the location
    is not an indexing expression (a library function's internals) or passes an explicit ``mode=``:
    a mode the user chose is deliberate."""
    assert op.location is not None  # check_program passes located ops only
    span = op.location.span
    subscript = ctx.index.node_at(span, ast.Subscript)
    if subscript is None:
        call = ctx.index.node_at(span, ast.Call)
        if call is None or any(k.arg == "mode" for k in call.keywords):
            return None
        func = call.func
        name = ctx.index.callee(call)
        if name in _LAX_CALLS:
            return []
        at = func.value if isinstance(func, ast.Attribute) else None
        if name not in _AT_METHODS or not isinstance(at, ast.Subscript) \
                or not isinstance(at.value, ast.Attribute) or at.value.attr != "at":
            return None
        subscript = at
    parts = subscript.slice.elts if isinstance(subscript.slice, ast.Tuple) else [subscript.slice]
    return [v for v in (int_literal(p) for p in parts) if v is not None]


def _check_slice(op: Op, written: list[int]) -> str | None:
    import numpy as np

    operand = op.inputs[0]
    first = 1 if op.primitive == "dynamic_slice" else 2
    sizes = op.params["slice_sizes"] if op.primitive == "dynamic_slice" else op.inputs[1].shape
    for axis, (start, size) in enumerate(zip(op.inputs[first:], sizes)):
        length, size = _int_dim(operand.shape[axis]), _int_dim(size)
        folded = _fold(start)
        if length is None or size is None or folded is None or np.asarray(folded[0]).size != 1:
            continue
        value = int(np.asarray(folded[0]).reshape(()))
        if 0 <= value <= length - size:
            continue
        clamped = min(max(value, 0), length - size)
        shown = _message_index(value, length, folded[1] + written)
        what = "reads" if op.primitive == "dynamic_slice" else "writes"
        if size == 1:
            return (f"constant index {shown} is out of bounds for axis {axis} of length {length} "
                    f"(shape {tuple(operand.shape)}): JAX does not raise; `{op.primitive}` clamps the "
                    f"index and silently {what} position {clamped} instead.")
        return (f"constant start {shown} of a size-{size} window is out of bounds for axis {axis} of "
                f"length {length} (shape {tuple(operand.shape)}): JAX does not raise; "
                f"`{op.primitive}` clamps the start and silently {what} positions "
                f"{clamped}..{clamped + size - 1} instead.")
    return None


def _rows(op: Op, index_value: Any, map_dims: tuple) -> Any | None:
    """The index array as (n, len(map_dims)) rows (JAX puts the index vector last)."""
    import numpy as np

    array = np.asarray(index_value)
    if array.ndim == 0 or array.shape[-1] != len(map_dims):
        return None
    return array.reshape(-1, len(map_dims)).astype(np.int64)


def _mode_name(op: Op) -> str:
    return str(getattr(op.params.get("mode"), "name", op.params.get("mode")))


def _check_gather(op: Op, written: list[int]) -> str | None:
    # FILL_OR_DROP gathers (`jnp.take`'s default, `.at[].get(mode="fill")`) return the documented
    # fill value: only clamping gathers (PROMISE_IN_BOUNDS, CLIP) are silent.
    if "FILL_OR_DROP" in _mode_name(op) or tuple(getattr(op.params["dimension_numbers"],
                                                         "operand_batching_dims", ())):
        return None
    numbers, sizes = op.params["dimension_numbers"], op.params["slice_sizes"]
    operand = op.inputs[0]
    folded = _fold(op.inputs[1])
    if folded is None:
        return None
    rows = _rows(op, folded[0], tuple(numbers.start_index_map))
    if rows is None:
        return None
    for column, axis in enumerate(numbers.start_index_map):
        length, size = _int_dim(operand.shape[axis]), _int_dim(sizes[axis])
        if length is None or size is None:
            continue
        for value in rows[:, column].tolist():
            if 0 <= value <= length - size:
                continue
            clamped = min(max(value, 0), length - size)
            shown = _message_index(value, length, folded[1] + written)
            return (f"constant index {shown} is out of bounds for axis {axis} of length {length} "
                    f"(shape {tuple(operand.shape)}): JAX does not raise; the `gather` clamps the "
                    f"index and silently reads position {clamped} instead.")
    return None


def _check_scatter(op: Op, written: list[int]) -> str | None:
    # The default of `.at[...].set/add/...` drops out-of-bounds updates (FILL_OR_DROP).
    if "FILL_OR_DROP" not in _mode_name(op):
        return None
    numbers = op.params["dimension_numbers"]
    map_dims = tuple(numbers.scatter_dims_to_operand_dims)
    # Only point updates on the indexed axes (`.at[9]`, `.at[1, 9]`): each covers one position.
    if not set(map_dims) <= set(numbers.inserted_window_dims) \
            or tuple(getattr(numbers, "operand_batching_dims", ())):
        return None
    operand = op.inputs[0]
    folded = _fold(op.inputs[1])
    if folded is None:
        return None
    rows = _rows(op, folded[0], map_dims)
    if rows is None:
        return None
    for column, axis in enumerate(map_dims):
        length = _int_dim(operand.shape[axis])
        if length is None:
            continue
        for value in rows[:, column].tolist():
            if 0 <= value < length:
                continue
            shown = _message_index(value, length, folded[1] + written)
            return (f"constant index {shown} is out of bounds for axis {axis} of length {length} "
                    f"(shape {tuple(operand.shape)}): JAX does not raise; the `{op.primitive}` "
                    "silently drops the update and returns the array unchanged there.")
    return None


# Table-driven by primitive: each check returns the message for an out-of-bounds constant index.
_CHECKS = {"dynamic_slice": _check_slice, "dynamic_update_slice": _check_slice,
           "gather": _check_gather, "scatter": _check_scatter}
