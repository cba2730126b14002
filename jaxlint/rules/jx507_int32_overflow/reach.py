"""What JX507 knows of an integer value (``Reach``) and how each primitive maps what it knows of
the operands to its result: a table keyed by primitive, anything it does not list unknown, as JAX's
key-reuse checker keys its signatures (jax/experimental/key_reuse/_core.py)."""
from __future__ import annotations

from dataclasses import dataclass
from typing import Callable

from jaxlint.ir import Op, Value
from jaxlint.ir.primitives import SHARDING_OPS


@dataclass(frozen=True)
class Reach:
    """Values some element of an integer array is proven to take (``lo <= hi``), and what it may
    vary along: its array dimensions (ints) and the loops (Ops) whose iterations change it. A value
    that varies along nothing is one number (``lo == hi``)."""

    lo: int
    hi: int
    axes: frozenset

    @property
    def constant(self) -> bool:
        return not self.axes


_MAX_CONSTANT = 1 << 24  # elements of a constant array read for its min and max


# -- the dtypes ------------------------------------------------------------------------------

def int_range(value: Value) -> tuple[int, int, str] | None:
    """(min, max, name) of an integer or boolean dtype, else None (floats, keys, float0)."""
    import numpy as np
    try:
        dtype = np.dtype(value.dtype)
    except TypeError:
        return None
    if dtype.kind == "b":
        return 0, 1, "bool"
    if dtype.kind not in "iu":
        return None
    info = np.iinfo(dtype)
    return int(info.min), int(info.max), dtype.name


def signed(value: Value) -> bool:
    found = int_range(value)
    return found is not None and found[2].startswith("int")


def fits(reach: Reach | None, value: Value) -> Reach | None:
    """``reach`` when ``value``'s dtype holds it (else the runtime values are not these)."""
    limits = int_range(value)
    if reach is None or limits is None or reach.lo < limits[0] or reach.hi > limits[1]:
        return None
    return reach


def literal_reach(value: Value) -> Reach | None:
    """The numbers of a literal or of a closed-over constant array: its exact min and max."""
    import numpy as np
    try:
        array = np.asarray(value.literal if value.literal is not None else value.array)
    except (TypeError, ValueError):
        return None
    if array.dtype.kind not in "biu" or not 0 < array.size <= _MAX_CONSTANT:
        return None
    lo, hi = int(array.min()), int(array.max())
    return Reach(lo, hi, frozenset() if lo == hi else frozenset(k for k, n in enumerate(array.shape) if n > 1))


# -- the table: how each primitive maps the reaches of its operands --------------------------

def moved_axes(reach: Reach, mapping: Callable[[int], int | None]) -> frozenset:
    """``reach``'s axes with its dimensions renumbered (None: the dimension is gone)."""
    moved = {mapping(a) if isinstance(a, int) else a for a in reach.axes}
    return frozenset(a for a in moved if a is not None)


def _all_dims(reach: Reach, ndim: int) -> frozenset:
    loops = {a for a in reach.axes if not isinstance(a, int)}
    return frozenset(loops | (set(range(ndim)) if any(isinstance(a, int) for a in reach.axes) else set()))


def pairs(op: Op, a: Reach, b: Reach) -> tuple[list[tuple[int, int]], frozenset] | None:
    """The operand value pairs some position reaches, and the result's axes; None when which pairs
    meet is not known (both operands vary along a common axis)."""
    if op.inputs[0] is op.inputs[1]:
        return [(a.lo, a.lo), (a.hi, a.hi)], a.axes
    if a.axes & b.axes:
        return None
    return [(x, y) for x in (a.lo, a.hi) for y in (b.lo, b.hi)], a.axes | b.axes


ARITHMETIC: dict[str, Callable[[int, int], int]] = {
    "add": lambda x, y: x + y, "sub": lambda x, y: x - y, "mul": lambda x, y: x * y,
    "max": max, "min": min,
}


def _binary(op: Op, ins: list[Reach | None]) -> Reach | None:
    if len(ins) != 2 or ins[0] is None or ins[1] is None:
        return None
    met = pairs(op, ins[0], ins[1])
    if met is None:
        return None
    values = [ARITHMETIC[op.primitive](x, y) for x, y in met[0]]
    return Reach(min(values), max(values), met[1])


def _broadcast(op: Op, ins: list[Reach | None]) -> Reach | None:
    dims = tuple(int(d) for d in op.params["broadcast_dimensions"])
    return None if ins[0] is None else Reach(ins[0].lo, ins[0].hi, moved_axes(ins[0], lambda a: dims[a]))


def _reshape(op: Op, ins: list[Reach | None]) -> Reach | None:
    reach = ins[0]
    if reach is None:
        return None
    before, after = op.inputs[0].shape, op.outputs[0].shape
    if not all(isinstance(n, int) for n in before + after):  # symbolic sizes: never compared
        return Reach(reach.lo, reach.hi, _all_dims(reach, len(after)))
    kept = [k for k, s in enumerate(before) if s != 1]
    placed = [k for k, s in enumerate(after) if s != 1]
    if [before[k] for k in kept] == [after[k] for k in placed]:  # only axes of size 1 come or go
        where = dict(zip(kept, placed))
        return Reach(reach.lo, reach.hi, moved_axes(reach, where.get))
    return Reach(reach.lo, reach.hi, _all_dims(reach, len(after)))


