"""JX301 large-closure-constant: a large array captured as a constant of the jaxpr."""
from __future__ import annotations

from typing import Iterable

from jaxlint.ir import Op, Value, costs, is_sharded
from jaxlint.model import Cost, Finding
from jaxlint.rules.base import Option, ProgramContext, Rule


class LargeClosureConstant(Rule):
    code = "JX301"
    name = "large-closure-constant"
    summary = "A large array captured as a constant of the jaxpr instead of passed as an argument."
    severity = "warning"
    # Constants at least this large are reported (bytes).
    threshold_bytes = 1 << 20
    options = {"min-bytes": Option(int, threshold_bytes, "bytes a captured constant must have to be reported",
                                   minimum=0)}

    @classmethod
    def check_program(cls, ctx: ProgramContext) -> Iterable[Finding]:
        # Constants (the IR marks constvars of the top jaxpr and of inlined or nested jaxprs)
        # and array literals, grouped by the op that first uses them: one finding per place.
        seen: set[int] = set()
        min_bytes = ctx.option(cls, "min-bytes")
        by_place: dict[tuple, list[tuple[Value, Op]]] = {}
        for op in ctx.program.walk():
            for value in op.inputs:
                if id(value) in seen or not _is_constant(value):
                    continue
                seen.add(id(value))
                size = costs.nbytes(value)
                if size is None or size < min_bytes:
                    continue
                use = _innermost_use(op, value)
                if use.location is None or use.location.path != ctx.path:
                    continue  # a constant inside a library: not the user's to move
                span = use.location.span
                by_place.setdefault((span.start_line, span.start_col), []).append((value, use))
        for found in by_place.values():
            yield _finding(cls, ctx, found)


def _is_constant(value: Value) -> bool:
    if value.const:
        return True
    # Newer JAX may inline a NumPy array as a literal; scalars are literals everywhere.
    return value.literal is not None and len(value.shape) > 0


def _innermost_use(op: Op, value: Value) -> Op:
    """A constant passed into a loop or branch as an operand: follow it to the body's first use."""
    for _ in range(16):
        inner = _region_input(op, value)
        if inner is None or not inner.uses:
            return op
        op, value = inner.uses[0], inner
    return op


def _region_input(op: Op, value: Value) -> Value | None:
    """The region input that ``value`` (an operand of a control-flow op) becomes, if any."""
    try:
        index = op.inputs.index(value)
    except ValueError:
        return None
    regions = op.regions
    if op.primitive == "scan" and regions:
        position = index  # scan operands are (consts, carry, xs), the body's invars likewise
        region = regions[0]
    elif op.primitive == "while" and len(regions) == 2:
        cond_n = op.params["cond_nconsts"]
        # operands: cond consts, body consts, carry; the body sees (body consts, carry)
        if index < cond_n:
            region, position = regions[0], index
        else:
            region, position = regions[1], index - cond_n
    elif op.primitive == "cond" and regions and index > 0:
        region, position = regions[0], index - 1  # operand 0 is the branch index
    else:
        return None
    if position >= len(region.inputs):
        return None
    candidate = region.inputs[position]
    if candidate.shape != value.shape or candidate.dtype != value.dtype:
        return None  # a layout this walker does not know: stay at the outer op
    return candidate


def _finding(rule: type[Rule], ctx: ProgramContext, found: list[tuple[Value, Op]]) -> Finding:
    sizes = [costs.nbytes(value) for value, _ in found]
    total = sum(sizes)
    described = ", ".join(f"{_aval_text(value)} ({size / 2**20:.1f} MiB)"
                          for (value, _), size in zip(found, sizes))
    subject = "a constant" if len(found) == 1 else f"{len(found)} constants"
    sharded = is_sharded(ctx.program)  # a constant is replicated: each device holds all of it
    copy = ("its own copy on each device of the sharded program: the cost is per device, each device holds all "
            "of it." if sharded else "its own copy on the device.")
    message = (
        f"{described} is captured by the traced function as {subject} instead of being passed as "
        f"an argument; pass it as an argument of the jitted function. Cost: the {total} bytes are "
        "embedded in the compiled program: every compilation copies them into the HLO and "
        "compiles slower (a 16 MB constant took about 3x the compile time of the same program "
        f"taking it as an argument), and the executable keeps {copy}"
    )
    if len(found) > 1:
        message = message.replace(" is captured", " are captured", 1)
    note = "bytes embedded in the compiled program as constants; the cost is compile time and device memory, " \
           "not per-call work"
    if sharded:
        note += "; per device: each device of the sharded program holds all of it"
    assert found[0][1].location is not None  # check_program keeps located uses only
    cost = Cost(basis="shapes", flops=0.0, bytes=float(total), equations=None, note=note)
    return ctx.finding(rule, message, found[0][1].location.span, cost=cost)


def _aval_text(value: Value) -> str:
    dtype = getattr(value.dtype, "name", str(value.dtype))
    return f"{dtype}[{','.join(str(d) for d in value.shape)}]"
