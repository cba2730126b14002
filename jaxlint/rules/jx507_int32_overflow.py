"""JX507 int32-overflow: integer arithmetic the jaxpr proves to leave its dtype's range, which XLA
wraps around silently: ``jnp.arange(100_000) * 100_000`` has 1,409,965,408 where 9,999,900,000
was meant, and a ``fori_loop`` index times a stride wraps in its last iterations.

For each integer value the rule keeps two values some element of it is *proven to take* (not
bounds: ``lo <= hi``, each reached at some position, in some iteration) and the axes it may vary
along (array dimensions, and the loops whose iterations it changes with). They come from literals,
``iota``, loop indices (a ``scan`` carry or a ``fori_loop``'s ``while`` counter stepped by a
literal from a known start, to a known trip count), and from the table below, keyed by primitive
with everything else unknown (as JAX's key-reuse checker keys its signatures). A binary op
combines two operands only when any of their values can meet at one position: the same value on
both sides, or operands varying along disjoint axes (a scalar or a broadcast against an array, an
outer product); then every pair of their proven values is reached, and so is its exact result,
computed with Python ints. A ``wraps`` op (add, sub, mul, reduce_sum) whose exact result is out of
range is the finding; its output is then unknown (the values downstream are wrapped ones).

Only code proven to run is judged: the top of the program and the bodies of loops known to run at
least once (not ``cond`` branches, not a ``while`` whose trip count is unknown), and an op whose
result is used. Quiet for unsigned types (wraparound is usually meant there), and for ops at a source
line that calls ``jax.random`` (its hashing wraps on purpose). A closed-over constant array counts
with its exact min and max.
"""
from __future__ import annotations

import ast
from dataclasses import dataclass
from typing import Callable, Iterable

from jaxlint.ir import Location, Op, Program, Region, Value, patterns
from jaxlint.ir.primitives import PRNG, traits
from jaxlint.model import Finding
from jaxlint.rules.base import ProgramContext, Rule


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


@dataclass(frozen=True)
class Overflow:
    op: Op
    reached: int  # the exact value an element reaches
    limit: int  # the dtype's maximum (or minimum) it passes
    dtype: str
    operands: tuple[int, ...]  # the operand values that reach it (binary ops), else ()
    count: int = 0  # reduce_sum: how many equal elements are summed


class Int32Overflow(Rule):
    code = "JX507"
    name = "int32-overflow"
    summary = ("Integer arithmetic proven from known bounds (iota, literals, loop indices) to leave the "
               "dtype's range: it wraps around silently.")
    severity = "error"

    @classmethod
    def check_program(cls, ctx: ProgramContext) -> Iterable[Finding]:
        program = ctx.program
        found: list[Overflow] = program.memo("JX507 overflows", lambda: _overflows(program))
        for overflow in found:
            location = overflow.op.location
            if location is not None and location.path == ctx.path:
                yield ctx.finding(cls, _message(ctx, overflow), location.span)


_MAX_CONSTANT = 1 << 24  # elements of a constant array read for its min and max


# -- the dtypes ------------------------------------------------------------------------------

def _int_range(value: Value) -> tuple[int, int, str] | None:
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


def _signed(value: Value) -> bool:
    found = _int_range(value)
    return found is not None and found[2].startswith("int")


def _fits(reach: Reach | None, value: Value) -> Reach | None:
    """``reach`` when ``value``'s dtype holds it (else the runtime values are not these)."""
    limits = _int_range(value)
    if reach is None or limits is None or reach.lo < limits[0] or reach.hi > limits[1]:
        return None
    return reach


def _literal(value: Value) -> Reach | None:
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

def _dims(reach: Reach, mapping: Callable[[int], int | None]) -> frozenset:
    """``reach``'s axes with its dimensions renumbered (None: the dimension is gone)."""
    moved = {mapping(a) if isinstance(a, int) else a for a in reach.axes}
    return frozenset(a for a in moved if a is not None)


def _all_dims(reach: Reach, ndim: int) -> frozenset:
    loops = {a for a in reach.axes if not isinstance(a, int)}
    return frozenset(loops | (set(range(ndim)) if any(isinstance(a, int) for a in reach.axes) else set()))


