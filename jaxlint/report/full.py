"""``full`` (the default): ruff's full format, each finding with its source line and fix title."""
from __future__ import annotations

import re
import unicodedata
from typing import TextIO

from jaxlint.engine.results import CheckResult
from jaxlint.model import Finding
from jaxlint.report.common import is_fixable, source_line, sources, split_lines
from jaxlint.text import LINE_BREAK, relative

_JOINED_BREAK = re.compile(rf"[ \t]*(?:{LINE_BREAK.pattern})\s*")  # a line break in a message
TAB = "    "  # a tab in a shown source line, as ruff shows it: the carets must line up
_NOTES = {"unsafe": "this is an unsafe fix and may change runtime behavior",
          "display-only": "this fix is shown, not applied: apply it by hand"}


def write(result: CheckResult, out: TextIO, *, unsafe_fixes: bool = False) -> None:
    write_findings(result.findings, sources(result), out, unsafe_fixes)


def header(finding: Finding, unsafe_fixes: bool = False) -> str:
    """``path:row:col: CODE [*] message`` on one line (a message quoting multi-line code is
    joined); ``[*]`` marks a fix --fix applies (with ``unsafe_fixes``, unsafe ones too), as in ruff."""
    marker = " [*]" if is_fixable(finding, unsafe_fixes) else ""
    message = _JOINED_BREAK.sub(" ", finding.message)
    return (f"{relative(finding.path)}:{finding.span.start_line}:{finding.span.start_col + 1}: "
            f"{finding.code}{marker} {message}")


def write_findings(findings: list[Finding], texts: dict[str, str], out: TextIO,
                   unsafe_fixes: bool = False) -> None:
    """Each finding as its header, the source line with a marker under the span, then the fix
    title and notes (``texts``: path -> source text)."""
    for finding in findings:
        out.write(header(finding, unsafe_fixes) + "\n")
        pad = " " * len(str(finding.span.start_line))
        out.write(_excerpt(texts, finding, pad))
        notes = []
        if finding.fix is not None:
            notes.append(f"help: {finding.fix.message}")
            if finding.fix.applicability in _NOTES:
                notes.append(f"note: {_NOTES[finding.fix.applicability]}")
        if finding.fix_rejected:
            notes.append(f"note: fix not applied: {finding.fix_rejected}")
        out.write("".join(f"{pad} = {note}\n" for note in notes))
        out.write("\n")


def _excerpt(texts: dict[str, str], finding: Finding, pad: str) -> str:
    line = finding.span.start_line
    if not 1 <= line <= len(split_lines(texts.get(finding.path, ""))):
        return ""
    source = source_line(texts, finding.path, line)
    start = finding.span.start_col
    end = finding.span.end_col if finding.span.end_line == line else len(source)
    carets = "^" * max(1, cells(source[start:end]))
    return f"{pad} |\n{line} | {source.replace(chr(9), TAB)}\n{pad} | {' ' * cells(source[:start])}{carets}\n{pad} |\n"


def cells(text: str) -> int:
    """The width of ``text`` on a terminal: wide East Asian characters take two cells, combining
    characters none, a tab len(TAB); columns count characters, so carets under CJK text need this."""
    width = 0
    for char in text:
        if char == "\t":
            width += len(TAB)
        elif unicodedata.combining(char):
            continue
        else:
            width += 2 if unicodedata.east_asian_width(char) in ("W", "F") else 1
    return width
