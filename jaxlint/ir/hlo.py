"""Parse the text of an optimized HLO module (``Compiled.as_text()``), in pure Python.

Two metadata dialects: up to JAX 0.4.x an instruction carries ``source_file``/``source_line`` (the
innermost user frame only); newer releases print ``FileNames``/``FileLocations``/``StackFrames``
tables once and give each instruction a ``stack_frame_id``, whose chain reaches every user frame.
"""
from __future__ import annotations

import math
import re
from dataclasses import dataclass, field

from jaxlint.text import CLOSING_BRACKETS, outside_strings, top_level_items

_COMPUTATION = re.compile(r"^(ENTRY\s+)?%?(?P<name>[\w.\-]+)\s+\(.*\)\s+->\s+.*\{\s*$")
_INSTRUCTION = re.compile(r"^\s*(?P<root>ROOT\s+)?%?(?P<name>[\w.\-]+)\s+=\s+")
_OPERAND = re.compile(r"%([\w.\-]+)")
_METADATA_ITEM = re.compile(r'(\w+)=("(?:[^"\\]|\\.)*"|[^\s}]+)')
_TABLE_ENTRY = re.compile(r"^(\d+)\s+(.*)$")
_ARRAYS = re.compile(r"\b([a-z][a-z0-9]*)\[([^\]]*)\]")
_TRIP_COUNT = re.compile(r'"known_trip_count":\{"n":"(\d+)"\}')

ITEM_BYTES = {"pred": 1, "s2": 1, "u2": 1, "s4": 1, "u4": 1, "s8": 1, "u8": 1, "s16": 2, "u16": 2,
              "f16": 2, "bf16": 2, "s32": 4, "u32": 4, "f32": 4, "s64": 8, "u64": 8, "f64": 8,
              "c64": 8, "c128": 16, "token": 0}
# Attributes that say where or how an instruction was made, not what it computes.
NON_SEMANTIC = frozenset({"metadata", "backend_config", "sharding", "frontend_attributes",
                          "statistics", "origin", "control-predecessors", "operand_precision"})


@dataclass
class Instruction:
    name: str
    opcode: str
    shape: str  # as printed, layout included: "f32[8,16]{1,0}" or a tuple "(s32[], f32[3]{0})"
    operands: list[str]  # instruction names
    attrs: dict[str, str]
    metadata: dict[str, str]
    text: str  # the whole line, stripped
    computation: str
    is_root: bool
    literal: str | None = None  # constant(...) / parameter(...) payload


@dataclass
class Computation:
    name: str
    is_entry: bool
    instructions: list[Instruction] = field(default_factory=list)

    @property
    def root(self) -> Instruction | None:
        return next((i for i in self.instructions if i.is_root), self.instructions[-1] if self.instructions else None)

    def parameter(self, index: int) -> Instruction | None:
        return next((i for i in self.instructions if i.opcode == "parameter" and i.literal == str(index)), None)


@dataclass(frozen=True)
class Frame:
    file: str
    line: int
    column: int | None
    end_column: int | None
    function: str
    parent: int  # frame id, 0 for none