def _pairs(op: Op, a: Reach, b: Reach) -> tuple[list[tuple[int, int]], frozenset] | None:
    """The operand value pairs some position reaches, and the result's axes; None when which pairs
    meet is not known (both operands vary along a common axis)."""
    if op.inputs[0] is op.inputs[1]:
        return [(a.lo, a.lo), (a.hi, a.hi)], a.axes
    if a.axes & b.axes:
        return None
    return [(x, y) for x in (a.lo, a.hi) for y in (b.lo, b.hi)], a.axes | b.axes


_ARITHMETIC: dict[str, Callable[[int, int], int]] = {
    "add": lambda x, y: x + y, "sub": lambda x, y: x - y, "mul": lambda x, y: x * y,
    "max": max, "min": min,
}


def _binary(op: Op, ins: list[Reach | None]) -> Reach | None:
    if len(ins) != 2 or ins[0] is None or ins[1] is None:
        return None
    met = _pairs(op, ins[0], ins[1])
    if met is None:
        return None
    values = [_ARITHMETIC[op.primitive](x, y) for x, y in met[0]]
    return Reach(min(values), max(values), met[1])


def _broadcast(op: Op, ins: list[Reach | None]) -> Reach | None:
    dims = tuple(int(d) for d in op.params["broadcast_dimensions"])
    return None if ins[0] is None else Reach(ins[0].lo, ins[0].hi, _dims(ins[0], lambda a: dims[a]))


def _reshape(op: Op, ins: list[Reach | None]) -> Reach | None:
    reach = ins[0]
    if reach is None:
        return None
    before, after = op.inputs[0].shape, op.outputs[0].shape
    kept = [k for k, s in enumerate(before) if s != 1]
    placed = [k for k, s in enumerate(after) if s != 1]
    if [before[k] for k in kept] == [after[k] for k in placed]:  # only axes of size 1 come or go
        where = dict(zip(kept, placed))
        return Reach(reach.lo, reach.hi, _dims(reach, where.get))
    return Reach(reach.lo, reach.hi, _all_dims(reach, len(after)))


def _squeeze(op: Op, ins: list[Reach | None]) -> Reach | None:
    if ins[0] is None:
        return None
    gone = {int(d) % max(len(op.inputs[0].shape), 1) for d in op.params["dimensions"]}
    kept = [k for k in range(len(op.inputs[0].shape)) if k not in gone]
    return Reach(ins[0].lo, ins[0].hi, _dims(ins[0], {k: n for n, k in enumerate(kept)}.get))


def _transpose(op: Op, ins: list[Reach | None]) -> Reach | None:
    if ins[0] is None:
        return None
    perm = [int(p) for p in op.params["permutation"]]
    return Reach(ins[0].lo, ins[0].hi, _dims(ins[0], perm.index))


def _same(op: Op, ins: list[Reach | None]) -> Reach | None:
    """The operand's values at other positions (rev, copy) or the same ones (device_put)."""
    return ins[0]


def _convert(op: Op, ins: list[Reach | None]) -> Reach | None:
    return ins[0] if _int_range(op.inputs[0]) is not None else None  # from a float: unknown


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


def _reduced(op: Op) -> tuple[set[int], Callable[[int], int | None]]:
    axes = {int(a) for a in op.params["axes"]}
    kept = [k for k in range(len(op.inputs[0].shape)) if k not in axes]
    return axes, {k: n for n, k in enumerate(kept)}.get


def _reduce_extreme(op: Op, ins: list[Reach | None]) -> Reach | None:
    reach = ins[0]
    if reach is None:
        return None
    axes, mapping = _reduced(op)
    if not axes & reach.axes:
        return Reach(reach.lo, reach.hi, _dims(reach, mapping))
    # Some output element is the whole array's max (min); which other values come is not known.
    end = reach.hi if op.primitive == "reduce_max" else reach.lo
    return Reach(end, end, _dims(reach, mapping))


def _reduce_sum(op: Op, ins: list[Reach | None]) -> Reach | None:
    """A sum of equal numbers (the operand is constant along the summed axes): their count times."""
    reach = ins[0]
    if reach is None:
        return None
    axes, mapping = _reduced(op)
    sizes = [op.inputs[0].shape[a] for a in axes]
    if axes & reach.axes or not all(isinstance(s, int) for s in sizes):
        return None
    count = 1
    for size in sizes:
        count *= size
    return Reach(reach.lo * count, reach.hi * count, _dims(reach, mapping))


