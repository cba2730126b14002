"""The pipeline in the jaxlint process: discover -> scan -> (worker: import, trace, rules) -> fix."""
from __future__ import annotations

import os
import time
from dataclasses import dataclass, field
from typing import Any

from jaxlint import discover, scan
from jaxlint.model import Finding, Span, Target
from jaxlint.rules import Rule
from jaxlint.rules.analysis_failures import AnalysisTimeoutRule, SyntaxErrorRule, WorkerCrashedRule
from jaxlint.runner import WorkerFailure, WorkerPool
from jaxlint.sources import SourceFile, read_source


@dataclass
class FileAnalysis:
    source: SourceFile
    targets: list[Target]
    job: dict[str, Any] | None
    result: dict[str, Any] = field(default_factory=dict)
    findings: list[Finding] = field(default_factory=list)


@dataclass
class CheckResult:
    files: list[FileAnalysis]
    timings: dict[str, float]
    fixed: list[Finding] = field(default_factory=list)
    fix_rejected: list[Finding] = field(default_factory=list)
    diffs: list[str] = field(default_factory=list)

    @property
    def findings(self) -> list[Finding]:
        return sorted((f for fa in self.files for f in fa.findings),
                      key=lambda f: (f.path, f.span.start_line, f.span.start_col, f.code))

    @property
    def traced(self) -> int:
        return sum(len(fa.result.get("traced", [])) for fa in self.files)

    @property
    def skipped(self) -> list[dict]:
        return [dict(s, path=fa.source.path) for fa in self.files for s in fa.result.get("skipped", [])]


def make_job(source: SourceFile, targets: list[Target], codes: list[str],
             override: str | None = None) -> dict[str, Any]:
    root = discover.find_root(source.path)
    return {"path": source.path, "module": discover.module_name(source.path, root), "root": root,
            "source": override if override is not None else source.text, "override": override,
            "targets": [t.to_json() for t in targets], "codes": codes}


def run_job(pool: WorkerPool, job: dict[str, Any], codes: list[str]) -> dict[str, Any]:
    """A worker's result, with timeouts and crashes turned into findings."""
    try:
        result = pool.run(job)
    except WorkerFailure as failure:
        rule = AnalysisTimeoutRule if failure.kind == "timeout" else WorkerCrashedRule
        what = ("importing or tracing the module took too long" if failure.kind == "timeout"
                else "the worker process analyzing the module died")
        findings = [] if rule.code not in codes else [Finding(
            rule.code, rule.name, f"{what} ({failure.detail}); it was not analyzed",
            rule.severity, job["path"], Span(1, 0, 1, 0)).to_json()]
        return {"path": job["path"], "findings": findings, "traced": [],
                "skipped": [{"target": t["qualname"], "reason": failure.kind} for t in job["targets"]]}
    if "internal_error" in result:
        raise RuntimeError(f"jaxlint internal error on {job['path']}:\n{result['internal_error']}")
    return result


def prepare(path: str, codes: list[str]) -> FileAnalysis | None:
    """Read and scan one file; None for files that never mention jax (no import, no cost)."""
    source = read_source(path)
    if not discover.mentions_jax(source.text):
        return FileAnalysis(source, [], None)
    try:
        targets = scan.scan_source(path, source.text)
    except scan.ScanSyntaxError as error:
        analysis = FileAnalysis(source, [], None)
        if SyntaxErrorRule.code in codes:
            analysis.findings.append(Finding(
                SyntaxErrorRule.code, SyntaxErrorRule.name, f"syntax error: {error.message}",
                SyntaxErrorRule.severity, path, Span(error.line, error.column, error.line, error.column)))
        return analysis
    job = make_job(source, targets, codes) if targets else None
    return FileAnalysis(source, targets, job)


def check(paths: list[str], rules: list[type[Rule]], fix: bool = False, diff: bool = False,
          timeout: float = 60.0) -> CheckResult:
    codes = [r.code for r in rules]
    timings = {"discover": 0.0, "scan": 0.0, "worker-start": 0.0, "import": 0.0, "trace": 0.0,
               "rules": 0.0, "fix": 0.0}
    started = time.perf_counter()
    files = discover.discover(paths)
    timings["discover"] = time.perf_counter() - started
    started = time.perf_counter()
    analyses = [prepare(path, codes) for path in files]
    timings["scan"] = time.perf_counter() - started
    result = CheckResult(analyses, timings)
    pool = WorkerPool(timeout)
    with pool:
        for analysis in analyses:
            if analysis.job is None:
                continue
            analysis.result = run_job(pool, analysis.job, codes)
            analysis.findings.extend(Finding.from_json(f) for f in analysis.result["findings"])
            for stage, seconds in analysis.result.get("timings", {}).items():
                timings[stage] = timings.get(stage, 0.0) + seconds
        timings["worker-start"] = pool.jax_import
        if fix or diff:
            from jaxlint.fixer import fix_files

            started = time.perf_counter()
            fix_files(result, pool, codes, write=fix)
            timings["fix"] = time.perf_counter() - started
    for analysis in analyses:
        analysis.findings = _dedupe(analysis.findings)
    return result


def _dedupe(findings: list[Finding]) -> list[Finding]:
    seen, unique = set(), []
    for finding in findings:
        if finding.key() not in seen:
            seen.add(finding.key())
            unique.append(finding)
    return unique


def relative(path: str) -> str:
    try:
        rel = os.path.relpath(path)
    except ValueError:
        return path
    return path if rel.startswith("..") else rel
