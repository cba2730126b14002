"""Small matchers over the IR that the numerics rules (JX7xx) share: the value an op really reads
(through broadcasts, reshapes and float casts), scalar literals, and whether an ``exp`` input is
shifted by a maximum (the stable form) or bounded by its producer.

Everything here reads the IR only; no JAX.
"""
from __future__ import annotations

from typing import Iterable, Iterator

from jaxlint.ir import Op, Region, Value, primitives, region_links

# Ops that keep the numbers of their operand (only its layout changes).
TRANSPARENT = primitives.SAME_NUMBERS
# Ops a max shift travels through: JAX's own logsumexp/softmax guard the max with max(-inf, m),
# a select on is_finite and stop_gradient.
_SHIFT_PATH = TRANSPARENT | {"stop_gradient", "select_n", "max", "convert_element_type", "transpose"}


def inexact(value: Value) -> bool:
    """A floating or complex value (not an integer, boolean or key)."""
    import numpy as np
    try:
        return value.dtype is not None and bool(np.issubdtype(value.dtype, np.inexact))
    except TypeError:  # extended dtypes (PRNG keys, float0)
        return False


def strip(value: Value) -> Value:
    """``value`` before broadcasts, reshapes and float-to-float casts: the same numbers."""
    while value.producer is not None:
        op = value.producer
        if op.primitive in TRANSPARENT or (
                op.primitive == "convert_element_type" and inexact(op.inputs[0]) and inexact(value)):
            value = op.inputs[0]
        else:
            break
    return value


def produced_by(value: Value, *primitives: str) -> Op | None:
    """The op computing ``value`` (looking through ``strip``) when it is one of ``primitives``."""
    op = strip(value).producer
    return op if op is not None and op.primitive in primitives else None


def scalar(value: Value) -> float | None:
    """The number of a scalar literal or a broadcast of one, else None."""
    value = strip(value)
    if value.literal is None:
        return None
    import numpy as np
    try:
        array = np.asarray(value.literal)
        return float(array.reshape(())) if array.size == 1 and array.dtype.kind in "biuf" else None
    except (TypeError, ValueError):
        return None


def each_once(stack: list[Value]) -> Iterator[Value]:
    """Pop ``stack`` until it is empty, each value once (literals and constants left out): the
    walk up a program's dataflow, whose caller pushes what to visit next onto ``stack``."""
    seen: set[int] = set()
    while stack:
        value = stack.pop()
        if id(value) in seen or value.literal is not None or value.const:
            continue
        seen.add(id(value))
        yield value


def computed_from(value: Value) -> Iterator[Value]:
    """``value`` and every value its producers computed it from, each once; a caller stops
    early by leaving the loop."""
    stack = [value]
    for current in each_once(stack):
        yield current
        if current.producer is not None:
            stack.extend(current.producer.inputs)


def varies(value: Value) -> bool:
    """Whether ``value`` depends on an input of the traced function or of a loop body (a constant
    folded at trace time cannot overflow at run time in a way the user controls)."""
    return any(v.region_input is not None for v in computed_from(value))


def input_positions(value: Value, top: Region) -> set[int] | None:
    """The positions of ``top``'s inputs (the traced function's) that ``value`` depends on,
    through the regions' links (a loop body's input on its operand and on the carry fed back);
    where a region's links are not known, on every operand of its op. None: a region with no op
    around it. An over-count, never an under-count: each op's output depends on all its inputs."""
    found: set[int] = set()
    stack = [value]
    for value in each_once(stack):
        region = value.region_input
        if region is None:
            if value.producer is not None:
                stack.extend(value.producer.inputs)
            continue
        position = next((i for i, v in enumerate(region.inputs) if v is value), None)
        if position is None:
            return None
        if region is top:
            found.add(position)
            continue
        op = region.parent
        if op is None:
            return None
        links = region_links(op, region)
        if links is None:
            stack.extend(op.inputs)
            continue
        operand = links.operands[position] if position < len(links.operands) else None
        if operand is not None:
            stack.append(op.inputs[operand])
        stack.extend(out for out, (_, fed) in zip(region.outputs, links.results) if position in fed)
    return found


def differentiable(value: Value) -> bool:
    """``value`` depends on an input of the function (or of a loop body) through float ops a
    gradient flows back through."""
    stack = [value]
    for value in each_once(stack):
        if not inexact(value):
            continue
        if value.region_input is not None:
            return True
        op = value.producer
        if op is not None and not primitives.traits(op.primitive).gradient_free:
            stack.extend(op.inputs)
    return False


