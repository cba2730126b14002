"""The summary page's condensing: a block of equations traced again and again from the same source
lines (a Python loop, unrolled by tracing) shown once with its count, and HLO instructions of one
source line grouped by what they are. JAX-free; terminal.py renders what these return.
"""
from __future__ import annotations

import re
from collections import Counter
from typing import Any, Hashable, Sequence

# The longest block looked for: a loop body of up to this many equations.
LONGEST_PERIOD = 64
# A block is condensed from this many repeats in a row (two could be code written twice).
FEWEST_REPEATS = 3
# ... and when it spans this many equations (``a + b + c + d`` is three adds in a row, no loop).
FEWEST_EQUATIONS = 12
_NAME = re.compile(r"\b[a-z]+:")  # ``c:f32[1]``: the variable's name, which differs per repeat


def repeats(keys: Sequence[Hashable]) -> list[tuple[int, int, int]]:
    """``(start, period, count)`` for each run of a block of ``period`` keys repeated ``count``
    times in a row (count >= FEWEST_REPEATS, count * period >= FEWEST_EQUATIONS), left to right,
    each run the one covering the most keys from its start."""
    runs, start = [], 0
    while start < len(keys):
        best = (0, 0)  # (period, count)
        for period in range(1, min(LONGEST_PERIOD, (len(keys) - start) // FEWEST_REPEATS) + 1):
            if keys[start + period] != keys[start]:
                continue  # the block does not even start again (most periods: checked inline, fast)
            count = _count(keys, start, period)
            if count >= FEWEST_REPEATS and count * period >= max(FEWEST_EQUATIONS, best[0] * best[1] + 1):
                best = (period, count)
        if best[1]:
            runs.append((start, *best))
            start += best[0] * best[1]
        else:
            start += 1
    return runs


def _count(keys: Sequence[Hashable], start: int, period: int) -> int:
    """How many times ``keys[start:start + period]`` repeats in a row from ``start``."""
    end = start + period
    while end < len(keys) and keys[end] == keys[end - period]:
        end += 1
    return (end - start) // period


def equation_key(entry: dict[str, Any]) -> tuple:
    """Equal for the same equation traced again: same source line, depth, primitive and types
    (the names and a slice's indices differ from one iteration to the next)."""
    outputs = entry["text"].split(" = ", 1)[0]
    return (entry.get("line"), entry["depth"], entry["primitive"], bool(entry.get("label")),
            _NAME.sub("", outputs))


def condensed_equations(entries: list[dict[str, Any]]) -> list[dict[str, Any] | tuple[int, int]]:
    """The listing with each repeated block kept once, followed by ``(period, count)``."""
    rows: list[dict[str, Any] | tuple[int, int]] = []
    position = 0
    for start, period, count in repeats([equation_key(entry) for entry in entries]):
        rows += entries[position:start + period]
        rows.append((period, count))
        position = start + period * count
    return rows + entries[position:]


def instruction_groups(instructions: list[dict[str, Any]]) -> list[tuple[int, dict[str, Any]]]:
    """``(count, first)`` per kind of instruction (opcode, shape, fusion, trips), in order of first
    appearance."""
    groups: dict[tuple, list[Any]] = {}
    for instruction in instructions:
        key = (instruction["opcode"], instruction["shape"], instruction["fusion"], instruction.get("trips"))
        groups.setdefault(key, [0, instruction])[0] += 1
    return [(count, first) for count, first in groups.values()]


def counted_opcodes(opcodes: list[str]) -> str:
    """``slice x999 multiply x1,998 add``: each opcode once, with its count where it repeats."""
    counts = Counter(opcodes)
    return " ".join(op if counts[op] == 1 else f"{op} x{counts[op]:,}" for op in counts)