_TRANSFER: dict[str, Callable[[Op, list[Reach | None]], Reach | None]] = {
    **{name: _binary for name in _ARITHMETIC},
    "broadcast_in_dim": _broadcast, "reshape": _reshape, "squeeze": _squeeze, "transpose": _transpose,
    "rev": _same, "copy": _same, "copy_p": _same, "device_put": _same, "convert_element_type": _convert,
    "slice": _constant_view, "dynamic_slice": _constant_view, "gather": _constant_view,
    "concatenate": _concatenate, "iota": _iota, "neg": _neg, "abs": _abs,
    "reduce_max": _reduce_extreme, "reduce_min": _reduce_extreme, "reduce_sum": _reduce_sum,
}


# -- the walk ----------------------------------------------------------------------------------

class _Analysis:
    def __init__(self, program: Program) -> None:
        self.reach: dict[int, Reach] = {}
        self.found: list[Overflow] = []
        self.random_lines = {op.location for op in program.walk() if op.primitive in PRNG}

    def get(self, value: Value) -> Reach | None:
        if id(value) in self.reach:
            return self.reach[id(value)]
        return _literal(value) if value.literal is not None or value.array is not None else None

    def region(self, region: Region, runs: bool) -> None:
        for op in region.ops:
            if op.primitive == "scan":
                self.scan(op, runs)
            elif op.primitive == "while":
                self.loop(op, runs)
            elif not op.regions and len(op.outputs) == 1 and op.primitive in _TRANSFER:
                self.equation(op, runs)

    def equation(self, op: Op, runs: bool) -> None:
        out = op.outputs[0]
        if _int_range(out) is None:
            return
        ins = [self.get(v) for v in op.inputs]
        try:
            result = _TRANSFER[op.primitive](op, ins)
        except (KeyError, ValueError, IndexError, TypeError):  # a param form the table does not model
            return
        if result is None:
            return
        limits = _int_range(out)
        assert limits is not None
        if runs and traits(op.primitive).wraps and _signed(out) and (result.hi > limits[1] or result.lo < limits[0]) \
                and op.location not in self.random_lines and (out.uses or patterns.returned(out)):
            self.found.append(_overflow(op, ins, result, limits))
            return
        fitted = _fits(result, out)
        if fitted is not None:
            self.reach[id(out)] = fitted

    def scan(self, op: Op, runs: bool) -> None:
        body = next((r for r in op.regions if r.name == "jaxpr"), None)
        if body is None:
            return
        length, consts, carry = int(op.params["length"]), int(op.params["num_consts"]), int(op.params["num_carry"])
        for k, inner in enumerate(body.inputs):
            outer = self.get(op.inputs[k])
            if outer is None:
                continue
            if k < consts:
                self.reach[id(inner)] = outer
            elif k < consts + carry:
                index = _counter(body, k, k - consts, outer, length, op)
                if index is not None and _fits(index, inner) is not None:
                    self.reach[id(inner)] = index
            elif length >= 1:  # a slice of xs per iteration: dimension 0 becomes the iterations
                moved = _dims(outer, lambda a: a - 1 if a > 0 else None)
                self.reach[id(inner)] = Reach(outer.lo, outer.hi, moved | ({op} if 0 in outer.axes else set()))
        self.region(body, runs and length >= 1)

    def loop(self, op: Op, runs: bool) -> None:
        """A ``fori_loop`` with a traced bound: a counter carry compared with ``lt`` to a bound,
        both known numbers here. Any other while may not run: its body is not judged."""
        regions = {r.name: r for r in op.regions}
        cond, body = regions.get("cond_jaxpr"), regions.get("body_jaxpr")
        if cond is None or body is None or len(cond.outputs) != 1:
            return
        cond_n, body_n = int(op.params["cond_nconsts"]), int(op.params["body_nconsts"])
        test = cond.outputs[0].producer
        if test is None or test.primitive != "lt" or test.inputs[0].region_input is not cond:
            return
        j = cond.inputs.index(test.inputs[0]) - cond_n
        if j < 0:
            return
        upper = self._cond_operand(op, cond, body, test.inputs[1])
        start = self.get(op.inputs[cond_n + body_n + j])
        if upper is None or start is None or not start.constant or start.lo >= upper:
            return
        step = _step(body, body_n + j, j)
        if step is None:
            return
        index = Reach(start.lo, start.lo + step * ((upper - start.lo - 1) // step), frozenset({op}))
        for k, inner in enumerate(body.inputs):
            if k == body_n + j:
                if _fits(index, inner) is not None:
                    self.reach[id(inner)] = index
            elif k < body_n:
                outer = self.get(op.inputs[cond_n + k])
                if outer is not None:
                    self.reach[id(inner)] = outer
        self.region(body, runs)

    def _cond_operand(self, op: Op, cond: Region, body: Region, value: Value) -> int | None:
        """The number ``value`` (the bound in the loop's test) always is: a literal, a cond
        constant, or a carry the body passes through unchanged, known to be one number."""
        cond_n, body_n = int(op.params["cond_nconsts"]), int(op.params["body_nconsts"])
        if value.region_input is cond:
            k = cond.inputs.index(value)
            if k >= cond_n:
                m = k - cond_n
                if body.outputs[m] is not body.inputs[body_n + m]:
                    return None
                value = op.inputs[cond_n + body_n + m]
            else:
                value = op.inputs[k]
        reach = self.get(value)
        return reach.lo if reach is not None and reach.constant else None


def _step(body: Region, position: int, carry: int) -> int | None:
    """The positive literal the body adds to its input ``position`` to make carry output ``carry``."""
    update = body.outputs[carry].producer
    if update is None or update.primitive != "add" or body.inputs[position] not in update.inputs:
        return None
    other = update.inputs[1] if update.inputs[0] is body.inputs[position] else update.inputs[0]
    step = _literal(other) if other.literal is not None else None
    return step.lo if step is not None and step.constant and step.lo > 0 else None


def _counter(body: Region, position: int, carry: int, start: Reach, length: int, loop: Op) -> Reach | None:
    """A scan carry stepped by a literal from a known number (``fori_loop``'s index): its values."""
    step = _step(body, position, carry)
    if step is None or not start.constant or length < 1:
        return None
    return Reach(start.lo, start.lo + step * (length - 1), frozenset({loop}) if length > 1 else frozenset())


def _overflow(op: Op, ins: list[Reach | None], result: Reach, limits: tuple[int, int, str]) -> Overflow:
    reached, limit = (result.hi, limits[1]) if result.hi > limits[1] else (result.lo, limits[0])
    if op.primitive == "reduce_sum":
        axes, _ = _reduced(op)
        count = 1
        for axis in axes:
            count *= int(op.inputs[0].shape[axis])
        return Overflow(op, reached, limit, limits[2], (), count)
    a, b = ins[0], ins[1]
    assert a is not None and b is not None
    met = _pairs(op, a, b)
    assert met is not None
    pair = next(p for p in met[0] if _ARITHMETIC[op.primitive](*p) == reached)
    return Overflow(op, reached, limit, limits[2], pair)


def _overflows(program: Program) -> list[Overflow]:
    analysis = _Analysis(program)
    analysis.region(program.top, True)
    return analysis.found


# -- the message -------------------------------------------------------------------------------

def _wrapped(value: int, dtype: str) -> int:
    bits = int(dtype[3:])
    value &= (1 << bits) - 1
    return value - (1 << bits) if value >> (bits - 1) else value


def _message(ctx: ProgramContext, overflow: Overflow) -> str:
    op = overflow.op
    location: Location | None = op.location
    node = ctx.index.node_at(location.span, ast.expr) if location is not None else None
    what = f"`{ctx.index.text(node)}`" if node is not None else f"this {_NOUNS.get(op.primitive, op.primitive)}"
    side = "maximum" if overflow.reached > overflow.limit else "minimum"
    relation = ">" if overflow.reached > overflow.limit else "<"
    if overflow.count:
        how = f" (a sum of {overflow.count:,} elements of {overflow.reached // overflow.count:,})"
    else:
        x, y = overflow.operands
        how = f" (from operands {x:,} and {y:,})"
    return (f"{what} reaches {overflow.reached:,}{how} {relation} {overflow.limit:,}, the {overflow.dtype} {side}: "
            f"{overflow.dtype} arithmetic wraps around without an error, and that value comes out as "
            f"{_wrapped(overflow.reached, overflow.dtype):,}. Compute it in a wider type (int64 with "
            "jax_enable_x64, or float) or reorder it so the intermediate stays in range.")


_NOUNS = {"add": "addition", "sub": "subtraction", "mul": "multiplication", "reduce_sum": "sum"}
