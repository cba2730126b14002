"""What XLA's SPMD partitioner says while compiling a sharded program, in pure Python: its
"Involuntary full rematerialization" warnings, captured from the compile itself and parsed.

XLA gives the warning nowhere but its C++ log on file descriptor 2 (no debug option, attribute or
HLO annotation records it), so ``captured_stderr`` points descriptor 2 at a temporary file for the
duration of one compile, keeps the warning lines and writes every other line back where it was
going: nothing else a compile prints is lost, and nothing is read from the user's terminal.

Two dialects (JAX 0.10.2, then 0.4.35):
  ... [SPMD] Involuntary full rematerialization. The compiler cannot go from sharding {A} to {B}
  efficiently for HLO operation %add.2 = f32[4,16,2]{2,1,0} add(...), sharding={A},
  metadata={op_name="jit(h)/add" stack_frame_id=3}. As the last resort, ...
  ... [spmd] Involuntary full rematerialization. The compiler was not able to go from sharding {A}
  to {B} without doing a full rematerialization of the tensor for HLO operation: %copy.2 = ...
  metadata={op_name="..." source_file="..." source_line=21}. You probably want ...
"""
from __future__ import annotations

import os
import re
import sys
import tempfile
from contextlib import contextmanager
from dataclasses import dataclass
from typing import Iterator

from jaxlint.ir import hlo
from jaxlint.ir.memory import Frame

MARKER = "Involuntary full rematerialization"
_FROM = re.compile(r"go from sharding ")
_OPERATION = re.compile(r"for HLO operation:?\s+%(?P<name>[\w.\-]+)\s+=\s+(?P<shape>[a-z][a-z0-9]*\[[^\]]*\])")
_METADATA = re.compile(r"metadata=\{(?P<items>[^{}]*)\}")
_METADATA_ITEM = re.compile(r'(\w+)=("(?:[^"\\]|\\.)*"|[^\s}]+)')
_TILES = re.compile(r"devices=\[(?P<tiles>[\d,]+)\]")
_LAST_TILE_DIMS = re.compile(r"last_tile_dims=\{(?P<types>[^{}]*)\}")


@dataclass(frozen=True)
class PartitionerWarning:
    """One warning as the partitioner printed it."""

    operation: str  # the HLO instruction it names, "add.2"
    source: str  # the HLO sharding the value had, "{devices=[2,1,4]<=[4,2]T(1,0)}"
    target: str  # the one it was asked for
    shard_shape: str  # the instruction's per-device shape, "f32[4,16,2]"
    metadata: dict[str, str]  # op_name, stack_frame_id or source_file/source_line


@dataclass(frozen=True)
class Rematerialization:
    """A value the partitioner replicated on every device to go between two shardings."""

    operation: str  # the HLO instruction, "add.2"
    op_name: str  # JAX's name for it, "jit(h)/add"
    source: str  # HLO sharding, as printed
    target: str
    source_spec: str | None  # the same as a PartitionSpec over the mesh axes, "P('y', None, 'x')"
    target_spec: str | None
    shape: str  # the whole value, "f32[8,16,8]"
    nbytes: int
    frames: tuple[Frame, ...]  # user frames of the operation, innermost first; () when XLA kept none
    requested: tuple[Frame, ...]  # where the value a constraint (or out sharding) asks ``target`` of was computed


@contextmanager
def captured_stderr(write_back: bool = True) -> Iterator[list[str]]:
    """Yields a list that holds, once the block is left, the partitioner warnings written to file
    descriptor 2 inside it; every other line is written back to descriptor 2 (``write_back``;
    else dropped: libtpu's report of a compile refused for lack of HBM, which jaxlint asked for)."""
    caught: list[str] = []
    sys.stderr.flush()
    saved = os.dup(2)
    sink = tempfile.TemporaryFile()
    try:
        os.dup2(sink.fileno(), 2)
        yield caught
    finally:
        sys.stderr.flush()
        os.dup2(saved, 2)
        os.close(saved)
        sink.seek(0)
        others = []
        for line in sink.read().splitlines(keepends=True):
            if MARKER.encode() in line:
                caught.append(line.decode(errors="replace").rstrip("\r\n"))
            else:
                others.append(line)
        sink.close()
        if others and write_back:
            os.write(2, b"".join(others))


def parse(line: str) -> PartitionerWarning | None:
    """The warning of one log line, or None when the line is not one this parser knows."""
    start = _FROM.search(line)
    if MARKER not in line or start is None:
        return None
    source, rest = _braced(line, start.end())
    if source is None or not rest.startswith(" to "):
        return None
    target, rest = _braced(rest, len(" to "))
    operation = _OPERATION.search(rest)
    if target is None or operation is None:
        return None
    metadata = _METADATA.search(rest[operation.end():])
    items = {k: v.strip('"') for k, v in _METADATA_ITEM.findall(metadata["items"])} if metadata else {}
    return PartitionerWarning(operation["name"], source, target, operation["shape"], items)


def _braced(text: str, start: int) -> tuple[str | None, str]:
    """(the balanced ``{...}`` at ``start``, the text after it), or (None, text)."""
    if text[start:start + 1] != "{":
        return None, text
    depth = 0
    for index in range(start, len(text)):
        depth += {"{": 1, "}": -1}.get(text[index], 0)
        if depth == 0:
            return text[start:index + 1], text[index + 1:]
    return None, text


def full_shape(shard_shape: str, sharding: str) -> str:
    """The unsharded shape of a value whose per-device shape under ``sharding`` is ``shard_shape``:
    each dimension times its number of tiles (uneven tiles are padded, so this can exceed the
    value by less than one tile per dimension)."""
    [(dtype, dims)] = hlo.arrays(shard_shape) or [("f32", ())]
    tiles = _TILES.search(sharding)
    if tiles is None:  # replicated or maximal: every device holds the whole value
        return f"{dtype}[{','.join(str(d) for d in dims)}]"
    counts = [int(t) for t in tiles["tiles"].split(",")]
    trailing = _LAST_TILE_DIMS.search(sharding)
    extra = len(trailing["types"].split(",")) if trailing else 1 if "last_tile_dim_replicate" in sharding else 0
    counts = counts[:len(counts) - extra]
    if len(counts) != len(dims):
        return f"{dtype}[{','.join(str(d) for d in dims)}]"
    return f"{dtype}[{','.join(str(d * c) for d, c in zip(dims, counts))}]"
