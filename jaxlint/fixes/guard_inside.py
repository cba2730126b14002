"""The JX501 rewrite of a clamp after log or sqrt: move the clamp onto the input.

``jnp.clip(jnp.log(p), c)`` -> ``jnp.log(jnp.clip(p, jnp.exp(c)))``, and
``jnp.maximum(jnp.sqrt(x), c)`` -> ``jnp.sqrt(jnp.maximum(x, c ** 2))``. Where nothing is clamped
the value is the same; where something is, it is ``log(exp(c))`` for ``c``, equal up to rounding
(or, when ``exp(c)`` is below the dtype's smallest normal number, as for a bound of
``finfo.min``, the input is clamped to that smallest normal and the clamped value becomes its
log, -87.3 in float32, instead of ``c``). The gradient at the clamped elements goes from NaN (at
the singular point) or 0 to 0. Offered as "unsafe": values can change.
"""
from __future__ import annotations

import ast
import math

from jaxlint.fixes.ast_spans import node_span, node_text
from jaxlint.model import Edit, Fix

_SMALLEST_NORMAL_FLOAT32 = 1.1754943508222875e-38
_SIMPLE = (ast.Name, ast.Attribute, ast.Call, ast.Subscript, ast.Constant)


def _lower_bound(guard: ast.Call, name: str, operand: ast.Call) -> ast.expr | None:
    """The lower bound of ``clip(operand, lo)`` or ``maximum(operand, lo)`` (either order), when
    it is the guard's only bound; None for any other spelling."""
    if name == "maximum" and len(guard.args) == 2 and not guard.keywords:
        first, second = guard.args
        return second if first is operand else first if second is operand else None
    if name != "clip" or not guard.args or guard.args[0] is not operand:
        return None
    bounds = list(guard.args[1:]) + [k.value for k in guard.keywords]
    names = [k.arg for k in guard.keywords]
    upper = (len(guard.args) > 2 and not _is_none(guard.args[2])) or any(
        n in ("max", "a_max") and not _is_none(k.value) for n, k in zip(names, guard.keywords))
    if upper or any(n not in ("min", "a_min", "max", "a_max") for n in names):
        return None
    lower = [b for b in bounds if not _is_none(b)]
    return lower[0] if len(lower) == 1 else None


def _is_none(node: ast.expr) -> bool:
    return isinstance(node, ast.Constant) and node.value is None


def _wrapped(source: str, node: ast.expr) -> str:
    text = node_text(source, node)
    return text if isinstance(node, _SIMPLE) else f"({text})"


def move_guard_inside(source: str, guard: ast.Call, guard_name: str, unsafe: ast.Call, unsafe_name: str,
                      bound: float) -> Fix | None:
    """The edit replacing ``guard`` by the unsafe call of the clamped input, or None when the
    guard is not a plain lower clamp of ``log(x)`` or ``sqrt(x)`` by a constant of the same module."""
    if unsafe_name not in ("log", "sqrt") or len(unsafe.args) != 1 or unsafe.keywords \
            or not isinstance(unsafe.func, ast.Attribute) or not isinstance(guard.func, ast.Attribute):
        return None
    prefix = node_text(source, unsafe.func.value)
    if node_text(source, guard.func.value) != prefix or isinstance(unsafe.args[0], ast.Starred):
        return None
    lower = _lower_bound(guard, guard_name, unsafe)
    if lower is None or isinstance(lower, ast.Starred):
        return None
    x = node_text(source, unsafe.args[0])
    guard_func = node_text(source, guard.func)
    if unsafe_name == "log":
        if math.isfinite(bound) and math.exp(bound) >= _SMALLEST_NORMAL_FLOAT32:
            inner, change = f"{prefix}.exp({node_text(source, lower)})", "log(exp(c)), c up to rounding"
        else:
            inner = f"{prefix}.finfo({_wrapped(source, unsafe.args[0])}.dtype).tiny"
            change = "the log of the dtype's smallest normal number (-87.3 in float32), not the bound"
    elif bound > 0:
        inner, change = f"{_wrapped(source, lower)} ** 2", "sqrt(c ** 2), c up to rounding"
    else:
        return None
    content = f"{prefix}.{unsafe_name}({guard_func}({x}, {inner}))"
    return Fix(applicability="unsafe",
               message=f"clamp the input instead: the clamped elements become {change}; their gradient "
                       f"is 0, where it was NaN at the singular point",
               edits=(Edit(node_span(source, guard), content),))
