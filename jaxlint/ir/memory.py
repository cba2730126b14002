"""What the compiled program says about memory, as JAX-free data the memory rules read (JX306,
JX307, JX308), and how it is read from the optimized HLO text (jaxlint.ir.hlo). The worker compiles
(jaxlint.ir.compile); rules see only these types, through ``Program.compiled``.
(explain/memory.py is explain's memory section, which reads these.)"""
from __future__ import annotations

import re
from dataclasses import dataclass

from jaxlint.ir import Op, hlo, innermost_loop_over


@dataclass(frozen=True)
class Frame:
    """A user frame: file, line, and the line's columns in UTF-8 bytes (None: not known)."""

    path: str
    line: int
    column: int | None = None
    end_column: int | None = None


@dataclass(frozen=True)
class Donation:
    """One donated argument leaf of a jit and whether XLA writes an output into its buffer."""

    index: int  # among the jit's flattened arguments
    name: str  # JAX's name for the leaf (``state['w']``), else ``argument 3``
    shape: str  # ``f32[1024,1024]``
    nbytes: int
    aliased: bool
    # Why it is not aliased: "no-output" (XLA lists it as a buffer_donor: no output of its size is
    # left), "dropped" (JAX dropped it while lowering: 0.4.35 wants the same shape and dtype) or
    # "unused" (the function never reads it, jit prunes it); "" when aliased.
    reason: str = ""
    shards: int = 1  # the pieces its sharding splits it into: each device holds nbytes / shards


@dataclass(frozen=True)
class DonatingJit:
    """A jit with donated arguments, called at the top of the traced program, compiled."""

    function: str  # the jitted function's name
    defined: Frame | None  # where it is defined (its first line: a decorator's, if any)
    call: tuple[Frame, ...]  # the user frames of the call, outermost first (none: the target itself)
    donations: tuple[Donation, ...]
    warnings: tuple[str, ...]  # JAX's "Some donated buffers were not usable" lines
    devices: int = 1  # the compiled program's partitions (above 1: a sharded program)


@dataclass(frozen=True)
class LoopCopies:
    """A while loop of the optimized HLO (scan and fori_loop become one) and the copies of
    loop-carried buffers its body makes each iteration (through fusions, calls and branches; a
    nested loop's copies are that loop's)."""

    frames: tuple[Frame, ...]  # the while's user frames, outermost first (0.4.35: often none)
    body_frames: tuple[Frame, ...]  # innermost frames of the body's instructions (to place it without)
    trip_count: int | None  # XLA's known_trip_count
    copies: tuple[tuple[str, int], ...]  # (shape, bytes) of each copy, per iteration
    devices: int = 1  # the compiled program's partitions: above 1, shapes and bytes are per device


@dataclass(frozen=True)
class Remat:
    """XLA's temporary memory for a traced gradient, as traced and with one loop body checkpointed
    (jaxlint.ir.remat), in bytes."""

    temp_bytes: int
    checkpointed_temp_bytes: int
    devices: int = 1  # the compiled program's partitions: above 1, both figures are per device


_ALIAS_ENTRY = re.compile(r"\{[^{}]*\}\s*:\s*\(\s*(\d+)\s*,")
_DONOR_ENTRY = re.compile(r"\(\s*(\d+)\s*,\s*\{[^{}]*\}\s*\)")


def alias_parameters(text: str) -> tuple[set[int], set[int]]:
    """(parameters in ``input_output_alias``, parameters listed as ``buffer_donor``) of the
    module's header line."""
    header = next((line for line in text.splitlines() if line.startswith("HloModule")), "")
    return (set(map(int, _ALIAS_ENTRY.findall(_section(header, "input_output_alias")))),
            set(map(int, _DONOR_ENTRY.findall(_section(header, "buffer_donor")))))


def _section(header: str, key: str) -> str:
    """The braced value of ``key=`` in the header, its nested braces included."""
    start = header.find(key + "={")
    if start < 0:
        return ""
    depth = 0
    for i in range(start + len(key) + 1, len(header)):
        depth += header[i] == "{"
        depth -= header[i] == "}"
        if depth == 0:
            return header[start + len(key) + 2:i]
    return ""


def loop_copies(text: str) -> list[LoopCopies]:
    """Every while loop of an optimized HLO module with the copies its body makes of buffers
    shaped like one of its carried elements."""
    module = hlo.parse(text)
    found = []
    for computation in module.computations.values():
        for instruction in computation.instructions:
            if instruction.opcode != "while":
                continue
            body = next((name for role, name in hlo.called(instruction) if role == "body"), None)
            if body is None:
                continue
            carried = {hlo.plain_shape(f"{dtype}[{','.join(map(str, dims))}]")
                       for dtype, dims in hlo.arrays(instruction.shape)}
            copies, located = [], []
            reached = _reached(module, body)
            shape_of = {(i.computation, i.name): i.shape for i in reached}
            for inner in reached:
                operand = shape_of.get((inner.computation, inner.operands[0])) if inner.operands else None
                # A copy into another layout is a transpose XLA materializes, not a carry kept alive.
                if inner.opcode == "copy" and hlo.plain_shape(inner.shape) in carried \
                        and (operand is None or _layout(operand) == _layout(inner.shape)):
                    copies.append((hlo.plain_shape(inner.shape), hlo.nbytes(inner.shape)))
                stack = module.stack(inner)
                if stack:
                    located.append(_frame(stack[0]))
            frames = tuple(_frame(f) for f in reversed(module.stack(instruction)))
            found.append(LoopCopies(frames, tuple(dict.fromkeys(located)), hlo.trip_count(instruction),
                                    tuple(copies), module.partitions))
    return found


def _layout(shape: str) -> str:
    """The layout of an array shape as printed: ``{2,1,0}`` of ``f32[8,4,2]{2,1,0}``."""
    return shape[shape.rfind("]") + 1:]


def _reached(module: hlo.Module, name: str) -> list[hlo.Instruction]:
    """The instructions of computation ``name`` and of those it calls, but not of nested loops."""
    seen, order, pending = set(), [], [name]
    while pending:
        current = pending.pop()
        if current in seen or current not in module.computations:
            continue
        seen.add(current)
        for instruction in module.computations[current].instructions:
            order.append(instruction)
            if instruction.opcode != "while":
                pending.extend(called for _, called in hlo.called(instruction))
    return order


def _frame(frame: hlo.Frame) -> Frame:
    return Frame(frame.file, frame.line, frame.column, frame.end_column)


def loop_in_file(loop: LoopCopies, loops: list[Op], path: str) -> tuple[Frame, Op | None] | None:
    """Where a compiled while loop is in ``path``, with the IR loop at it (``loops``: the IR's scans
    and whiles made in ``path``): its own innermost frame there; without one (JAX 0.4.35 gives a
    transposed loop no metadata) the IR loop whose body made the body's instructions; None when
    neither is in ``path``."""
    frame = next((f for f in reversed(loop.frames) if f.path == path), None)
    if frame is not None:
        return frame, next((op for op in loops if op.location.span.start_line == frame.line), None)
    for body in loop.body_frames:
        if body.path != path:
            continue
        op = next((op for op in loops if op.location.span.start_line == body.line), None) or \
            innermost_loop_over(loops, body.line)
        if op is not None:
            return Frame(path, op.location.span.start_line), op
    return None
