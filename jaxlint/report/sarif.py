"""``sarif``: SARIF 2.1.0, for GitHub code scanning and other SARIF viewers.

Columns: SARIF counts Unicode code points from 1 by default (``columnKind``), as Python indexes
a str; ``endColumn`` is the column after the region, like jaxlint's exclusive end column.
"""
from __future__ import annotations

import json
import os
from pathlib import Path
from typing import Any, TextIO
from urllib.parse import quote

from jaxlint.about import DOCS_URL, __version__, rule_url
from jaxlint.engine.results import CheckResult
from jaxlint.model import Edit, Finding, Fix, Span
from jaxlint.report.common import doc_section, rule_doc, severity, summary

SCHEMA = "https://json.schemastore.org/sarif-2.1.0.json"
_LEVELS = {"error": "error", "warning": "warning", "info": "note"}
_ROOT = "%SRCROOT%"  # file URIs are relative to the folder jaxlint ran in


def write(result: CheckResult, out: TextIO, *, unsafe_fixes: bool = False) -> None:
    findings = result.findings
    codes = sorted({f.code for f in findings})
    index = {code: i for i, code in enumerate(codes)}
    examples = {f.code: f for f in findings}  # a finding of each code, for unregistered codes
    run = {
        "tool": {"driver": {"name": "jaxlint", "version": __version__,
                            "informationUri": f"{DOCS_URL}README.md",
                            "rules": [_rule(examples[code]) for code in codes]}},
        "originalUriBaseIds": {_ROOT: {"uri": Path(os.getcwd()).as_uri().rstrip("/") + "/"}},
        "columnKind": "unicodeCodePoints",
        "results": [_result(f, index[f.code]) for f in findings],
    }
    json.dump({"$schema": SCHEMA, "version": "2.1.0", "runs": [run]}, out, indent=2)
    out.write("\n")


def _rule(finding: Finding) -> dict[str, Any]:
    code, name = finding.code, finding.name
    short = summary(code, name)
    doc = rule_doc(code)
    # The first paragraph of the page's "What it does", on one line; the page itself is the help.
    what = " ".join(doc_section(doc, "What it does").split("\n\n")[0].split()) if doc else ""
    rule: dict[str, Any] = {
        "id": code, "name": name,
        "shortDescription": {"text": short},
        "fullDescription": {"text": what or short},
        "help": {"text": f"{short} See {rule_url(code)}"},
        "helpUri": rule_url(code),
        "defaultConfiguration": {"level": _LEVELS.get(severity(code, finding.severity), "warning")},
    }
    if doc:
        rule["help"]["markdown"] = doc
    return rule


def _artifact(path: str) -> dict[str, str]:
    """A URI relative to the run's folder when the file is inside it, else an absolute file URI."""
    try:
        rel = os.path.relpath(path)
    except ValueError:
        rel = ".."
    if rel.startswith(".."):
        return {"uri": Path(path).as_uri()}
    return {"uri": quote(Path(rel).as_posix()), "uriBaseId": _ROOT}


def _region(span: Span) -> dict[str, int]:
    return {"startLine": span.start_line, "startColumn": span.start_col + 1,
            "endLine": span.end_line, "endColumn": span.end_col + 1}


def _result(finding: Finding, rule_index: int) -> dict[str, Any]:
    result: dict[str, Any] = {
        "ruleId": finding.code, "ruleIndex": rule_index,
        "level": _LEVELS.get(finding.severity, "warning"),
        "message": {"text": finding.message},
        "locations": [{"physicalLocation": {"artifactLocation": _artifact(finding.path),
                                            "region": _region(finding.span)}}],
    }
    if finding.fix is not None:
        result["fixes"] = [_fix(finding.path, finding.fix)]
    return result


def _fix(path: str, fix: Fix) -> dict[str, Any]:
    return {"description": {"text": fix.message},
            "artifactChanges": [{"artifactLocation": _artifact(path),
                                 "replacements": [{"deletedRegion": _region(edit.span),
                                                   "insertedContent": {"text": edit.content}}
                                                  for edit in sorted(fix.edits, key=_start)]}],
            "properties": {"applicability": fix.applicability}}


def _start(edit: Edit) -> tuple[int, int]:
    return edit.span.start_line, edit.span.start_col
