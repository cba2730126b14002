"""The walk of JX507 over a program: the reaches of its integer values, region by region, with the
loop counters of ``scan`` and ``fori_loop``'s ``while``; the overflows it proves."""
from __future__ import annotations

from dataclasses import dataclass

from jaxlint.ir import Op, Program, Region, Value, patterns
from jaxlint.ir.primitives import PRNG, traits
from jaxlint.rules.jx507_int32_overflow.reach import (
    ARITHMETIC,
    TRANSFER,
    Reach,
    fits,
    int_range,
    literal_reach,
    moved_axes,
    pairs,
    reduced,
    signed,
)


@dataclass(frozen=True)
class Overflow:
    op: Op
    reached: int  # the exact value an element reaches
    limit: int  # the dtype's maximum (or minimum) it passes
    dtype: str
    operands: tuple[int, ...]  # the operand values that reach it (binary ops), else ()
    count: int = 0  # reduce_sum: how many equal elements are summed


class Analysis:
    """The reaches of a program's integer values, region by region in program order, and the
    overflows they prove (``found``)."""

    def __init__(self, program: Program) -> None:
        self.reach: dict[int, Reach] = {}
        self.found: list[Overflow] = []
        self.random_lines = {op.location for op in program.walk() if op.primitive in PRNG}

    def get(self, value: Value) -> Reach | None:
        if id(value) in self.reach:
            return self.reach[id(value)]
        return literal_reach(value) if value.literal is not None or value.array is not None else None

    def region(self, region: Region, runs: bool) -> None:
        for op in region.ops:
            if op.primitive == "scan":
                self.scan(op, runs)
            elif op.primitive == "while":
                self.loop(op, runs)
            elif not op.regions and len(op.outputs) == 1 and op.primitive in TRANSFER:
                self.equation(op, runs)

    def equation(self, op: Op, runs: bool) -> None:
        out = op.outputs[0]
        if int_range(out) is None:
            return
        ins = [self.get(v) for v in op.inputs]
        result = TRANSFER[op.primitive](op, ins)
        if result is None:
            return
        limits = int_range(out)
        assert limits is not None
        if runs and traits(op.primitive).wraps and signed(out) and (result.hi > limits[1] or result.lo < limits[0]) \
                and op.location not in self.random_lines and patterns.surely_used(out):
            self.found.append(_overflow(op, ins, result, limits))
            return
        fitted = fits(result, out)
        if fitted is not None:
            self.reach[id(out)] = fitted

    def scan(self, op: Op, runs: bool) -> None:
        body = next((r for r in op.regions if r.name == "jaxpr"), None)
        if body is None:
            return
        consts, carry = int(op.params["num_consts"]), int(op.params["num_carry"])
        length = op.params["length"] if isinstance(op.params["length"], int) else 0  # symbolic: may be 0
        for k, inner in enumerate(body.inputs):
            outer = self.get(op.inputs[k])
            if outer is None:
                continue
            if k < consts:
                self.reach[id(inner)] = outer
            elif k < consts + carry:
                index = _counter(body, k, k - consts, outer, length, op)
                if index is not None and fits(index, inner) is not None:
                    self.reach[id(inner)] = index
            elif length >= 1:  # a slice of xs per iteration: dimension 0 becomes the iterations
                moved = moved_axes(outer, lambda a: a - 1 if a > 0 else None)
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
                if fits(index, inner) is not None:
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
    step = literal_reach(other) if other.literal is not None else None
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
        axes, _ = reduced(op)
        count = 1
        for axis in axes:
            count *= int(op.inputs[0].shape[axis])
        return Overflow(op, reached, limit, limits[2], (), count)
    a, b = ins[0], ins[1]
    assert a is not None and b is not None
    met = pairs(op, a, b)
    assert met is not None
    pair = next(p for p in met[0] if ARITHMETIC[op.primitive](*p) == reached)
    return Overflow(op, reached, limit, limits[2], pair)


def overflows(program: Program) -> list[Overflow]:
    """Every overflow the program's jaxpr proves, in program order."""
    analysis = Analysis(program)
    analysis.region(program.top, True)
    return analysis.found
