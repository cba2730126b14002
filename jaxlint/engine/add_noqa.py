"""``jaxlint check --add-noqa``: a ``# noqa: CODE`` comment for every current finding, so that a
large code base can adopt jaxlint and fix its findings over time (ruff's ``--add-noqa``)."""
from __future__ import annotations

from typing import Any

from jaxlint.engine.suppressions import UNUSED_SUPPRESSION
from jaxlint.model import Edit, Finding, Span
from jaxlint.rules import codes_by_name
from jaxlint.scan.noqa import read_comments
from jaxlint.text import apply_edits, split_lines


def add_noqa(path: str, text: str, findings: list[Finding]) -> tuple[str, int]:
    """``text`` with a ``# noqa: CODES`` for every finding but JX800, and how many lines got one.

    The comment goes on the reported line, else (inside a string, before a backslash) on the
    first or last line of its statement; codes are added to a directive already on that line.
    A file the tokenizer cannot read to the end gets none.
    """
    comments = read_comments(text, codes_by_name())
    if not comments.complete:
        return text, 0
    wanted: dict[int, list[str]] = {}
    for finding in findings:
        if finding.path != path or finding.code == UNUSED_SUPPRESSION:
            continue
        line = next((candidate for candidate in comments.accepting_lines(finding.span.start_line)
                     if candidate in comments.commentable), None)
        if line is not None and finding.code not in wanted.setdefault(line, []):
            wanted[line].append(finding.code)
    lines = split_lines(text)
    edits = []
    for line, line_codes in wanted.items():
        existing = next((d for d in comments.line_directives(line) if d.items), None)
        missing = sorted(c for c in line_codes if existing is None or c not in existing.codes)
        if not missing or line > len(lines):
            continue
        if existing is not None:
            end = (existing.items or [])[-1].end
            edits.append(Edit(Span(line, end, line, end), ", " + ", ".join(missing)))
        else:
            content = lines[line - 1]
            end = len(content.rstrip())
            edits.append(Edit(Span(line, end, line, len(content)),
                              ("  " if end else "") + "# noqa: " + ", ".join(missing)))
    return (apply_edits(text, edits), len(edits)) if edits else (text, 0)


def add_noqa_to_files(result: Any) -> int:
    """``--add-noqa``: write a comment for every finding of a check.CheckResult, each file
    atomically; the number of lines that got one. A file that could not be read or decoded, or
    that changed since it was checked, is left alone."""
    from jaxlint.text import SourceError, read_source, write_atomic

    added = 0
    for analysis in result.files:
        path = analysis.source.path
        new_text, lines = add_noqa(path, analysis.source.text, analysis.findings)
        try:
            unchanged = lines and read_source(path).text == analysis.source.text
        except (OSError, SourceError):
            unchanged = False
        if unchanged:
            write_atomic(analysis.source, new_text)
            analysis.source.text = new_text
            added += lines
    return added
