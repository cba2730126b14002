"""Suppressions, applied in the jaxlint process to the findings the workers sent back (by
settle.py, after per-file-ignores, before fixing: a suppressed finding is neither reported nor
fixed), and JX800 for the suppressions that suppressed nothing.

JX800 errs on the side of silence, since people delete what it reports: a code is reported only
when its rule ran over the comment's statement in this run. That is, the rule was selected for
the file (not turned off by per-file-ignores), the statement made operations while jaxlint traced
a function with every signature it had (not in a file whose import failed, a function skipped or
whose trace failed for one signature, a branch the trace did not take; a helper outside the
traced functions only when every function of the file was traced), and the code is not an
analysis failure (JX9xx: timeouts and crashes depend on the machine). Bare ``# noqa`` (it may be
meant for another tool) and file-level ``# jaxlint: noqa`` are never reported.
"""
from __future__ import annotations

import re
from collections import Counter
from dataclasses import dataclass, field
from typing import Collection

from jaxlint.model import Edit, Finding, Fix, Result, Span, Target
from jaxlint.rules import codes_by_name
from jaxlint.rules.catalog import rule_info
from jaxlint.scan.noqa import MAY_HAVE_DIRECTIVES, Comments, Directive, Item, Tokens, read_comments
from jaxlint.text import apply_edits

FIX_MESSAGE = "Remove unused suppression"
UNUSED_SUPPRESSION = "JX800"  # unused-suppression: reported here, from the catalog's metadata


def is_comment_fix(finding: Finding) -> bool:
    """A JX800 fix: it only edits a comment, so it needs no verification by re-tracing."""
    return finding.code == UNUSED_SUPPRESSION and finding.fix is not None


@dataclass
class Analyzed:
    """Where the rules of a file ran in this run (what JX800 may speak about)."""

    lines: set[int] = field(default_factory=set)  # lines that made equations in complete traces
    spans: list[tuple[int, int]] = field(default_factory=list)  # (first, last) of those functions
    everywhere: bool = False  # every function of the file traced completely: helpers count too

    def covers(self, line: int, statement: tuple[int, int]) -> bool:
        """The rules ran over the statement holding the comment on ``line``."""
        first, last = statement
        if not any(n in self.lines for n in range(first, last + 1)):
            return False
        return self.everywhere or any(a <= line <= b for a, b in self.spans)


def analyzed(targets: list[Target], result: Result | None) -> Analyzed:
    """A function counts when it was traced with every signature it had, its rules did not crash,
    and no other definition shares its name (which one was traced would not be known). A helper
    outside such functions counts only when every function of the file does (a function left
    untraced may call it with other arguments). A trace with inferred arguments does not count:
    guessed shapes say nothing of the calls the code really makes."""
    if result is None:
        return Analyzed()
    names = Counter(t.qualname for t in targets)  # not list.count per target: square of the file
    crashed = {f.target for f in result.findings if f.code == "JX906"}
    complete = {t.target: t for t in result.traced if t.source != "inferred"
                and not t.failed_signatures and t.target not in crashed and names[t.target] == 1}
    lines = {line for entry in complete.values() for line in entry.lines}
    spans = [(t.first_line, t.span.end_line) for t in targets if t.qualname in complete]
    everywhere = bool(targets) and all(t.qualname in complete for t in targets) and not result.skipped
    return Analyzed(lines, spans, everywhere)


def apply(path: str, text: str, findings: list[Finding], codes: Collection[str],
          ran: Analyzed, tokens: Tokens | None = None) -> list[Finding]:
    """The findings no comment suppresses, and a JX800 finding for each comment naming jaxlint
    codes that suppressed nothing (``codes``: the codes that ran for this file; ``tokens``: the
    tokenizer's view of ``text``, if known)."""
    if not (findings or ran.lines) or not MAY_HAVE_DIRECTIVES.search(text):
        return findings
    comments = read_comments(text, codes_by_name(), tokens)
    kept = [f for f in findings if f.path != path or not _suppress(comments, f)]
    if UNUSED_SUPPRESSION not in codes:
        return kept
    unused = _unused(path, comments, set(codes), ran)
    return kept + [f for f in unused if not _suppress(comments, f)]


def without_suppressed(path: str, text: str, findings: list[Finding]) -> list[Finding]:
    """Only the suppression: no JX800 (the fixer's check of a fixed source)."""
    if not MAY_HAVE_DIRECTIVES.search(text):
        return findings
    comments = read_comments(text, codes_by_name())
    return [f for f in findings if f.path != path or not _suppress(comments, f)]


def _suppress(comments: Comments, finding: Finding) -> bool:
    """True if a directive covers the finding; marks the directives that do as used."""
    suppressed = False
    for line in comments.accepting_lines(finding.span.start_line):
        for directive in comments.line_directives(line):
            if directive.covers(finding.code):
                directive.used.add(finding.code)
                suppressed = True
    if not suppressed:  # a line's own directive is used first, so it is not reported unused
        for directive in comments.directives:
            if directive.file_level and directive.covers(finding.code):
                directive.used.add(finding.code)
                suppressed = True
    return suppressed


