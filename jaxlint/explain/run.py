"""``explain()``: the whole report for one function (worker job, HLO, costs, priced fixes).
(Not ``jaxlint run``: that command is cli/run.py.)"""
from __future__ import annotations

import dataclasses
import json
import os
import time
from typing import Any

from jaxlint.chips import TargetError, check_installed, parse_target
from jaxlint.config import DEFAULT_TIMEOUT, ConfigError, load_config
from jaxlint.config.keys import parse_snippet
from jaxlint.engine.pool import WorkerPool
from jaxlint.engine.settle import settle_explained
from jaxlint.explain import ExplainError, build, price
from jaxlint.explain.job import run
from jaxlint.explain.target import find_target, parse_spec, read


def explain(spec: str, args: str | None = None, timeout: float | None = None,
            devices: int | None = None, chip: str | None = None) -> dict[str, Any]:
    """The report for ``PATH::QUALNAME``; raises ExplainError with a message for the user.
    ``devices``: the worker's CPU devices (--devices), else the configuration's ``devices``, else
    the product of the module's literal mesh shape (jaxlint.engine.jobs.job_devices), else JAX's.
    ``chip``: the compile target (--target), else the configuration's ``target``."""

    started = time.perf_counter()
    path, qualname = parse_spec(spec)
    source = read(path)
    target = find_target(path, source.text, qualname, args)
    if chip is not None:
        try:
            check_installed(parse_target(chip))
        except TargetError as error:
            raise ExplainError(str(error)) from None
    try:
        overrides = [] if chip is None else [parse_snippet(f"target = {json.dumps(chip)}", os.getcwd())]
        config = load_config([path], overrides=overrides)
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
        # As check reports them: suppression comments and per-file-ignores of each finding's file,
        # and a fix jaxlint cannot verify by running the function shown unsafe.
        findings = settle_explained(build.own_findings(result, target), codes, config, result, target.qualname,
                                    target.span)
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
