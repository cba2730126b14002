"""Applies safe fixes only after proving them: the fixed source is re-imported in a fresh worker,
the same targets are traced with the same abstract arguments, their output shapes and dtypes must
be unchanged and the finding must be gone. Writes are atomic."""
from __future__ import annotations

import difflib
from typing import Any

from jaxlint import scan
from jaxlint.check import CheckResult, FileAnalysis, make_job, relative, run_job
from jaxlint.fixes import apply_edits, shift_position
from jaxlint.model import Edit, Finding
from jaxlint.runner import WorkerPool
from jaxlint.sources import write_atomic


def fix_files(result: CheckResult, pool: WorkerPool, codes: list[str], write: bool) -> None:
    for analysis in result.files:
        candidates = [f for f in analysis.findings if f.fix is not None and f.fix.applicability == "safe"]
        if not candidates:
            continue
        accepted, new_text, new_result = _verified_subset(analysis, candidates, codes, pool.timeout)
        for finding in candidates:
            if finding not in accepted:
                result.fix_rejected.append(finding)
        if not accepted:
            continue
        old_text = analysis.source.text
        if write:
            write_atomic(analysis.source, new_text)
            analysis.source.text = new_text
            analysis.findings = [Finding.from_json(f) for f in new_result["findings"]]
            analysis.result = new_result
            result.fixed.extend(accepted)
        else:
            name = relative(analysis.source.path)
            result.diffs.append("".join(difflib.unified_diff(
                old_text.splitlines(keepends=True), new_text.splitlines(keepends=True),
                fromfile=f"a/{name.lstrip('/')}", tofile=f"b/{name.lstrip('/')}")))
            result.fixed.extend(accepted)


def _verified_subset(analysis: FileAnalysis, candidates: list[Finding], codes: list[str],
                     timeout: float) -> tuple[list[Finding], str, dict[str, Any]]:
    """The largest prefix-greedy set of fixes that verifies, the fixed text and its analysis."""
    outcome = _verify(analysis, candidates, codes, timeout)
    if outcome[0] is None:
        return candidates, outcome[1], outcome[2]
    accepted: list[Finding] = []
    text, new_result = analysis.source.text, analysis.result
    for finding in candidates:
        reason, trial_text, trial_result = _verify(analysis, accepted + [finding], codes, timeout)
        if reason is None:
            accepted.append(finding)
            text, new_result = trial_text, trial_result
        else:
            finding.fix_rejected = reason
    return accepted, text, new_result


def _verify(analysis: FileAnalysis, fixes: list[Finding], codes: list[str],
            timeout: float) -> tuple[str | None, str, dict[str, Any]]:
    """(None or why the fixes are rejected, fixed text, the fixed file's analysis)."""
    source = analysis.source.text
    edits: list[Edit] = [edit for finding in fixes for edit in finding.fix.edits]
    try:
        text = apply_edits(source, edits)
    except ValueError as error:
        return f"fix edits conflict: {error}", source, {}
    try:
        targets = scan.scan_source(analysis.source.path, text)
    except scan.ScanSyntaxError as error:
        return f"the fixed source does not parse: {error.message}", text, {}
    job = make_job(analysis.source, targets, codes, analysis.job["config"], override=text)
    with WorkerPool(timeout) as fresh:  # a fresh worker: no state left from the first import
        new_result = run_job(fresh, job, codes)
    new_findings = [Finding.from_json(f) for f in new_result["findings"]]
    failures = [f for f in new_findings if f.code.startswith("JX9")]
    if failures:
        return f"the fixed source fails to analyze: {failures[0].message}", text, new_result
    for finding in fixes:
        before = analysis.result.get("outputs", {}).get(finding.target)
        after = new_result.get("outputs", {}).get(finding.target)
        if before != after:
            return (f"outputs of {finding.target} change from {before} to {after}", text, new_result)
        line, col = shift_position(source, edits, finding.span.start_line, finding.span.start_col)
        if any(f.code == finding.code and (f.span.start_line, f.span.start_col) == (line, col)
               for f in new_findings):
            return "the finding is still reported after the fix", text, new_result
    return None, text, new_result
