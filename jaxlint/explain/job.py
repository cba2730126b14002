"""Running the explain job in a worker and turning its failures into ExplainError messages."""
from __future__ import annotations

from jaxlint.engine.jobs import make_job
from jaxlint.engine.pool import WorkerFailure, WorkerPool
from jaxlint.explain import ExplainError
from jaxlint.model import Result, Settings, Target
from jaxlint.report.suggestion import suggestion
from jaxlint.text import SourceFile
from jaxlint.text import relative as display

# The explain job kind: the worker imports and calls this hook after tracing (Job.kind).
KIND = "jaxlint.explain.collect:collect"


def run(pool: WorkerPool, source: SourceFile, target: Target, codes: list[str], settings: Settings, mode: str,
        override: str | None = None) -> Result:
    """One explain job in the worker (its data in ``kind_data``); ExplainError when the target
    could not be explained."""
    job = make_job(source, [target], codes, settings, override=override)
    job.kind, job.kind_options = KIND, {"mode": mode}
    name = f"{display(source.path)}::{target.qualname}"
    try:
        result = pool.run(job)
    except WorkerFailure as failure:
        what = "took too long (--timeout sets the limit)" if failure.kind == "timeout" else "crashed"
        where = f" at line {failure.line}" if failure.line else ""
        raise ExplainError(f"importing or tracing {name} {what}{where}: {failure.detail}") from None
    if result.internal_error is not None:
        last = result.internal_error.strip().splitlines()[-1]
        raise ExplainError(f"internal error while explaining {name} (a bug in jaxlint): {last}")
    if result.kind_data is None:
        raise ExplainError(_not_traced(result, target, name, source.text))
    if result.kind_data.get("error"):
        raise ExplainError(f"cannot explain {name}: {result.kind_data['error']}")
    return result


def _not_traced(result: Result, target: Target, name: str, text: str) -> str:
    skipped = next((s for s in result.skipped if s.target == target.qualname), None)
    if skipped is None:
        return f"{name} was not traced"
    kind, reason = skipped.kind, skipped.reason
    if kind == "import-failed":
        failure = next((f for f in result.findings if f.code in ("JX901", "JX601")), None)
        return f"cannot import {display(result.path)}: {failure.message if failure else reason}"
    if kind == "dependency-missing":
        return f"cannot import {display(result.path)}: {reason}"
    if kind == "no-arguments":
        hint, note = suggestion(target, kind, reason, text)
        given = hint.replace("# jaxlint: args", "").strip() if hint else ""
        advice = f'; pass them with --args "{given}" (real dtypes and shapes)' if given else ""
        why = f" ({reason})" if reason != "no abstract arguments known" else ""
        return f"no abstract arguments known for {name}{why}{advice}" + (f" ({note})" if note else "")
    if kind == "invalid-hint":
        return f"the arguments for {name} are unusable: {reason}"
    return f"cannot trace {name}: {reason}"
