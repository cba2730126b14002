"""The predicate of a where, read from the jaxpr: as a function of the guarded value, and whether
two predicates are the same test. Named or inline, ``mask = x > 0`` is the same ``gt`` of the same
value: nothing here looks at the source.
"""
from __future__ import annotations

import math
import operator
from typing import Callable

from jaxlint.ir import Op, Value
from jaxlint.rules.jx501_where_nan_gradient.unsafe_ops import scalar, strip

COMPARE = {"gt": operator.gt, "lt": operator.lt, "ge": operator.ge, "le": operator.le,
           "eq": operator.eq, "ne": operator.ne}
_SWAPPED = {"gt": "lt", "lt": "gt", "ge": "le", "le": "ge", "eq": "eq", "ne": "ne"}
_LOGIC = ("and", "or", "not")

Test = Callable[[float], "bool | None"]  # None: the other booleans decide


def predicate_of(value: Value, x: Value) -> tuple[Test, list[Op], list[float]] | None:
    """``value`` (a boolean) as a function of x's value, when it is comparisons of x with constants
    joined by and/or/not, some operands possibly other booleans (``(x > 0) & valid``): (the test,
    the comparisons, their constants). The test says True or False where the comparisons decide
    whatever the other booleans are, and None where they do not (three-valued, as Kleene's logic):
    ``(x > 0) & valid`` is False at x = 0, ``(x > 0) | other`` is unknown there. None when no
    operand compares x."""
    found = _three_valued(value, x)
    if found is None or not found[1]:
        return None
    return found


def _three_valued(value: Value, x: Value) -> tuple[Test, list[Op], list[float]] | None:
    """``predicate_of``'s test, an operand that is no comparison of x an unknown (no leaves)."""
    op = strip(value, keep_kind=False).producer
    if op is not None and op.primitive in _LOGIC and _boolean(value):
        parts = [_three_valued(v, x) for v in op.inputs]
        if any(p is None for p in parts):
            return None
        tests = [p[0] for p in parts]  # type: ignore[index]
        leaves = [leaf for p in parts for leaf in p[1]]  # type: ignore[index]
        constants = [c for p in parts for c in p[2]]  # type: ignore[index]
        if op.primitive == "not":
            return (lambda p: _negated(tests[0](p))), leaves, constants
        combine = _all if op.primitive == "and" else _any
        return (lambda p: combine([t(p) for t in tests])), leaves, constants
    compared = _comparison(op, x) if op is not None else None
    if compared is not None:
        return compared
    return ((lambda p: None), [], []) if _boolean(value) else None


def _comparison(op: Op, x: Value) -> tuple[Test, list[Op], list[float]] | None:
    """``op`` as a comparison of x (or abs/neg of it) with a constant, else None."""
    if op.primitive not in COMPARE:
        return None
    name, (left, right) = op.primitive, op.inputs
    constant = scalar(right)
    if constant is None:
        name, left, right, constant = _SWAPPED[name], right, left, scalar(left)
    of_x = _function_of(left, x)
    if constant is None or of_x is None:
        return None
    compare = COMPARE[name]
    return (lambda p: compare(of_x(p), constant)), [op], [constant]


def _boolean(value: Value) -> bool:
    return str(value.dtype) == "bool"


def _negated(known: bool | None) -> bool | None:
    return None if known is None else not known


def _all(known: list[bool | None]) -> bool | None:
    """Kleene's and: False if any operand is False, True if all are True, else unknown."""
    if any(k is False for k in known):
        return False
    return True if all(k is True for k in known) else None


def _any(known: list[bool | None]) -> bool | None:
    if any(k is True for k in known):
        return True
    return False if all(k is False for k in known) else None


def _function_of(value: Value, x: Value) -> Callable[[float], float] | None:
    """``value`` as a function of x: x itself, or abs/neg of it."""
    value = strip(value)
    if value is x:
        return lambda p: p
    op = value.producer
    if op is not None and op.primitive in ("abs", "neg"):
        inner = _function_of(op.inputs[0], x)
        if inner is not None:
            return (lambda p: abs(inner(p))) if op.primitive == "abs" else (lambda p: -inner(p))
    return None


def candidates(constants: list[float]) -> list[float]:
    """Every interval the predicate and the bad sets can distinguish: boundaries, midpoints, beyond."""
    constants = [c for c in constants if math.isfinite(c)]  # x = inf: not worth a finding
    points = sorted({0.0, 1.0, -1.0} | set(constants) | {-c for c in constants})
    between = [(a + b) / 2 for a, b in zip(points, points[1:])] + [points[0] - 1, points[-1] + 1]
    return [0.0, 1.0, -1.0] + sorted(set(points) - {0.0, 1.0, -1.0}, key=abs) + between


def same_test(a: Value, b: Value, depth: int = 4) -> bool:
    """``a`` and ``b`` are the same boolean: one value, or the same comparisons (and/or/not) of the
    same values and constants, computed twice (``n > 0`` written in two places)."""
    a, b = strip(a, keep_kind=False), strip(b, keep_kind=False)
    if a is b:
        return True
    first, second = a.producer, b.producer
    if depth == 0 or first is None or second is None or first.primitive != second.primitive \
            or first.primitive not in (*COMPARE, *_LOGIC) or len(first.inputs) != len(second.inputs):
        return False
    if first.primitive in _LOGIC:
        return all(same_test(u, v, depth - 1) for u, v in zip(first.inputs, second.inputs))
    return all(_same_operand(u, v) for u, v in zip(first.inputs, second.inputs))


def _same_operand(a: Value, b: Value) -> bool:
    constants = scalar(a), scalar(b)
    if constants[0] is not None or constants[1] is not None:
        return constants[0] == constants[1]
    return strip(a) is strip(b)