def max_shifted(value: Value) -> bool:
    """``value`` is ``x - max(x)`` (the max maybe under ``stop_gradient``, as JAX's softmax and
    logsumexp write it), or such a value minus something more (``log_softmax``'s output)."""
    op = produced_by(value, "sub")
    if op is None:
        return False
    return _reaches_max(op.inputs[1]) or max_shifted(op.inputs[0])


def _reaches_max(value: Value) -> bool:
    stack, seen = [value], set()
    while stack:
        op = stack.pop().producer
        if op is None or id(op) in seen or len(seen) > 16:
            continue
        seen.add(id(op))
        if op.primitive in ("reduce_max", "cummax"):
            return True
        if op.primitive in _SHIFT_PATH:
            stack.extend(op.inputs)
    return False


def bounded(value: Value) -> bool:
    """``value`` is computed by a function with a small range (sin, tanh, sigmoid, ...)."""
    op = strip(value).producer
    if op is not None and op.primitive == "neg":
        op = strip(op.inputs[0]).producer
    return op is not None and primitives.traits(op.primitive).bounded


def overflowing_exp(value: Value) -> Op | None:
    """The ``exp`` computing ``value`` when its input is neither max-shifted nor bounded and is
    not a constant: an exp that overflows float32 above 88.7 (float64: 709.8)."""
    op = produced_by(value, "exp")
    if op is None or not inexact(op.inputs[0]) or max_shifted(op.inputs[0]) or bounded(op.inputs[0]):
        return None
    return op if varies(op.inputs[0]) else None


def returned(value: Value) -> bool:
    """``value`` is an output of the region computing it (returned, or carried by a loop)."""
    region = value.producer.region if value.producer is not None else value.region_input
    return region is not None and any(out is value for out in region.outputs)


def surely_used(value: Value) -> bool:
    """Some element of ``value`` reaches its region's outputs whatever the data: it is returned, or
    an op uses it other than as a case of a ``select_n`` (which may pick another case) and that
    op's output is surely used in turn; an op with regions or without outputs counts as a use.
    (JAX's integer power squares its base six times and keeps each square only where the
    exponent's bit asks for it: the last squares overflow for a base of 2, unused.)"""
    seen: set[int] = set()
    stack = [value]
    while stack:
        current = stack.pop()
        if id(current) in seen:
            continue
        seen.add(id(current))
        if returned(current):
            return True
        for use in current.uses:
            if use.primitive == "select_n" and use.inputs[0] is not current:
                continue
            if use.regions or not use.outputs:
                return True
            stack.extend(use.outputs)
    return False


def only_used_by(value: Value, primitives: Iterable[str], through: frozenset[str] = TRANSPARENT) -> bool:
    """Every use of ``value`` (through the ops of ``through``) is one of ``primitives``, and it
    is not returned; False when unused."""
    wanted, found, stack = set(primitives), False, [value]
    while stack:
        value = stack.pop()
        if returned(value):
            return False
        for use in value.uses:
            if use.primitive in through:
                stack.extend(use.outputs)
            elif use.primitive in wanted:
                found = True
            else:
                return False
    return found


def softmax(value: Value) -> tuple[Op, Op] | None:
    """``value`` is ``exp(a) / sum(exp(a))`` (a hand-written or JAX's softmax): (the div, the
    numerator's exp). The denominator may compute its own ``exp`` of the same ``a``."""
    div = produced_by(value, "div")
    if div is None:
        return None
    exp = produced_by(div.inputs[0], "exp")
    total = produced_by(div.inputs[1], "reduce_sum")
    other = produced_by(total.inputs[0], "exp") if total is not None else None
    if exp is None or other is None or not (other is exp or strip(other.inputs[0]) is strip(exp.inputs[0])):
        return None
    return div, exp


def hand_sigmoid(value: Value) -> tuple[Op, Op] | None:
    """``value`` is ``1 / (1 + exp(z))`` (z is usually ``-x``), or ``1 / (1 + c * exp(z))``:
    (the div, the exp)."""
    div = produced_by(value, "div")
    if div is None or scalar(div.inputs[0]) != 1.0:
        return None
    add = produced_by(div.inputs[1], "add")
    if add is None:
        return None
    ones = [v for v in add.inputs if scalar(v) == 1.0]
    rest = [v for v in add.inputs if scalar(v) is None]
    if len(ones) != 1 or len(rest) != 1:
        return None
    exp = produced_by(rest[0], "exp")
    scaled = produced_by(rest[0], "mul") if exp is None else None
    if scaled is not None:  # c * exp(z): overflows the same way
        exp = next((e for e in (produced_by(v, "exp") for v in scaled.inputs) if e is not None), None)
    return (div, exp) if exp is not None and varies(exp.inputs[0]) else None
