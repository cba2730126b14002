"""Running the explain job in a worker and turning its failures into ExplainError messages."""
from __future__ import annotations

from typing import Any

from jaxlint.engine.jobs import make_job
from jaxlint.engine.pool import WorkerFailure
from jaxlint.explain import ExplainError
from jaxlint.report.coverage import suggestion
from jaxlint.text import relative as display


def run(pool: Any, source: Any, target: Any, codes: list[str], config: dict[str, Any], mode: str,
        override: str | None = None) -> dict[str, Any]:
    """One explain job in the worker; ExplainError when the target could not be explained."""

    job = make_job(source, [target], codes, config, override=override)
    job["kind"], job["explain"] = "explain", {"mode": mode}
    name = f"{display(source.path)}::{target.qualname}"
    try:
        result = pool.run(job)
    except WorkerFailure as failure:
        what = "took too long (--timeout sets the limit)" if failure.kind == "timeout" else "crashed"
        where = f" at line {failure.line}" if failure.line else ""
        raise ExplainError(f"importing or tracing {name} {what}{where}: {failure.detail}") from None
    if "internal_error" in result:
        last = result["internal_error"].strip().splitlines()[-1]
        raise ExplainError(f"internal error while explaining {name} (a bug in jaxlint): {last}")
    if result.get("explain") is None:
        raise ExplainError(_not_traced(result, target, name))
    if result["explain"].get("error"):
        raise ExplainError(f"cannot explain {name}: {result['explain']['error']}")
    return result


def _not_traced(result: dict[str, Any], target: Any, name: str) -> str:

    skipped = next((s for s in result.get("skipped", []) if s["target"] == target.qualname), None)
    if skipped is None:
        return f"{name} was not traced"
    kind, reason = skipped["kind"], skipped["reason"]
    if kind == "import-failed":
        failure = next((f for f in result.get("findings", []) if f["code"] in ("JX901", "JX601")), None)
        return f"cannot import {display(result['path'])}: {failure['message'] if failure else reason}"
    if kind == "no-arguments":
        hint, note = suggestion(target, kind, reason)
        given = hint.replace("# jaxlint: args", "").strip() if hint else ""
        advice = f'; pass them with --args "{given}" (real dtypes and shapes)' if given else ""
        why = f" ({reason})" if reason != "no abstract arguments known" else ""
        return f"no abstract arguments known for {name}{why}{advice}" + (f" ({note})" if note else "")
    if kind == "invalid-hint":
        return f"the arguments for {name} are unusable: {reason}"
    return f"cannot trace {name}: {reason}"
