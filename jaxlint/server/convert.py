"""Findings as LSP diagnostics, fixes as text edits: jaxlint's spans count characters (lines
1-based, columns 0-based); the client's positions count UTF-16 code units unless it asked for
another encoding (pygls's position codec converts)."""
from __future__ import annotations

from lsprotocol import types

from jaxlint.about import rule_url
from jaxlint.model import Edit, Finding, Span
from jaxlint.text import split_lines

SEVERITIES = {"error": types.DiagnosticSeverity.Error, "warning": types.DiagnosticSeverity.Warning,
              "info": types.DiagnosticSeverity.Information}


def to_range(span: Span, lines: list[str], codec: object) -> types.Range:
    """A span as a range in the client's units (``codec``: pygls's PositionCodec)."""
    last = max(len(lines) - 1, 0)
    start = types.Position(min(span.start_line - 1, last), span.start_col)
    end = types.Position(min(span.end_line - 1, last), span.end_col)
    return codec.range_to_client_units(lines, types.Range(start, end))  # type: ignore[attr-defined]


def diagnostic(finding: Finding, lines: list[str], codec: object) -> types.Diagnostic:
    message = finding.message
    if finding.fix_rejected:
        message += f"\nfix not applied: {finding.fix_rejected}"
    return types.Diagnostic(
        range=to_range(finding.span, lines, codec), message=message, source="jaxlint", code=finding.code,
        severity=SEVERITIES.get(finding.severity, types.DiagnosticSeverity.Warning),
        code_description=types.CodeDescription(href=rule_url(finding.code)))


def text_edits(edits: tuple[Edit, ...] | list[Edit], lines: list[str], codec: object) -> list[types.TextEdit]:
    return [types.TextEdit(range=to_range(e.span, lines, codec), new_text=e.content) for e in edits]


def whole_text_edit(old: str, new: str, codec: object) -> list[types.TextEdit]:
    """One edit replacing the lines that differ between ``old`` and ``new`` (the rest stays put,
    so the editor keeps the cursor and folds)."""
    old_lines, new_lines = old.splitlines(keepends=True), new.splitlines(keepends=True)
    start = 0
    while start < min(len(old_lines), len(new_lines)) and old_lines[start] == new_lines[start]:
        start += 1
    end_old, end_new = len(old_lines), len(new_lines)
    while end_old > start and end_new > start and old_lines[end_old - 1] == new_lines[end_new - 1]:
        end_old, end_new = end_old - 1, end_new - 1
    if start == end_old == end_new:
        return []
    span = Span(start + 1, 0, end_old + 1, 0)
    lines = split_lines(old) + [""]
    return text_edits([Edit(span, "".join(new_lines[start:end_new]))], lines, codec)
