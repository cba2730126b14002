"""JX501's masked sum: ``s = sum(where(n > 0, p, 0))``, then ``where(n > 0, p * q / s, 0)``.

The denominator is a sum over the very entries the outer where keeps (a ``where`` of the same
test with 0 elsewhere, or the count of the test's true entries): where the where keeps none, ``s``
is 0, the where discards the quotient, and its derivative (1 / s, or -p * q / s ** 2) is infinite
there: the where's zero cotangent times it is NaN. Only that point is claimed; a sum that is 0 for
other reasons (entries cancelling) is not. Read from the jaxpr: naming ``s`` or the mask changes
nothing.
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
    summed = strip(total.inputs[0], keep_kind=False)
    if not (patterns.differentiable(div.inputs[0]) or patterns.differentiable(div.inputs[1])):
        return None
    if case == 2 and same_test(summed, select.inputs[0]):
        return denominator  # sum(mask): the count of the kept entries
    inner = summed.producer
    if inner is None or inner.primitive != "select_n" or len(inner.inputs) != 3:
        return None
    # The inner where gives 0 exactly where the outer one discards the quotient.
    if scalar(inner.inputs[3 - case]) == 0.0 and same_test(inner.inputs[0], select.inputs[0]):
        return denominator
    return None
