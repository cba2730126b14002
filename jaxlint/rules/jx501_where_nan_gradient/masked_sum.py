"""JX501's masked sum: ``s = sum(where(n > 0, p, 0))``, then ``where(n > 0, p * q / s, 0)``.

The denominator is a sum over the very entries the outer where keeps (a ``where`` of the same
test with 0 elsewhere, the count of the test's true entries, or a product with the mask,
``sum(mask * p)``): where the where keeps none, ``s`` is 0, the where discards the quotient, and
its derivative (1 / s, or -p * q / s ** 2) is infinite there: the where's zero cotangent times it
is NaN. Only that point is claimed; a sum that is 0 for other reasons (entries cancelling) is not.
Read from the jaxpr: naming ``s`` or the mask changes nothing.
"""
from __future__ import annotations

from jaxlint.ir import Op, Value, patterns
from jaxlint.rules.jx501_where_nan_gradient.predicate import same_test
from jaxlint.rules.jx501_where_nan_gradient.unsafe_ops import scalar, strip


def masked_denominator(select: Op, case: int, div: Op) -> Value | None:
    """The denominator of ``div`` (which feeds case ``case`` of ``select``) when it is 0 wherever
    ``select`` picks its other case for every entry; None otherwise."""
    denominator = strip(div.inputs[1], keep_kind=False)
    total = denominator.producer
    if total is None or total.primitive != "reduce_sum":
        return None
    if not (patterns.differentiable(div.inputs[0]) or patterns.differentiable(div.inputs[1])):
        return None
    return denominator if _zero_where_discarded(total.inputs[0], select, case) else None


def _zero_where_discarded(value: Value, select: Op, case: int, depth: int = 4) -> bool:
    """``value`` is 0 wherever ``select`` picks its other case: the mask itself (``sum(mask)``, the
    count of the kept entries), a where of the same test with 0 there, or a product with one of
    those as a factor (``sum(mask * p)``, ``sum(p * mask)``, the mask a bool or cast to a float)."""
    value = strip(value, keep_kind=False)
    test, op = select.inputs[0], value.producer
    if case == 2 and same_test(value, test):
        return True
    if op is None or depth == 0:
        return False
    if case == 1 and op.primitive == "not" and same_test(op.inputs[0], test):
        return True
    if op.primitive == "select_n" and len(op.inputs) == 3:
        return scalar(op.inputs[3 - case]) == 0.0 and same_test(op.inputs[0], test)
    if op.primitive == "mul":
        return any(_zero_where_discarded(factor, select, case, depth - 1) for factor in op.inputs)
    return False