@dataclass
class Module:
    name: str
    computations: dict[str, Computation]
    entry: str
    frames: dict[int, Frame]
    # The devices one SPMD program runs on (the header's num_partitions): above 1, the shapes are
    # each device's share of a sharded program, and every figure read from them is per device.
    partitions: int = 1

    def instructions(self) -> dict[str, Instruction]:
        return {i.name: i for c in self.computations.values() for i in c.instructions}

    def stack(self, instruction: Instruction) -> list[Frame]:
        """The user frames that made ``instruction``, innermost first."""
        return self.frames_of(instruction.metadata)

    def frames_of(self, meta: dict[str, str]) -> list[Frame]:
        """The user frames of an instruction's metadata (also one printed outside the module, as
        the partitioner's log names it), innermost first."""
        if "stack_frame_id" in meta:
            frames, seen = [], set()
            frame_id = _int(meta["stack_frame_id"])
            while frame_id and frame_id in self.frames and frame_id not in seen:
                seen.add(frame_id)
                frames.append(self.frames[frame_id])
                frame_id = self.frames[frame_id].parent
            return frames
        if "source_file" in meta and "source_line" in meta:
            return [Frame(meta["source_file"], _int(meta["source_line"]) or 0, None, None, "", 0)]
        return []

    def line_in(self, instruction: Instruction, path: str) -> int | None:
        """The line of ``path`` (innermost frame in that file) that made the instruction."""
        return next((f.line for f in self.stack(instruction) if f.file == path), None)

    def location(self, instruction: Instruction) -> tuple | None:
        """Where the instruction comes from, as precisely as the metadata says (for identity)."""
        stack = self.stack(instruction)
        if not stack:
            return None
        top = stack[0]
        return (top.file, top.line, top.column, top.end_column)


def parse(text: str) -> Module:
    """The module's computations, instructions and stack frames (ValueError if not HLO text)."""
    lines = text.splitlines()
    name = ""
    if lines and lines[0].startswith("HloModule"):
        name = lines[0].split()[1].rstrip(",")
    tables = _tables(lines)
    frames = _frames(tables)
    computations: dict[str, Computation] = {}
    entry, current = "", None
    for line in lines:
        if current is None:
            match = _COMPUTATION.match(line)
            if match:
                current = Computation(match["name"], bool(match.group(1)))
                computations[current.name] = current
                entry = current.name if current.is_entry else entry
            continue
        if line.strip() == "}":
            current = None
            continue
        instruction = _instruction(line, current.name)
        if instruction is not None:
            current.instructions.append(instruction)
    if not entry:
        raise ValueError("no ENTRY computation in the HLO text")
    header = re.search(r"\bnum_partitions=(\d+)", lines[0]) if lines else None
    return Module(name, computations, entry, frames, int(header.group(1)) if header else 1)


def _instruction(line: str, computation: str) -> Instruction | None:
    match = _INSTRUCTION.match(line)
    if match is None:
        return None
    rest = line[match.end():]
    if rest.startswith("("):
        end = _closing(rest, 0)
        shape, rest = rest[:end + 1], rest[end + 1:].lstrip()
    else:
        shape, _, rest = rest.partition(" ")
    opcode, paren, rest = rest.partition("(")
    if not paren:
        return None
    end = _closing("(" + rest, 0) - 1
    inside, after = rest[:end], rest[end + 1:]
    attrs = dict(_split_attr(item) for item in top_level_items(after.lstrip(", "), quotes='"', strict=False) if "=" in item)
    metadata = dict((k, _unquote(v)) for k, v in _METADATA_ITEM.findall(attrs.get("metadata", "")))
    literal = inside.strip() if opcode in ("constant", "parameter") else None
    operands = [] if opcode == "constant" else _OPERAND.findall(inside)
    return Instruction(match["name"], opcode.strip(), shape, operands, attrs, metadata, line.strip(),
                       computation, bool(match["root"]), literal)


def _closing(text: str, start: int) -> int:
    """Index of the bracket closing the one at ``start`` (quotes respected); len-1 if unclosed."""
    return next((i for i, ch, depth in outside_strings(text, start, quotes='"', strict=False)
                 if depth == 0 and ch in CLOSING_BRACKETS), len(text) - 1)


def _split_attr(item: str) -> tuple[str, str]:
    key, _, value = item.partition("=")
    value = value.strip()
    if value.startswith("{") and value.endswith("}") and key.strip() == "metadata":
        value = value[1:-1]
    return key.strip(), value


def _unquote(value: str) -> str:
    if len(value) >= 2 and value[0] == value[-1] == '"':
        return value[1:-1].replace('\\"', '"').replace("\\\\", "\\")
    return value


def _int(text: str) -> int | None:
    try:
        return int(text)
    except (TypeError, ValueError):
        return None


