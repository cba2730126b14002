"""What the TPU's tiled layouts store (JX312), JAX-free: each HBM buffer of a program compiled for a
TPU target, read from the optimized module's layouts (``f32[262144,3,3]{2,1,0:T(4,128)}``), with
the bytes its data needs and the bytes its tiles take, and the user line that made it.

A TPU layout tiles the two minor dimensions (``T(8,128)``: the second-minor padded to a multiple of
8, the minor to 128), may pack elements (``(2,1)``: two bfloat16 in a 32-bit word), may widen an
element (``E(32)``) and may place the buffer in another memory (``S(1)``: on-chip VMEM), which is
not HBM and is left out. XLA chooses the entry layouts to avoid most padding
(``f32[1048576,3]{0,1:T(4,128)}``), so only what the compiled module says is read, never a guess
from the shapes; the sizes equal XLA's buffer assignment (tests/test_jx312.py compares them)."""
from __future__ import annotations

import math
import re
from dataclasses import dataclass

from jaxlint.ir import hlo
from jaxlint.ir.memory import Frame

RATIO = 8.0  # a buffer is reported when its tiles take this many times its data
EXTRA = 64 * 2**20  # and this many bytes more
REWRITTEN_LINES = 3  # lines of products per program whose rewrite is compiled

_ARRAY = re.compile(r"\b([a-z][a-z0-9]*)\[([^\]]*)\](?:\{([^{}]*)\})?")
_TILES = re.compile(r"T((?:\(\d+(?:,\d+)*\))+)")
_GROUP = re.compile(r"\((\d+(?:,\d+)*)\)")
_SPACE = re.compile(r"S\((\d+)\)")
_ELEMENT_BITS = re.compile(r"E\((\d+)\)")
# Instructions that name a buffer another instruction made (or none): not buffers of their own. An
# asynchronous pair's buffer is its ``-done``'s (the ``-start`` tuple holds its operand too), and a
# loop's results are the buffers its body updates in place.
_ALIASES = frozenset({"bitcast", "get-tuple-element", "tuple", "after-all", "add-dependency", "opt-barrier",
                      "domain", "while", "call"})
# Computations run inside a fusion are not buffers; these are the ones that hold buffers.
_HOLDING = ("body", "condition", "true_computation", "false_computation", "branch")


@dataclass(frozen=True)
class Padded:
    """One HBM buffer of the compiled program and what its tiles take."""

    name: str  # the HLO instruction that made it
    shape: str  # "f32[262144,3,3]"
    layout: str  # "2,1,0:T(4,128)"
    data: int  # bytes of its elements
    stored: int  # bytes its layout takes
    kind: str  # "argument", "output" or "temporary"
    frames: tuple[Frame, ...]  # the user frames that made it (or its first user), innermost first
    op_name: str = ""  # the HLO metadata's op_name: "jit(f)/dot_general"

    @property
    def ratio(self) -> float:
        return self.stored / self.data if self.data else math.inf

    @property
    def extra(self) -> int:
        return self.stored - self.data

    @property
    def tile(self) -> str:
        """The layout's first tile, as the message names it: ``(4, 128)``."""
        match = _TILES.search(self.layout)
        first = _GROUP.search(match.group(1)) if match else None
        return f"({first.group(1).replace(',', ', ')})" if first else ""


@dataclass(frozen=True)
class Rewrite:
    """A rewrite of the padded line, compiled for the target."""

    text: str  # what to write, in the message's words
    needed: int | None  # bytes the rewritten program needs (arguments + outputs + temporaries); None: not compiled
    edit: str = ""  # the expression that replaces the line's product, when it is mechanical
    same_values: bool = False  # evaluated on random inputs: equal to the original within float32 rounding


@dataclass(frozen=True)
class Padding:
    """The buffers of one program whose tiles take far more than their data, on the target chip."""

    target: str  # "TPU v5e"
    needed: int  # bytes the program needs: arguments + outputs + temporaries
    buffers: tuple[Padded, ...]  # the padded ones, largest first
    rewrites: tuple[tuple[tuple[str, int], Rewrite], ...] = ()  # ((path, line), rewrite) measured
    together: Rewrite | None = None  # the products of all ``product_lines`` rewritten at once
    product_lines: tuple[tuple[str, int], ...] = ()  # the lines of padded products (path, line)


