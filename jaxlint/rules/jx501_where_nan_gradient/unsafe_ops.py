"""What JX501's two guard shapes share: the operations whose derivative is infinite or NaN at
some inputs (log at 0, sqrt at 0, 1/x at 0, ...), the values those inputs give (what a clip can
clamp away), and how the source spells each operation.

Everything here reads the IR and the source index only; no JAX.
"""
from __future__ import annotations

import ast
import math
from dataclasses import dataclass
from typing import Callable

from jaxlint.ir import Op, Value, patterns
from jaxlint.model import Span
from jaxlint.scan.index import SourceIndex


@dataclass(frozen=True)
class Unsafe:
    names: frozenset[str]  # how the source spells the call (``jnp.log``, ``lax.log``, ...)
    binop: type | None  # or the operator (``1.0 / x``, ``x ** 0.5``)
    arg: int  # the unsafe operand: the primitive's input and the source's argument index
    safe: str  # a value the op is finite and differentiable at: the double where's filler
    bad: Callable[[float, Op], bool]  # where its derivative is infinite or NaN


def scalar(value: Value) -> float | None:
    """The value of a scalar literal (through broadcasts and converts), else None."""
    value = strip(value, keep_kind=False)
    if value.literal is None:
        return None
    try:
        import numpy as np
        array = np.asarray(value.literal)
        return float(array.reshape(())) if array.size == 1 else None
    except (TypeError, ValueError):
        return None


def _pow_bad(p: float, op: Op) -> bool:
    exponent = scalar(op.inputs[1])  # a traced exponent: not judged
    return exponent is not None and (
        (p == 0 and exponent < 1 and exponent != 0) or (p < 0 and not exponent.is_integer()))


UNSAFE: dict[str, Unsafe] = {
    "log": Unsafe(frozenset({"log"}), None, 0, "1.0", lambda p, op: p == 0),
    "log1p": Unsafe(frozenset({"log1p"}), None, 0, "0.0", lambda p, op: p == -1),
    "sqrt": Unsafe(frozenset({"sqrt"}), ast.Pow, 0, "1.0", lambda p, op: p <= 0),
    "rsqrt": Unsafe(frozenset({"rsqrt"}), ast.Pow, 0, "1.0", lambda p, op: p <= 0),
    "cbrt": Unsafe(frozenset({"cbrt"}), None, 0, "1.0", lambda p, op: p == 0),
    "div": Unsafe(frozenset({"divide", "true_divide"}), ast.Div, 1, "1.0", lambda p, op: p == 0),
    "integer_pow": Unsafe(frozenset({"power", "pow", "reciprocal", "integer_pow"}), ast.Pow, 0, "1.0",
                           lambda p, op: p == 0 and op.params.get("y", 0) < 0),
    "pow": Unsafe(frozenset({"power", "pow", "float_power"}), ast.Pow, 0, "1.0", _pow_bad),
    "asin": Unsafe(frozenset({"arcsin", "asin"}), None, 0, "0.0", lambda p, op: abs(p) >= 1),
    "acos": Unsafe(frozenset({"arccos", "acos"}), None, 0, "0.0", lambda p, op: abs(p) >= 1),
    "atanh": Unsafe(frozenset({"arctanh", "atanh"}), None, 0, "0.0", lambda p, op: abs(p) == 1),
}
# Elementwise ops a cotangent flows back through unchanged in kind (0 stays 0, or becomes NaN), and
# the ops that only move or lay out the numbers (a sharding constraint, a reshard).
PASS = set(UNSAFE) | patterns.TRANSPARENT | {
    "add", "sub", "mul", "neg", "convert_element_type", "broadcast_in_dim", "reshape", "squeeze",
    "copy", "exp", "exp2", "expm1", "sin", "cos", "tan", "tanh", "logistic", "abs", "max", "min",
    "square", "atan", "sinh", "cosh", "asinh", "erf"}

def strip(value: Value, keep_kind: bool = True) -> Value:
    """Through broadcasts, reshapes and float->float converts: the same numbers."""
    while value.producer is not None:
        op = value.producer
        if op.primitive in patterns.TRANSPARENT or (op.primitive == "convert_element_type" and (
                not keep_kind or patterns.inexact(op.inputs[0]) == patterns.inexact(value))):
            value = op.inputs[0]
        else:
            break
    return value



def source_node(index: SourceIndex, span: Span, spec: Unsafe) -> ast.Call | ast.BinOp | None:
    """The call (``jnp.log(x)``) or operator (``1 / x``) of the source the unsafe op comes from."""
    call = index.node_at(span, ast.Call)
    if call is not None and index.callee(call) in spec.names and len(call.args) > spec.arg \
            and not any(isinstance(a, ast.Starred) for a in call.args):
        return call
    binop = index.node_at(span, ast.BinOp)
    if binop is not None and spec.binop is not None and isinstance(binop.op, spec.binop):
        return binop
    return None


def live(value: Value) -> bool:
    """``value`` is used, or returned from its region (a guard whose result is dropped: no gradient)."""
    region = value.producer.region if value.producer is not None else None
    return bool(value.uses) or (region is not None and any(out is value for out in region.outputs))


def singular_values(op: Op) -> list[tuple[float, float]]:
    """(input, value) pairs of an ``UNSAFE`` op at the inputs where its derivative is infinite and
    its value is not NaN: ``log`` gives (0, -inf), ``sqrt`` (0, 0), ``1/x`` (0, inf) and (-0, -inf).
    Empty when the op is not judged (a traced exponent, a zero numerator)."""
    import numpy as np

    name = op.primitive
    if name == "div":
        numerator = scalar(op.inputs[0])
        sign = 1.0 if numerator is None else float(np.sign(numerator))
        return [(0.0, sign * math.inf), (-0.0, -sign * math.inf)] if sign else []
    if name == "integer_pow":
        y = int(op.params.get("y", 0))
        return [(0.0, math.inf), (-0.0, math.inf if y % 2 == 0 else -math.inf)] if y < 0 else []
    if name == "pow":
        exponent = scalar(op.inputs[1])
        if exponent is None or not UNSAFE["pow"].bad(0.0, op):
            return []
        return [(0.0, float(np.power(np.float64(0.0), exponent)))]
    points = {"log": [(0.0, -math.inf)], "log1p": [(-1.0, -math.inf)], "sqrt": [(0.0, 0.0)],
              "rsqrt": [(0.0, math.inf)], "cbrt": [(0.0, 0.0)],
              "asin": [(1.0, math.pi / 2), (-1.0, -math.pi / 2)], "acos": [(1.0, 0.0), (-1.0, math.pi)],
              "atanh": [(1.0, math.inf), (-1.0, -math.inf)]}
    return points.get(name, [])


def spelled_at(index: SourceIndex, op: Op) -> tuple[ast.expr | None, ast.expr | None, bool]:
    """The unsafe op's call or operator in the source, its operand, and whether that is the op's
    own spelling (``jnp.log(x)``, ``1 / x``) rather than a library call of one argument holding it
    (``jnp.log10(x)``: its argument is the operand's likely name, not one a fix may rewrite)."""
    span = op.location.span  # type: ignore[union-attr]
    spec = UNSAFE[op.primitive]
    node = source_node(index, span, spec)
    if isinstance(node, ast.BinOp):
        return node, node.right if spec.arg == 1 else node.left, True
    if node is not None:
        return node, node.args[spec.arg], True
    call = index.node_at(span, ast.Call)
    if call is not None and len(call.args) == 1 and not call.keywords and not isinstance(call.args[0], ast.Starred):
        return call, call.args[0], False
    return call, None, False
