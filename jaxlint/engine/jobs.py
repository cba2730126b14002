"""A file's worker job, and running it: timeouts and crashes become findings."""
from __future__ import annotations

import re
from typing import Any

from jaxlint.engine.pool import WorkerFailure, WorkerPool
from jaxlint.model import Span, Target
from jaxlint.rules.analysis_failures import AnalysisTimeoutRule, WorkerCrashedRule
from jaxlint.scan import discover
from jaxlint.text import SourceFile


def make_job(source: SourceFile, targets: list[Target], codes: list[str], config: dict[str, Any],
             override: str | None = None, compile_costs: bool = False) -> dict[str, Any]:
    """A worker job; ``config`` is ``Config.for_job()``; ``compile_costs`` asks the worker to
    compile each traced target and report XLA's cost analysis (``--cost compiled``)."""
    root = discover.find_root(source.path)
    return {"path": source.path, "module": discover.module_name(source.path, root), "root": root,
            "source": override if override is not None else source.text, "override": override,
            "targets": [t.to_json() for t in targets], "codes": codes, "config": config,
            "compile_costs": compile_costs}


def run_job(pool: WorkerPool, job: dict[str, Any], codes: list[str]) -> dict[str, Any]:
    """A worker's result, with timeouts and crashes turned into findings."""
    try:
        result = pool.run(job)
    except WorkerFailure as failure:
        rule = AnalysisTimeoutRule if failure.kind == "timeout" else WorkerCrashedRule
        what = ("importing or tracing the module took too long" if failure.kind == "timeout"
                else "the worker process analyzing the module died")
        where = "" if failure.line is None else f"; at line {failure.line}"
        hint = "; --timeout sets the limit" if failure.kind == "timeout" else ""
        findings = [] if rule.code not in codes else [rule.finding(
            job["path"], _line_span(job["source"], failure.line),
            f"{what} ({failure.detail}{where}); it was not analyzed{hint}").to_json()]
        return {"path": job["path"], "findings": findings, "traced": [],
                "skipped": [{"target": t["qualname"], "kind": failure.kind, "reason": f"{what} ({failure.detail})",
                             "line": t["name_span"]["start_line"]} for t in job["targets"]]}
    if "internal_error" in result:
        raise RuntimeError(f"jaxlint internal error on {job['path']}:\n{result['internal_error']}")
    return result


def _line_span(text: str, line: int | None) -> Span:
    """The code on a 1-based line, without indentation; the file's start when unknown."""
    lines = re.split(r"\r\n|\r|\n", text)  # Python's line breaks only, unlike str.splitlines
    if line is None or not 1 <= line <= len(lines):
        return Span(1, 0, 1, 0)
    code = lines[line - 1].rstrip()
    return Span(line, len(code) - len(code.lstrip()), line, len(code))
