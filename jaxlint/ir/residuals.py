"""The residuals of reverse-differentiated loops, read from the IR: a forward scan's stacked
outputs that a transposed scan reads, each with the body line that makes it. JX306 reports the
loops whose residuals reach its threshold; ``jaxlint explain`` lists them all. JAX-free."""
from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path

from jaxlint.ir import Op, Program, Value, costs


@dataclass(frozen=True)
class Residual:
    value: Value  # the forward loop's stacked output a transposed loop reads
    nbytes: int
    made_at: str  # the body line that makes it ("line 7"), or what it is ("the carry")


@dataclass(frozen=True)
class Stacked:
    loop: Op  # the forward scan
    residuals: tuple[Residual, ...]

    @property
    def total(self) -> int:
        return sum(r.nbytes for r in self.residuals)


def stacked(program: Program, minimum: int) -> list[Stacked]:
    """The forward scans whose stacked outputs read by a transposed scan total ``minimum`` bytes."""
    found = []
    for op in program.walk():
        if op.primitive != "scan" or op.under("transpose"):
            continue
        carry = int(op.params["num_carry"])
        read = [(index, value) for index, value in enumerate(op.outputs[carry:], start=carry)
                if any(use.primitive == "scan" and use.under("transpose") for use in value.uses)]
        sizes = [costs.nbytes(value) for _, value in read]
        if not read or None in sizes:
            continue  # no residuals, or a symbolic dimension: their size is not known
        loop = Stacked(op, tuple(Residual(value, nbytes, made_at(op, index))
                                 for (index, value), nbytes in zip(read, sizes)))
        if loop.total >= minimum:
            found.append(loop)
    return found


def made_at(loop: Op, index: int) -> str:
    """Where the body makes its output ``index``: a line (``file:line`` in another file than the
    loop's), or the body input it passes on."""
    body = loop.regions[0]
    value = body.outputs[index]
    if value.producer is None:  # a body input (or a constant) passed on
        consts, carry = int(loop.params["num_consts"]), int(loop.params["num_carry"])
        position = next((i for i, v in enumerate(body.inputs) if v is value), -1)
        if position < consts:
            return "a loop constant"
        return "the carry" if position < consts + carry else "a scanned input"
    location = value.producer.location
    if location is None:
        return "the loop body"
    if loop.location is not None and location.path == loop.location.path:
        return f"line {location.span.start_line}"
    return f"{Path(location.path).name}:{location.span.start_line}"