def _tables(lines: list[str]) -> dict[str, dict[int, str]]:
    """The frame tables newer XLA prints after the module header: section -> id -> entry text."""
    tables: dict[str, dict[int, str]] = {}
    section = None
    for line in lines[1:]:
        stripped = line.strip()
        if stripped in ("FileNames", "FunctionNames", "FileLocations", "StackFrames"):
            section = tables.setdefault(stripped, {})
            continue
        if section is None:
            if stripped.startswith(("%", "ENTRY", "HloModule")) or "(" in stripped:
                break  # the computations began: no tables
            continue
        match = _TABLE_ENTRY.match(stripped)
        if match:
            section[int(match[1])] = match[2]
        elif stripped:
            section = None
            if stripped.startswith(("%", "ENTRY")):
                break
    return tables


def _fields(entry: str) -> dict[str, str]:
    return dict(_METADATA_ITEM.findall(entry.strip("{}")))


def _frames(tables: dict[str, dict[int, str]]) -> dict[int, Frame]:
    files = {k: _unquote(v) for k, v in tables.get("FileNames", {}).items()}
    functions = {k: _unquote(v) for k, v in tables.get("FunctionNames", {}).items()}
    locations = {k: _fields(v) for k, v in tables.get("FileLocations", {}).items()}
    raw = {k: _fields(v) for k, v in tables.get("StackFrames", {}).items()}
    # XLA prints a frame's parent as its id plus one (the root frame shows itself as its own
    # parent). Should that change, no frame would name itself: read the ids literally then.
    shift = 1 if any(_int(v.get("parent_frame_id", "")) == k for k, v in raw.items()) else 0
    frames = {}
    for frame_id, entry in raw.items():
        location = locations.get(_int(entry.get("file_location_id", "")) or 0)
        if location is None:
            continue
        parent = max((_int(entry.get("parent_frame_id", "0")) or 0) - shift, 0)
        frames[frame_id] = Frame(files.get(_int(location.get("file_name_id", "")) or 0, ""),
                                 _int(location.get("line", "")) or 0, _int(location.get("column", "")),
                                 _int(location.get("end_column", "")),
                                 functions.get(_int(location.get("function_name_id", "")) or 0, ""),
                                 parent if parent != frame_id else 0)
    return frames


# --- shapes ------------------------------------------------------------------------------------


def arrays(shape: str) -> list[tuple[str, tuple[int, ...]]]:
    """(dtype, dims) of every array in a shape (a tuple shape has several)."""
    found = []
    for dtype, dims in _ARRAYS.findall(shape):
        sizes = [d.strip().lstrip("<=") for d in dims.split(",") if d.strip()]
        found.append((dtype, tuple(int(d) for d in sizes if d.isdigit())))
    return found


def elements(shape: str) -> int:
    return sum(math.prod(dims) for _, dims in arrays(shape))


def nbytes(shape: str) -> int:
    return sum(math.prod(dims) * ITEM_BYTES.get(dtype, 4) for dtype, dims in arrays(shape))


def plain_shape(shape: str) -> str:
    """The shape without layouts: ``f32[8,16]{1,0}`` -> ``f32[8,16]``."""
    return re.sub(r"\{[^{}]*\}", "", shape)


def trip_count(instruction: Instruction) -> int | None:
    """A while loop's trip count when XLA knows it (``known_trip_count`` in its backend config)."""
    match = _TRIP_COUNT.search(instruction.attrs.get("backend_config", ""))
    return int(match[1]) if match else None


def called(instruction: Instruction) -> list[tuple[str, str]]:
    """(role, computation name) of the computations an instruction calls."""
    found = []
    for key in ("calls", "body", "condition", "to_apply", "true_computation", "false_computation"):
        value = instruction.attrs.get(key)
        if value:
            found.extend((key, name) for name in _OPERAND.findall(value) or [value.strip("%")])
    branches = instruction.attrs.get("branch_computations")
    if branches:
        found.extend(("branch", name) for name in _OPERAND.findall(branches))
    return found
