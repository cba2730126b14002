"""Whether a reverse-mode gradient can reach a value at all. JAX cannot differentiate a
``while_loop`` in reverse mode (``fori_loop`` with traced bounds is one), and forward mode selects
a where's tangents without multiplying them (no 0 * inf): a guard whose result goes nowhere but
into while loops never makes a NaN gradient. jax_md's ``ccma_apply_positions`` takes
``where(masses > 0, 1.0 / masses, 0.0)`` before the while loop that is its only way to its result:
``jax.grad`` refuses it, ``jax.jacfwd`` gives zeros at a zero mass. A guard inside a while loop's
body is kept: the body may differentiate it itself (a gradient step in the loop).
"""
from __future__ import annotations

from jaxlint.ir import Op, Value, region_links
from jaxlint.ir.patterns import each_once


def reverse_reachable(value: Value) -> bool:
    """False when every way ``value`` takes out of its ops ends in a while loop: no reverse-mode
    gradient flows back into it. A value that reaches an output, ends unused (a program that
    differentiates it itself), or enters control flow whose links are not known, counts as
    reached (the finding is kept)."""
    stack, into_while = [value], False
    for current in each_once(stack):
        if _returned(current, stack):
            return True
        for use in current.uses:
            if use.primitive == "while":
                into_while = True
            elif not use.regions:
                stack.extend(use.outputs)
            elif not _into_regions(use, current, stack):
                return True
    return not into_while


def _returned(value: Value, stack: list[Value]) -> bool:
    """``value`` is an output of the program (True), or of a region whose op's outputs it becomes
    (pushed on ``stack``); True too where those links are not known."""
    region = value.producer.region if value.producer is not None else None
    if region is None or not any(out is value for out in region.outputs):
        return False
    op = region.parent
    if op is None:
        return True
    links = region_links(op, region)
    if links is None:
        return True
    for k, out in enumerate(region.outputs):
        if out is value:
            stack.extend(op.outputs[j] for j in links.results[k][0] if j < len(op.outputs))
    return False


def _into_regions(op: Op, value: Value, stack: list[Value]) -> bool:
    """Push the region inputs ``value`` becomes in ``op``'s bodies; False where a link is unknown."""
    positions = {i for i, operand in enumerate(op.inputs) if operand is value}
    for region in op.regions:
        links = region_links(op, region)
        if links is None:
            return False
        stack.extend(region.inputs[k] for k, p in enumerate(links.operands) if p in positions)
    return True
