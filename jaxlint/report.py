"""Output: ruff-like text for people, a ruff-compatible JSON array for tools."""
from __future__ import annotations

import dataclasses
import json
from typing import Any, TextIO

from jaxlint.check import CheckResult, relative
from jaxlint.model import Finding


def finding_json(finding: Finding) -> dict[str, Any]:
    """Rows and columns 1-based; end column exclusive, as ruff prints them."""
    def location(line: int, col: int) -> dict[str, int]:
        return {"row": line, "column": col + 1}

    fix = None
    if finding.fix is not None:
        fix = {"applicability": finding.fix.applicability, "message": finding.fix.message,
               "edits": [{"content": e.content,
                          "location": location(e.span.start_line, e.span.start_col),
                          "end_location": location(e.span.end_line, e.span.end_col)}
                         for e in finding.fix.edits]}
    return {"code": finding.code, "name": finding.name, "message": finding.message,
            "severity": finding.severity, "filename": finding.path,
            "location": location(finding.span.start_line, finding.span.start_col),
            "end_location": location(finding.span.end_line, finding.span.end_col),
            "url": None, "fix": fix,
            "cost": None if finding.cost is None else dataclasses.asdict(finding.cost)}


def write_json(result: CheckResult, out: TextIO) -> None:
    json.dump([finding_json(f) for f in result.findings], out, indent=2)
    out.write("\n")


def write_text(result: CheckResult, out: TextIO) -> None:
    write_findings(result.findings, {fa.source.path: fa.source.text for fa in result.files}, out)


def write_findings(findings: list[Finding], sources: dict[str, str], out: TextIO) -> None:
    """Each finding as ``path:row:col: CODE [*] message`` and its source line (``sources``: path -> text)."""
    for finding in findings:
        marker = " [*]" if finding.fix is not None and finding.fix.applicability == "safe" else ""
        out.write(f"{relative(finding.path)}:{finding.span.start_line}:{finding.span.start_col + 1}: "
                  f"{finding.code}{marker} {finding.message}\n")
        if finding.fix_rejected:
            out.write(f"  fix not applied: {finding.fix_rejected}\n")
        out.write(_excerpt(sources.get(finding.path, ""), finding))
        out.write("\n")


def _excerpt(text: str, finding: Finding) -> str:
    lines = text.splitlines()
    line = finding.span.start_line
    if not 1 <= line <= len(lines):
        return ""
    source_line = lines[line - 1]
    width = len(str(line))
    start = finding.span.start_col
    end = finding.span.end_col if finding.span.end_line == line else len(source_line)
    carets = "^" * max(1, end - start)
    pad = " " * width
    return f"{pad} |\n{line} | {source_line}\n{pad} | {' ' * start}{carets}\n"


def summary(result: CheckResult, fix_mode: str) -> str:
    findings = result.findings
    fixable = sum(1 for f in findings if f.fix is not None and f.fix.applicability == "safe")
    checked = len(result.files)
    skipped = len(result.skipped)
    parts = [f"{checked} file{'s' if checked != 1 else ''} checked",
             f"traced {result.traced} of {result.traced + skipped} functions"]
    if skipped:
        parts.append(f"{skipped} skipped (no abstract arguments or errors)")
    parts.append(f"{len(findings)} finding{'s' if len(findings) != 1 else ''}")
    if fix_mode == "fix":
        parts.append(f"{len(result.fixed)} fixed")
    elif fix_mode == "diff":
        parts.append(f"{len(result.fixed)} fix{'es' if len(result.fixed) != 1 else ''} shown")
    if fixable and fix_mode != "fix":
        parts.append(f"{fixable} fixable with --fix")
    if result.fix_rejected:
        parts.append(f"{len(result.fix_rejected)} fix{'es' if len(result.fix_rejected) != 1 else ''} "
                     "rejected by verification")
    return ", ".join(parts) + "."


def timings_text(result: CheckResult) -> str:
    return "timings: " + ", ".join(f"{stage} {seconds * 1000:.1f} ms"
                                    for stage, seconds in result.timings.items())