def stored_bytes(dtype: str, dims: tuple[int, ...], layout: str) -> int | None:
    """The bytes ``dtype[dims]`` takes in ``layout`` (the text between the braces, minor-to-major
    order then ``:`` and the tiling); None when the layout puts it outside HBM (``S(1)``)."""
    order_text, _, tiling = layout.partition(":")
    space = _SPACE.search(tiling)
    if space is not None and space.group(1) != "0":
        return None
    bits_match = _ELEMENT_BITS.search(tiling)
    bits = int(bits_match.group(1)) if bits_match else hlo.ITEM_BYTES.get(dtype, 4) * 8
    tiles_match = _TILES.search(tiling)
    padded = list(dims)
    factor = 1
    if tiles_match is not None:
        tiles = [tuple(int(v) for v in group.split(",")) for group in _GROUP.findall(tiles_match.group(1))]
        order = [int(v) for v in order_text.split(",") if v.strip()]
        first = tiles[0]
        for position, size in enumerate(reversed(first)):
            if position < len(order):
                axis = order[position]
                padded[axis] = -(-padded[axis] // size) * size
            else:
                factor *= size  # a tile dimension beyond the array's rank: the array is one row of it
        shape = list(first)
        for tile in tiles[1:]:  # a later tile subdivides the first one (element packing)
            for position, size in enumerate(reversed(tile)):
                index = len(shape) - 1 - position
                if index >= 0:
                    shape[index] = -(-shape[index] // size) * size
            factor = factor * math.prod(shape) // math.prod(first) if math.prod(first) else factor
    return math.prod(padded) * factor * bits // 8


def _arrays(shape: str) -> list[tuple[str, tuple[int, ...], str]]:
    found = []
    for dtype, dims, layout in _ARRAY.findall(shape):
        sizes = [d.strip().lstrip("<=") for d in dims.split(",") if d.strip()]
        if all(s.isdigit() for s in sizes):
            found.append((dtype, tuple(int(s) for s in sizes), layout or ""))
    return found


def program_bytes(module: hlo.Module, temporaries: int) -> int:
    """Arguments + outputs (as their layouts store them) + ``temporaries``: what the program needs."""
    entry = module.computations[module.entry]
    total = temporaries
    for instruction in entry.instructions:
        if instruction.opcode == "parameter" or instruction.is_root:
            total += sum(s or 0 for s in (stored_bytes(*a) for a in _arrays(instruction.shape)))
    return total


def buffers(module: hlo.Module, skip: str = "") -> list[Padded]:
    """Every HBM array buffer of the module: its entry's and those of the computations its loops
    and branches run (a fusion's insides are registers, not buffers); frames from files under
    ``skip`` (jaxlint's own) are dropped. An instruction with no user frame (the copy of an
    argument into another layout) takes those of its first user that has one."""
    entry = module.computations[module.entry]
    names = {entry.name}
    pending = [entry.name]
    while pending:
        computation = module.computations.get(pending.pop())
        for instruction in computation.instructions if computation is not None else ():
            for role, called in hlo.called(instruction):
                if role in _HOLDING and called not in names:
                    names.add(called)
                    pending.append(called)
    users: dict[str, list[hlo.Instruction]] = {}
    for name in names:
        for instruction in module.computations[name].instructions:
            for operand in instruction.operands:
                users.setdefault(operand, []).append(instruction)
    root = entry.root
    outputs = ({root.name} | (set(root.operands) if root.opcode == "tuple" else set())) if root else set()
    found = []
    for name in sorted(names, key=lambda n: n != entry.name):
        for instruction in module.computations[name].instructions:
            if instruction.opcode in _ALIASES or instruction.opcode.endswith("-start") or \
                    (instruction.opcode == "parameter" and name != entry.name):
                continue
            kind = "argument" if instruction.opcode == "parameter" else \
                "output" if name == entry.name and instruction.name in outputs else "temporary"
            frames = _frames(module, instruction, users, skip)
            for dtype, dims, layout in _arrays(instruction.shape):
                stored = stored_bytes(dtype, dims, layout)
                if stored is None:
                    continue
                data = math.prod(dims) * hlo.ITEM_BYTES.get(dtype, 4)
                found.append(Padded(instruction.name, f"{dtype}[{','.join(map(str, dims))}]", layout, data,
                                    stored, kind, frames, instruction.metadata.get("op_name", "")))
    return found


def _frames(module: hlo.Module, instruction: hlo.Instruction, users: dict[str, list[hlo.Instruction]],
            skip: str) -> tuple[Frame, ...]:
    seen = set()
    pending = [instruction]
    while pending:
        current = pending.pop(0)
        if current.name in seen:
            continue
        seen.add(current.name)
        frames = tuple(Frame(f.file, f.line, f.column, f.end_column) for f in module.stack(current)
                       if f.line > 0 and not (skip and f.file.startswith(skip)))
        if frames:
            return frames
        if current.opcode != "parameter" or current is instruction:
            pending.extend(users.get(current.name, ()))
    return ()


def padded(module: hlo.Module, ratio: float, extra: int, skip: str = "") -> list[Padded]:
    """The buffers whose tiles take at least ``ratio`` times their data and ``extra`` bytes more,
    largest first."""
    return sorted((b for b in buffers(module, skip) if b.ratio >= ratio and b.extra >= extra),
                  key=lambda b: -b.stored)
