"""``jaxlint explain PATH::QUALNAME``: what one function compiles to, what is really computed more
than once, what it costs, and what each finding's fix saves.

``explain()`` returns the report: one plain JSON-able dict (``schema_version`` 1), rendered as text
(text.py), JSON, or an HTML page (html.py). User code runs only in a worker process (analyze.py
runs the job, explain/collect.py adds the compile); this module never imports JAX.
"""
from __future__ import annotations

import time
from typing import Any

__all__ = ["ExplainError", "explain"]


class ExplainError(Exception):
    """Why explain cannot run: printed as ``jaxlint: <message>``, exit status 2."""


def explain(spec: str, args: str | None = None, timeout: float | None = None) -> dict[str, Any]:
    """The report for ``PATH::QUALNAME``; raises ExplainError with a message for the user."""
    from jaxlint.config import ConfigError, load_config
    from jaxlint.explain import build, price
    from jaxlint.explain.target import find_target, parse_spec, read
    from jaxlint.runner import DEFAULT_TIMEOUT, WorkerPool

    started = time.perf_counter()
    path, qualname = parse_spec(spec)
    source = read(path)
    target = find_target(path, source.text, qualname, args)
    try:
        config = load_config([path])
        codes = sorted({rule.code for rule in config.rules()} - config.ignored_codes(path))
    except ConfigError as error:
        raise ExplainError(f"configuration error: {error}") from None
    timings: dict[str, float] = {}
    with WorkerPool(timeout or config.timeout or DEFAULT_TIMEOUT) as pool:
        result = run(pool, source, target, codes, config.for_job(), "full")
        data = result["explain"]
        timings["analysis"] = time.perf_counter() - started
        report = build.report(path, source.text, target, data, args is not None)
        findings = build.own_findings(result, target)
        priced = time.perf_counter()
        report["findings"] = [price.price(pool, source, target, finding, data, config.for_job(), args, report)
                              for finding in findings]
        timings["pricing fixes"] = time.perf_counter() - priced
    build.conclude(report)
    # Seconds: the worker's stages (the JAX import once, then import, trace, rules, compile).
    timings.update({"total": time.perf_counter() - started, "worker start (JAX import)": pool.jax_import,
                    **{f"worker {k}": v for k, v in result.get("timings", {}).items()},
                    **{f"worker explain {k}": v for k, v in data.get("timings", {}).items()}})
    report["timings"] = {key: round(value, 3) for key, value in timings.items()}
    return report


def run(pool: Any, source: Any, target: Any, codes: list[str], config: dict[str, Any], mode: str,
        override: str | None = None) -> dict[str, Any]:
    """One explain job in the worker; ExplainError when the target could not be explained."""
    from jaxlint.check import make_job
    from jaxlint.explain.target import display
    from jaxlint.runner import WorkerFailure

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
    from jaxlint.coverage import suggestion
    from jaxlint.explain.target import display

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
