"""Source rewrites: text edits built by rules, applied (and verified) by jaxlint.fixer."""
from __future__ import annotations

import re

from jaxlint.model import Edit, Span

_LINES = re.compile(r"[^\r\n]*(?:\r\n|\r|\n)|[^\r\n]+$")


def char_column(line_text: str, byte_col: int) -> int:
    """Character column of a UTF-8 byte column (ast, co_positions and tracebacks count bytes)."""
    if line_text.isascii():
        return byte_col
    return len(line_text.encode("utf-8")[:byte_col].decode("utf-8", errors="ignore"))


def offset_of(source: str, line: int, col: int) -> int:
    """Character offset of a (1-based line, 0-based column) position."""
    # Python's own newlines only (str.splitlines also splits on form feeds and more).
    lines = _LINES.findall(source)
    return sum(len(text) for text in lines[: line - 1]) + col


def apply_edits(source: str, edits: list[Edit]) -> str:
    """Apply edits; identical duplicates count once, overlapping ones raise ValueError."""
    ordered = sorted(set(edits), key=lambda e: (e.span.start_line, e.span.start_col,
                                                e.span.end_line, e.span.end_col))
    out, cursor, previous_start = [], 0, -1
    for edit in ordered:
        start = offset_of(source, edit.span.start_line, edit.span.start_col)
        end = offset_of(source, edit.span.end_line, edit.span.end_col)
        # Two different insertions at one point have no defined order: a conflict too.
        if start < cursor or (start == end == previous_start):
            raise ValueError("overlapping edits")
        out.append(source[cursor:start])
        out.append(edit.content)
        cursor, previous_start = end, start
    out.append(source[cursor:])
    return "".join(out)


def shift_position(source: str, edits: list[Edit], line: int, col: int) -> tuple[int, int]:
    """Where (line, col) of the original source lands after the edits."""
    offset = offset_of(source, line, col)
    before = [e for e in edits if offset_of(source, e.span.end_line, e.span.end_col) <= offset]
    moved = apply_edits(source[:offset], before)
    new_line = moved.count("\n") + 1
    return new_line, len(moved) - (moved.rfind("\n") + 1)


__all__ = ["Edit", "Span", "apply_edits", "char_column", "offset_of", "shift_position"]