def _squeeze(op: Op, ins: list[Reach | None]) -> Reach | None:
    if ins[0] is None:
        return None
    gone = {int(d) % max(len(op.inputs[0].shape), 1) for d in op.params["dimensions"]}
    kept = [k for k in range(len(op.inputs[0].shape)) if k not in gone]
    return Reach(ins[0].lo, ins[0].hi, moved_axes(ins[0], {k: n for n, k in enumerate(kept)}.get))


def _transpose(op: Op, ins: list[Reach | None]) -> Reach | None:
    if ins[0] is None:
        return None
    perm = [int(p) for p in op.params["permutation"]]
    return Reach(ins[0].lo, ins[0].hi, moved_axes(ins[0], perm.index))


def _same(op: Op, ins: list[Reach | None]) -> Reach | None:
    """The operand's values at other positions (rev, copy) or the same ones (device_put, a
    sharding constraint or reshard: the value laid out anew)."""
    return ins[0]


def _convert(op: Op, ins: list[Reach | None]) -> Reach | None:
    return ins[0] if int_range(op.inputs[0]) is not None else None  # from a float: unknown


def _constant_view(op: Op, ins: list[Reach | None]) -> Reach | None:
    """A slice keeps some positions only: known when every position holds the same number."""
    reach = ins[0]
    return reach if reach is not None and not any(isinstance(a, int) for a in reach.axes) else None


def _concatenate(op: Op, ins: list[Reach | None]) -> Reach | None:
    if any(r is None for r in ins) or not ins:
        return None
    known = [r for r in ins if r is not None]
    axes = frozenset().union(*(_all_dims(r, len(op.outputs[0].shape)) for r in known))
    lo, hi = min(r.lo for r in known), max(r.hi for r in known)
    if lo != hi:
        axes |= {int(op.params["dimension"])}
    return Reach(lo, hi, axes)


def _iota(op: Op, ins: list[Reach | None]) -> Reach | None:
    dim = int(op.params["dimension"])
    size = op.outputs[0].shape[dim]
    if not isinstance(size, int) or size < 1:
        return None
    return Reach(0, size - 1, frozenset({dim}) if size > 1 else frozenset())


def _neg(op: Op, ins: list[Reach | None]) -> Reach | None:
    return None if ins[0] is None else Reach(-ins[0].hi, -ins[0].lo, ins[0].axes)


def _abs(op: Op, ins: list[Reach | None]) -> Reach | None:
    if ins[0] is None:
        return None
    ends = (abs(ins[0].lo), abs(ins[0].hi))
    return Reach(min(ends), max(ends), ins[0].axes)


def reduced(op: Op) -> tuple[set[int], Callable[[int], int | None]]:
    axes = {int(a) for a in op.params["axes"]}
    kept = [k for k in range(len(op.inputs[0].shape)) if k not in axes]
    return axes, {k: n for n, k in enumerate(kept)}.get


def _reduce_extreme(op: Op, ins: list[Reach | None]) -> Reach | None:
    reach = ins[0]
    if reach is None:
        return None
    axes, mapping = reduced(op)
    if not axes & reach.axes:
        return Reach(reach.lo, reach.hi, moved_axes(reach, mapping))
    # Some output element is the whole array's max (min); which other values come is not known.
    end = reach.hi if op.primitive == "reduce_max" else reach.lo
    return Reach(end, end, moved_axes(reach, mapping))


def _reduce_sum(op: Op, ins: list[Reach | None]) -> Reach | None:
    """A sum of equal numbers (the operand is constant along the summed axes): their count times."""
    reach = ins[0]
    if reach is None:
        return None
    axes, mapping = reduced(op)
    sizes = [op.inputs[0].shape[a] for a in axes]
    if axes & reach.axes or not all(isinstance(s, int) for s in sizes):
        return None
    count = 1
    for size in sizes:
        count *= size
    return Reach(reach.lo * count, reach.hi * count, moved_axes(reach, mapping))


TRANSFER: dict[str, Callable[[Op, list[Reach | None]], Reach | None]] = {
    **{name: _binary for name in ARITHMETIC},
    "broadcast_in_dim": _broadcast, "reshape": _reshape, "squeeze": _squeeze, "transpose": _transpose,
    "rev": _same, "copy": _same, "copy_p": _same, "device_put": _same, "convert_element_type": _convert,
    "slice": _constant_view, "dynamic_slice": _constant_view, "gather": _constant_view,
    "concatenate": _concatenate, "iota": _iota, "neg": _neg, "abs": _abs,
    "reduce_max": _reduce_extreme, "reduce_min": _reduce_extreme, "reduce_sum": _reduce_sum,
    **{name: _same for name in SHARDING_OPS},
}