def _reportable(code: str | None, codes: set[str]) -> bool:
    return code is not None and code in codes and not code.startswith("JX9") \
        and code != UNUSED_SUPPRESSION


def _unused_items(directive: Directive, codes: set[str], ran: Analyzed,
                  statement: tuple[int, int]) -> list[Item]:
    """The directive's codes to report: run here, yet unused (or named twice)."""
    if directive.items is None or directive.file_level:
        return []
    if not ran.covers(directive.line, statement):
        return []
    unused, seen = [], set()
    for item in directive.items:
        duplicate = item.code in seen
        seen.add(item.code)
        if _reportable(item.code, codes) and (duplicate or item.code not in directive.used):
            unused.append(item)
    return unused


def _unused(path: str, comments: Comments, codes: set[str], ran: Analyzed) -> list[Finding]:
    """One JX800 finding per comment (``# noqa: JX201  # jaxlint: ignore[JX301]`` is one
    comment), so that its fix is one edit of the comment."""
    by_comment: dict[tuple[int, int], list[Directive]] = {}
    for directive in comments.directives:
        by_comment.setdefault((directive.line, directive.comment_start), []).append(directive)
    findings = []
    for directives in by_comment.values():
        line = directives[0].line
        statement = comments.statements.get(line, (line, line))
        unused = {id(d): _unused_items(d, codes, ran, statement) for d in directives}
        reported = [d for d in directives if unused[id(d)]]
        if not reported:
            continue
        names = ", ".join(f"`{item.text}`" for d in reported for item in unused[id(d)])
        what = f"`{reported[0].kind}` directive" if len(reported) == 1 else "suppression directives"
        message = f"unused {what} (unused: {names}): no such finding here in this run"
        first, last = reported[0], reported[-1]
        span = Span(first.line, first.start, last.line, last.end)
        fix = Fix("safe", FIX_MESSAGE, (_rewrite(directives, unused),))
        findings.append(rule_info(UNUSED_SUPPRESSION).finding(path, span, message, fix))
    return findings


_REMOVED = "\0"  # stands for a removed directive while the comment is rebuilt
_AROUND_REMOVED = re.compile(r"\s*(?:\0\s*)+")


def _rewrite(directives: list[Directive], unused: dict[int, list[Item]]) -> Edit:
    """The comment without its unused codes; directives left with no code go, and the comment
    with them when nothing else is in it (other tools' codes stay: ``# noqa: E501, JX101``
    becomes ``# noqa: E501``; an explanation after the codes stays a comment)."""
    text, line = directives[0].line_text, directives[0].line
    comment_start, comment_end = directives[0].comment_start, directives[0].comment_end
    pieces, cursor = [], comment_start
    for directive in sorted(directives, key=lambda d: d.start):
        items = directive.items or []
        dropped = {id(item) for item in unused[id(directive)]}
        kept = [item for item in items if id(item) not in dropped]
        pieces.append(text[cursor:directive.start])
        if not dropped:
            pieces.append(text[directive.start:directive.end])
        elif kept:
            pieces.append(text[directive.start:items[0].start] + ", ".join(i.text for i in kept)
                          + text[items[-1].end:directive.end])
        else:
            pieces.append(_REMOVED)
        cursor = directive.end
    pieces.append(text[cursor:comment_end])
    joined = "".join(pieces)

    def join(match: re.Match) -> str:
        if match.start() == 0 or match.end() == len(joined):
            return ""
        return "  " if joined[match.end()] == "#" else " "

    comment = _AROUND_REMOVED.sub(join, joined)
    if not comment.strip():  # the whole comment goes, with the spaces before it
        return Edit(Span(line, len(text[:comment_start].rstrip()), line, comment_end), "")
    return Edit(Span(line, comment_start, line, comment_end),
                comment if comment.startswith("#") else "# " + comment)


def apply_comment_fixes(text: str, findings: list[Finding]) -> tuple[str, list[Finding], list[Finding]]:
    """Apply the JX800 fixes among ``findings`` to ``text``: (new text, findings left, findings
    fixed). A fix whose edit conflicts with another is left for the next run."""
    fixed: list[Finding] = []
    for finding in findings:
        if not is_comment_fix(finding):
            continue
        try:
            apply_edits(text, [e for f in fixed + [finding] for e in f.fix.edits])
        except ValueError:
            continue
        fixed.append(finding)
    if not fixed:
        return text, findings, []
    new_text = apply_edits(text, [e for f in fixed for e in f.fix.edits])
    fixed_ids = {id(f) for f in fixed}
    return new_text, [f for f in findings if id(f) not in fixed_ids], fixed
