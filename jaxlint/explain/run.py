"""``explain()``: the whole report for one function (worker job, HLO, costs, priced fixes)."""
from __future__ import annotations

import dataclasses
import time
from typing import Any

from jaxlint.config import DEFAULT_TIMEOUT, ConfigError, load_config
from jaxlint.engine.pool import WorkerPool
from jaxlint.engine.settle import settle_each_file
from jaxlint.explain import ExplainError, build, price
from jaxlint.explain.job import run
from jaxlint.explain.target import find_target, parse_spec, read


def explain(spec: str, args: str | None = None, timeout: float | None = None,
            devices: int | None = None) -> dict[str, Any]:
    """The report for ``PATH::QUALNAME``; raises ExplainError with a message for the user.
    ``devices``: the worker's CPU devices (--devices), else the configuration's ``devices``, else
    the product of the module's literal mesh shape (jaxlint.engine.jobs.job_devices), else JAX's."""

    started = time.perf_counter()
    path, qualname = parse_spec(spec)
    source = read(path)
    target = find_target(path, source.text, qualname, args)
    try:
        config = load_config([path])
        codes = sorted({rule.code for rule in config.rules()} - config.ignored_codes(path))
    except ConfigError as error:
        raise ExplainError(f"configuration error: {error}") from None
    settings = config.settings()
    if devices is not None:
        settings = dataclasses.replace(settings, devices=devices)
    timings: dict[str, float] = {}
    with WorkerPool(timeout or config.timeout or DEFAULT_TIMEOUT) as pool:
        result = run(pool, source, target, codes, settings, "full")
        data = result.kind_data
        timings["analysis"] = time.perf_counter() - started
        report = build.report(path, source.text, target, data, args is not None)
        # As check reports them: suppression comments and per-file-ignores of each finding's file.
        findings = settle_each_file(build.own_findings(result, target), codes, config)
        priced = time.perf_counter()
        report["findings"] = [price.price(pool, source, target, finding, data, settings, args, report)
                              for finding in findings]
        timings["pricing fixes"] = time.perf_counter() - priced
    build.conclude(report)
    # Seconds: the worker's stages (the JAX import once, then import, trace, rules, compile).
    timings.update({"total": time.perf_counter() - started, "worker start (JAX import)": pool.jax_import,
                    **{f"worker {k}": v for k, v in result.timings.items()},
                    **{f"worker explain {k}": v for k, v in data.get("timings", {}).items()}})
    report["timings"] = {key: round(value, 3) for key, value in timings.items()}
    return report
