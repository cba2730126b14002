"""``github``: GitHub Actions workflow commands, shown as annotations on the pull request.

``::error title=jaxlint (JX101),file=...,line=...,col=...,endLine=...,endColumn=...::text``;
columns only for single-line spans (GitHub ignores them otherwise). Paths are relative to
GITHUB_WORKSPACE, the checkout, when jaxlint runs inside it.
"""
from __future__ import annotations

from typing import TextIO

from jaxlint.engine.results import CheckResult
from jaxlint.model import Finding
from jaxlint.report.common import project_path
from jaxlint.text import relative

_COMMANDS = {"error": "error", "warning": "warning", "info": "notice"}


def escape_data(text: str) -> str:
    """The message after ``::``, as GitHub's toolkit escapes it."""
    return text.replace("%", "%25").replace("\r", "%0D").replace("\n", "%0A")


def escape_property(text: str) -> str:
    """A ``key=value`` property: ``:`` and ``,`` delimit properties, so they are escaped too."""
    return escape_data(text).replace(":", "%3A").replace(",", "%2C")


def command(finding: Finding) -> str:
    span = finding.span
    properties = [("title", f"jaxlint ({finding.code})"),
                  ("file", project_path(finding.path, "GITHUB_WORKSPACE")),
                  ("line", str(span.start_line))]
    if span.start_line == span.end_line:
        properties.append(("col", str(span.start_col + 1)))
    properties.append(("endLine", str(span.end_line)))
    if span.start_line == span.end_line:
        properties.append(("endColumn", str(span.end_col + 1)))
    name = _COMMANDS.get(finding.severity, "warning")
    joined = ",".join(f"{key}={escape_property(value)}" for key, value in properties)
    # The text repeats the location, as ruff's does: the raw log shows only the text.
    text = f"{relative(finding.path)}:{span.start_line}:{span.start_col + 1}: {finding.code} {finding.message}"
    return f"::{name} {joined}::{escape_data(text)}"


def write(result: CheckResult, out: TextIO, *, unsafe_fixes: bool = False) -> None:
    for finding in result.findings:
        out.write(command(finding) + "\n")
