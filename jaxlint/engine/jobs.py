"""A file's worker job, and running it: timeouts and crashes become findings."""
from __future__ import annotations

import dataclasses
from typing import TYPE_CHECKING, Any

from jaxlint.engine.imports import import_plan
from jaxlint.lazylog import LazyLogger
from jaxlint.model import Job, Result, Settings, Skipped, Span, Target
from jaxlint.rules.catalog import rule_info
from jaxlint.scan.meshes import largest, literal_meshes_in
from jaxlint.text import SourceFile, line_code_span, relative, split_lines

if TYPE_CHECKING:  # a run whose results all come from the cache starts no worker
    from jaxlint.engine.pool import WorkerPool

LOG = LazyLogger(__name__)  # --verbose: the devices a module's mesh asked for

def make_job(source: SourceFile, targets: list[Target], codes: list[str], settings: Settings,
             override: str | None = None, compile_costs: bool = False,
             run_values: list[str] | None = None, wide_values: list[str] | None = None) -> Job:
    """The worker job of one file; ``compile_costs`` asks the worker to compile each traced
    target and report XLA's cost analysis (``--cost compiled``); ``run_values``, to run those
    targets on generated inputs (fix verification), ``wide_values`` also on wide ones."""
    plan = import_plan(source.path)
    text = override if override is not None else source.text
    return Job(path=source.path, module=plan.module, root=plan.root,
               source=override if override is not None else source.text, targets=list(targets),
               codes=list(codes), settings=settings, override=override, compile_costs=compile_costs,
               run_values=list(run_values or []), wide_values=list(wide_values or []),
               sys_path=plan.sys_path, sys_path_appended=plan.sys_path_appended,
               packages_from_files=plan.packages_from_files, devices=job_devices(source.path, text, settings))


# A literal mesh larger than this starts no worker of its size unless `devices` asks: each forced
# CPU device costs XLA memory and start-up time (the import then fails with JX901 naming `devices`).
MAX_INFERRED_DEVICES = 64


def job_devices(path: str, text: str, settings: Settings) -> int | None:
    """The CPU devices a module's worker starts with: the ``devices`` setting, else as many as
    the module's largest literal mesh shape takes (said under --verbose), else None (JAX's)."""
    if settings.devices is not None:
        return settings.devices
    mesh = largest(literal_meshes_in(text))
    if mesh is None:
        return None
    if mesh.size > MAX_INFERRED_DEVICES:
        LOG.debug("%s: the mesh shape %s at line %d takes %d devices, more than jaxlint simulates unasked (%d); "
                  "--devices N or `devices = N` sets them", relative(path), mesh.shape, mesh.line, mesh.size,
                  MAX_INFERRED_DEVICES)
        return None
    LOG.debug("%s: %d CPU devices, the product of the mesh shape %s at line %d (`devices` is unset; "
              "--devices N or `devices = N` sets them)", relative(path), mesh.size, mesh.shape, mesh.line)
    return mesh.size


# A module is analyzed again without a target it ran away in at most this many times: each run
# that fails costs the module's limit again.
MAX_RUNAWAYS = 2


def run_job(pool: WorkerPool, job: Job, codes: list[str]) -> Result:
    """A worker's result, with timeouts and crashes turned into findings. Where the worker failed
    inside one target's analysis (worker/progress.py), the module is analyzed again without it:
    one target that runs away does not cost the others their results."""
    from jaxlint.engine.pool import WorkerFailure

    try:
        result = pool.run(job)
    except WorkerFailure as failure:
        rule = rule_info("JX902" if failure.kind == "timeout" else "JX903")  # analysis-timeout, worker-crashed
        what = ("importing or tracing the module took too long" if failure.kind == "timeout"
                else "the worker process analyzing the module died")
        where = "" if failure.line is None else f"; at line {failure.line}"
        hint = "; --timeout sets the limit" if failure.kind == "timeout" else ""
        target = failure.target
        if target is not None and target not in job.runaway and len(job.runaway) < MAX_RUNAWAYS:
            rerun = _without_runaway(pool, job, codes, target, failure)
            if rule.code in codes and not failure.progress.get("guess"):  # the user's arguments ran away
                rerun.findings.insert(0, rule.finding(job.path, _line_span(job.source, failure.line), (
                    f"{what} ({failure.detail}{where}), in {target}: analyzed again without it{hint}")))
            return rerun
        if failure.progress.get("guess"):  # a guess ran away once more than reruns allow: still no user's error
            return _runaways_abandoned(job, target, failure)
        findings = [] if rule.code not in codes else [rule.finding(
            job.path, _line_span(job.source, failure.line), f"{what} ({failure.detail}{where}); it was not analyzed{hint}")]
        return Result(job.path, findings, skipped=[
            Skipped(t.qualname, failure.kind,  # type: ignore[arg-type]
                    f"{what} ({failure.detail})", t.name_span.start_line)
            for t in job.targets])
    if result.internal_error is not None:
        raise RuntimeError(f"jaxlint internal error on {job.path}:\n{result.internal_error}")
    return result


def _without_runaway(pool: WorkerPool, job: Job, codes: list[str], target: str, failure: Any) -> Result:
    """The job run again with ``target`` skipped as timed out, the failure its reason. Where a
    trace with guessed arguments ran away it is jaxlint's guess (its sizes in a loop), no error
    of the user's: the caller reports none."""
    kind = failure.kind
    if failure.progress.get("guess"):  # progress.py's watchdog ended the worker, or the module's limit did
        kind, why = "runaway", ("a trace with guessed arguments ran away, in code the guess's time limit "
                                f"cannot stop ({failure.detail})")
    elif kind == "timeout":
        why = f"its analysis ran past the module's limit ({failure.detail})"
    else:
        why = f"the worker died while it was analyzed ({failure.detail})"
    why += "; the module's other functions were analyzed again without it"
    lines = job.runaway_lines
    if failure.progress.get("guess") and failure.line is not None:  # where it was stuck: other guesses reach it too
        lines = [*lines, failure.line]
    return run_job(pool, dataclasses.replace(job, runaway={**job.runaway, target: [kind, why]},
                                             runaway_lines=lines), codes)


def _runaways_abandoned(job: Job, target: str | None, failure: Any) -> Result:
    """The module's result once guesses ran away more often than MAX_RUNAWAYS reruns allow: the
    earlier runaways with their reasons, every other target skipped as one, and no JX902/JX903
    (the guesses were jaxlint's, not the user's code)."""
    where = "" if target is None else f", in {target}"
    why = (f"not analyzed: traces with guessed arguments ran away in this module {len(job.runaway) + 1} times "
           f"(the last: {failure.detail}{where}); jaxlint does not analyze it again")
    return Result(job.path, [], skipped=[
        Skipped(t.qualname, *(job.runaway.get(t.qualname) or ("runaway", why)),  # type: ignore[arg-type]
                t.name_span.start_line)
        for t in job.targets])


def _line_span(text: str, line: int | None) -> Span:
    """The code on a 1-based line, without indentation; the file's start when unknown."""
    lines = split_lines(text)
    if line is None or not 1 <= line <= len(lines):
        return Span(1, 0, 1, 0)
    return line_code_span(line, lines[line - 1])
