"""JX502 dtype-widening: a float value widened by a strongly typed (NumPy) constant operand."""
from __future__ import annotations

import ast
from typing import Any, Iterable

from jaxlint.ir import Op, Value, costs
from jaxlint.ir.primitives import BINARY_ARITHMETIC, SHAPE_ONLY
from jaxlint.model import Edit, Finding, Fix
from jaxlint.rules.base import ProgramContext, Rule

# Operand sides whose text can be followed by `.astype(...)` without parentheses.
_PRIMARY = (ast.Name, ast.Attribute, ast.Call, ast.Subscript)


class DtypeWidening(Rule):
    code = "JX502"
    name = "dtype-widening"
    summary = "A float value silently widened by a NumPy constant or array of a wider dtype."
    severity = "warning"
    fix = "display-only"

    @classmethod
    def check_program(cls, ctx: ProgramContext) -> Iterable[Finding]:
        for op in ctx.ops_here(*BINARY_ARITHMETIC):
            if len(op.inputs) != 2:
                continue
            sides = (_check_side(cls, ctx, op, side) for side in (0, 1))
            finding = next((f for f in sides if f is not None), None)  # one finding per op
            if finding is not None:
                yield finding


# ml_dtypes' bfloat16 is not a NumPy floating subtype: name the widenable dtypes.
_FLOATS = frozenset({"bfloat16", "float16", "float32", "float64"})


def _is_float(dtype: Any) -> bool:
    return getattr(dtype, "name", None) in _FLOATS


def _strong_constant(value: Value) -> Value | None:
    """The constant behind ``value`` when it is a non-weak literal or a closed-over array."""
    if value.literal is not None:
        return None if getattr(value.aval, "weak_type", False) else value
    while not value.const:
        producer = value.producer
        if producer is None or producer.primitive not in SHAPE_ONLY or len(producer.inputs) != 1:
            return None
        value = producer.inputs[0]
    return value


def _check_side(rule: type[Rule], ctx: ProgramContext, op: Op, side: int) -> Finding | None:
    widened, other = op.inputs[side], op.inputs[1 - side]
    convert = widened.producer
    if convert is None or convert.primitive != "convert_element_type" or len(convert.inputs) != 1:
        return None
    # jnp's implicit promotion sits at the operator's own expression; an explicit
    # `x.astype(jnp.float32)` is located at the astype call instead.
    if convert.location != op.location:
        return None
    source, wide = convert.inputs[0], widened.dtype
    if not (_is_float(source.dtype) and _is_float(wide)) or source.dtype.itemsize >= wide.itemsize:
        return None
    constant = _strong_constant(other)
    if constant is None or constant.dtype != wide:
        return None
    narrow_name, wide_name = _short_dtype(source.dtype), _short_dtype(wide)
    ratio, after = wide.itemsize // source.dtype.itemsize, costs.nbytes(op.outputs[0])
    scale = f"{ratio}x the bytes" + (f" ({after // ratio} -> {after} bytes)" if after is not None else "")
    kind = "scalar" if constant.shape == () else f"array of shape {constant.shape}"
    message = (
        f"`{op.primitive}` widens {_short(source.aval)} to {wide_name}: its other operand is a "
        f"strongly typed {wide_name} constant ({kind}), unlike a Python scalar, so the result "
        f"{_short(op.outputs[0].aval)} and everything computed from it is {wide_name} instead of "
        f"{narrow_name}: {scale}, and slower arithmetic. Cast the constant to the value's dtype.")
    assert op.location is not None  # check_program passes located ops only
    return ctx.finding(rule, message, op.location.span, _fix(ctx, op, side))


def _fix(ctx: ProgramContext, op: Op, side: int) -> Fix | None:
    """Display-only: `x + np.ones(8)` -> `x + np.ones(8).astype(x.dtype)` when the sides are plain."""
    assert op.location is not None  # _check_side passes located ops only
    node = ctx.index.node_at(op.location.span, ast.BinOp)
    if node is None:
        return None
    value_node, constant_node = (node.left, node.right) if side == 0 else (node.right, node.left)
    # The jaxpr operand order follows the source; a plain name on the value side keeps the edit exact.
    if not isinstance(value_node, (ast.Name, ast.Attribute)) or isinstance(constant_node, ast.Constant):
        return None
    text = ctx.index.text(constant_node)
    if not isinstance(constant_node, _PRIMARY):
        text = f"({text})"
    content = f"{text}.astype({ctx.index.text(value_node)}.dtype)"
    return Fix("display-only", f"cast the constant: {content}",
               (Edit(ctx.index.span(constant_node), content),))


def _short_dtype(dtype: Any) -> str:
    name = getattr(dtype, "name", str(dtype))
    return {"float64": "f64", "float32": "f32", "float16": "f16", "bfloat16": "bf16"}.get(name, name)


def _short(aval: Any) -> str:
    """``f32[8]``, as jaxprs print it."""
    try:
        return aval.str_short(short_dtypes=True)
    except Exception:  # an older signature
        return str(aval)
