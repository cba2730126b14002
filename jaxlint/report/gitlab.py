"""``gitlab``: a GitLab Code Quality report (the Code Climate issue format GitLab reads).

Paths are relative to CI_PROJECT_DIR, the checkout, when jaxlint runs inside it. The fingerprint
hashes the path, code, message and the text of the line, not its number, so a finding keeps its
identity when code above it moves; repeats of the same fingerprint are numbered.
"""
from __future__ import annotations

import hashlib
import json
from typing import Any, TextIO

from jaxlint.engine.results import CheckResult
from jaxlint.report.common import project_path, source_line, sources

_SEVERITIES = {"error": "major", "warning": "minor", "info": "info"}


def fingerprint(path: str, code: str, message: str, line_text: str, repeat: int) -> str:
    parts = [path, code, message, line_text.strip()] + ([str(repeat)] if repeat else [])
    return hashlib.sha256("\0".join(parts).encode("utf-8", "surrogatepass")).hexdigest()


def write(result: CheckResult, out: TextIO, *, unsafe_fixes: bool = False) -> None:
    texts = sources(result)
    seen: set[str] = set()
    issues: list[dict[str, Any]] = []
    for finding in result.findings:
        path = project_path(finding.path, "CI_PROJECT_DIR")
        line_text = source_line(texts, finding.path, finding.span.start_line)
        repeat = 0
        while (key := fingerprint(path, finding.code, finding.message, line_text, repeat)) in seen:
            repeat += 1
        seen.add(key)
        issues.append({
            "type": "issue",
            "check_name": finding.code,
            # GitLab shows the description, not check_name: it carries the code too, as ruff's does.
            "description": f"{finding.code}: {finding.message}",
            "severity": _SEVERITIES.get(finding.severity, "minor"),
            "fingerprint": key,
            "location": {"path": path, "lines": {"begin": finding.span.start_line,
                                                 "end": finding.span.end_line}},
        })
    json.dump(issues, out, indent=2)
    out.write("\n")
