"""What a program needs of a TPU chip's HBM (JX311), JAX-free: the facts the worker's compile
(jaxlint.ir.fit) hands the rule, and the readers of what XLA says about it: the
RESOURCE_EXHAUSTED message of a compile that does not fit, and the live ranges XLA's dump
(``xla_dump_to``) writes even for that compile (``*-live-range.txt``: the buffers live at the
peak, by HLO instruction, whose metadata names the source line)."""
from __future__ import annotations

import re
from dataclasses import dataclass

from jaxlint.ir.memory import Frame

# XLA's refusal: "... required for HLO temporaries (48.00G) exceeds available HBM (15.75G)."
# libtpu 0.0.42 (JAX 0.10): "the total memory required for HLO temporaries (48.00G) exceeds
# available HBM (15.75G)"; libtpu 0.0.2 (JAX 0.4.35): "Requires 384.00G, has 14.96G available".
_REQUIRED = re.compile(r"required for [^(]*\(([0-9.]+)([KMGT]?)\) exceeds available HBM \(([0-9.]+)([KMGT]?)\)"
                       r"|Requires ([0-9.]+)([KMGT]?), has ([0-9.]+)([KMGT]?) available")
_UNITS = {"": 1, "K": 2 ** 10, "M": 2 ** 20, "G": 2 ** 30, "T": 2 ** 40}
_PEAK = re.compile(r"^\s*Live ranges at \d+ \(peak\):\s*$")
_LIVE = re.compile(r"^\s*(?P<name>[\w.\-]+)\{[^}]*\}:\s*(?P<bytes>\d+) bytes")
# Slices of each generation, smallest first: the chips' shape (libtpu's topology names them).
SLICES = {2: ((2, 2), (2, 4), (4, 4), (4, 8), (8, 8), (8, 16), (16, 16)),
          3: ((2, 2, 1), (2, 2, 2), (2, 2, 4), (2, 4, 4), (4, 4, 4), (4, 4, 8))}
NEAR = 0.9  # at this share of the chip's HBM or more, explain says so


@dataclass(frozen=True)
class Buffer:
    """One buffer live at the peak: the HLO value that holds it and the user line that made it."""

    name: str  # the HLO instruction ("convolution_tanh_fusion.2", "x.1")
    shape: str  # "f32[65536,32768]"
    nbytes: int
    kind: str  # "argument", "output" or "temporary"
    frames: tuple[Frame, ...]  # the user frames that made it, innermost first; () unknown
    argument: str = ""  # an argument's name ("ws[0]"), from the parameter's op_name
    op_name: str = ""  # the HLO metadata's op_name: "jit(f)/transpose(jvp())/dot_general"

    @property
    def differentiated(self) -> bool:
        """Made by a gradient (a JVP or its transpose): checkpointing can drop it."""
        return "jvp(" in self.op_name


@dataclass(frozen=True)
class Remedy:
    """One change that would make the program fit, and what compiling it said."""

    kind: str  # "batch", "donate", "shard", "remat"
    text: str  # what to do, in the message's words
    verified: bool  # compiled for the target (or the slice) and fits
    needed: int | None = None  # bytes per chip it needs, when compiled


@dataclass(frozen=True)
class Hbm:
    """One program's fit on the target chip."""

    target: str  # the target's label, "TPU v5e"
    available: int  # bytes the compiler allows one chip
    needed: int  # bytes the program needs at its peak (per chip)
    failed: bool  # the compile ran out of HBM (RESOURCE_EXHAUSTED)
    buffers: tuple[Buffer, ...]  # the largest live at the peak, largest first
    remedies: tuple[Remedy, ...] = ()
    function: str = ""  # the jit's function name
    defined: Frame | None = None  # where it is defined
    placed: bool = False  # sharded by the module over the slice's chips: every figure is one chip's share

    @property
    def share(self) -> float:
        return self.needed / self.available if self.available else 0.0

    @property
    def overflows(self) -> bool:
        return self.failed or self.needed > self.available


def parse_required(message: str) -> tuple[int, int] | None:
    """(bytes required, bytes available) of XLA's RESOURCE_EXHAUSTED message."""
    match = _REQUIRED.search(message)
    if match is None:
        return None
    groups = match.groups()[:4] if match.group(1) else match.groups()[4:]
    return (int(float(groups[0]) * _UNITS[groups[1]]), int(float(groups[2]) * _UNITS[groups[3]]))


def peak_live(text: str) -> list[tuple[str, int]]:
    """(instruction, bytes) of each buffer live at the peak, from a ``*-live-range.txt`` dump."""
    found, inside = [], False
    for line in text.splitlines():
        if _PEAK.match(line):
            inside = True
            continue
        if inside:
            match = _LIVE.match(line)
            if match is None:
                break
            found.append((match["name"], int(match["bytes"])))
    return found


def slices(generation_dimensions: int, chips_needed: int) -> list[tuple[int, ...]]:
    """The slice shapes of a generation with at least ``chips_needed`` chips, smallest first."""
    found = []
    for shape in SLICES.get(generation_dimensions, ()):
        count = 1
        for size in shape:
            count *= size
        if count >= chips_needed:
            found.append(shape)
    return found


def gib(nbytes: float) -> str:
    """A size as XLA's messages write it: ``48.00 GiB``."""
    return f"{nbytes / 2 ** 30:.2f} GiB"
