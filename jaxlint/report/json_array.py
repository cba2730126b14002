"""``json``: one ruff-shaped JSON array of findings."""
from __future__ import annotations

import dataclasses
import json
from typing import Any, TextIO

from jaxlint.about import rule_url
from jaxlint.engine.results import CheckResult
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
    row = {"code": finding.code, "name": finding.name, "message": finding.message,
           "severity": finding.severity, "filename": finding.path,
           "location": location(finding.span.start_line, finding.span.start_col),
           "end_location": location(finding.span.end_line, finding.span.end_col),
           "url": rule_url(finding.code), "fix": fix,
           "cost": None if finding.cost is None else dataclasses.asdict(finding.cost)}
    if finding.arguments is not None:  # "inferred": jaxlint guessed the arguments this needed
        row["arguments"] = finding.arguments
    if finding.origin is not None:  # from the test-run store (engine/store.py), not traced by this run
        row["origin"] = finding.origin
        row["test"] = finding.test
    return row


def write(result: CheckResult, out: TextIO, *, unsafe_fixes: bool = False) -> None:
    json.dump([finding_json(f) for f in result.findings], out, indent=2)
    out.write("\n")
