"""Worker side, one module: import it with recording on, trace each target, run the rules."""
from __future__ import annotations

import sys
import time
from typing import Any

import jax

from jaxlint.ir.build import build_program
from jaxlint.model import Finding, Span, Target
from jaxlint.rules import RuleContext, all_rules
from jaxlint.rules.analysis_failures import InternalErrorRule, InvalidHintRule
from jaxlint.rules.jx601_trace_error import TraceError as TraceErrorRule
from jaxlint.worker import errors as failures
from jaxlint.worker.argsources import (
    ArgumentError,
    ArgumentRequest,
    ArgumentSet,
    arguments_for,
)
from jaxlint.worker.errors import describe_error
from jaxlint.worker.importer import is_project_module
from jaxlint.worker.instrument import VMAP_RECORDS, CallRecorder, VmapRecorder
from jaxlint.worker.trace import (
    NotArrays,
    code_of,
    compiled_cost,
    format_signature,
    resolve,
    trace_function,
)
from jaxlint.worker.traced_lines import equation_lines, suppression_lines


def analyze(job: dict[str, Any]) -> dict[str, Any]:
    """Analyze one module, then forget the project's modules and sys.path changes: the next
    module may come from another folder with its own ``utils.py``."""
    modules, path = set(sys.modules), list(sys.path)
    # A user file named like a module the worker already uses (``types.py``, ``code.py``)
    # replaces it in sys.modules while it is analyzed; put the original back afterwards.
    shadowed = sys.modules.get(job["module"])
    try:
        return _analyze(job)
    finally:
        for name in set(sys.modules) - modules:
            if is_project_module(sys.modules.get(name), job["root"]):
                del sys.modules[name]
        if shadowed is not None:
            sys.modules[job["module"]] = shadowed
        sys.path[:] = path
        VMAP_RECORDS.clear()  # they hold the module's functions and arguments


def _analyze(job: dict[str, Any]) -> dict[str, Any]:
    from jaxlint.worker.importer import import_module

    path = job["path"]
    targets = [Target.from_json(t) for t in job["targets"]]
    codes = set(job["codes"])
    rules = [r for r in all_rules() if r.checks_ir and r.code in codes]
    findings: list[Finding] = []
    result: dict[str, Any] = {"path": path, "traced": [], "skipped": [], "outputs": {}}
    timings = {"import": 0.0, "trace": 0.0, "rules": 0.0}
    started = time.perf_counter()
    with VmapRecorder({path}), CallRecorder({path}) as calls:
        try:
            module = import_module(job["module"], path, job["root"], job.get("override"))
        except BaseException as error:  # SystemExit and KeyboardInterrupt included
            timings["import"] = time.perf_counter() - started
            finding = failures.import_error(error, path)
            explained = _explained(codes, path, job["source"], None, error, finding.span)
            findings.extend(explained or ([finding] if finding.code in codes else []))
            for target in targets:
                _skip(result, target, "import-failed", "the module failed to import")
            result.update(findings=[f.to_json() for f in findings], timings=timings)
            return result
    timings["import"] = time.perf_counter() - started
    recorded = lambda function: calls.calls.get(code_of(function))  # noqa: E731

    to_compile: list[tuple[str, Any, ArgumentSet]] = []
    with VmapRecorder({path}):
        # After the import, so the examples files bind the very objects the targets resolve to.
        from jaxlint.worker.argsources.examples import run_examples

        started = time.perf_counter()
        findings.extend(run_examples(job, codes))
        timings["examples"] = time.perf_counter() - started
        for target in targets:
            _analyze_target(job, module, target, recorded, rules, codes, findings, result, timings,
                            to_compile)
    if job.get("compile_costs"):
        started = time.perf_counter()
        # Traces cached while jaxlint's vmap markers were active would compile with them.
        jax.clear_caches()
        for qualname, function, arguments in to_compile:
            result.setdefault("compiled", {}).setdefault(qualname, []).append(
                compiled_cost(function, arguments))
        timings["compile"] = time.perf_counter() - started
    if job.get("kind") == "explain":  # `jaxlint explain`: compile and describe the one target
        from jaxlint.explain.collect import collect

        result["explain"] = collect(job, to_compile)
    result["findings"] = [f.to_json() for f in findings]
    result["timings"] = timings
    return result


def _explained(codes: set[str], path: str, source: str, target: Target | None,
               error: BaseException, span: Span) -> list[Finding]:
    """A more specific rule's account of a failure (JX204 for a list as a static argument)."""
    return [finding for rule in all_rules() if rule.code in codes
            for finding in rule.explain(path, source, target, error, span)]


def _skip(result: dict[str, Any], target: Target, kind: str, reason: str) -> None:
    """An untraced target: ``kind`` is one of no-arguments, invalid-hint, trace-error,
    not-traceable, not-found, import-failed (and, from the jaxlint process, timeout and crash)."""
    result["skipped"].append({"target": target.qualname, "kind": kind, "reason": reason,
                              "line": target.name_span.start_line})


def _analyze_target(job: dict[str, Any], module: Any, target: Target, recorded: Any, rules: list,
                    codes: set[str], findings: list[Finding], result: dict[str, Any],
                    timings: dict[str, float], to_compile: list) -> None:
    path, source = job["path"], job["source"]
    started = time.perf_counter()
    function = resolve(module, target.qualname)
    if function is None:
        _skip(result, target, "not-found", "not found on the module after import")
        return
    request = ArgumentRequest(target, function, module, job, recorded)
    try:
        signatures = arguments_for(request)
    except ArgumentError as error:
        if InvalidHintRule.code in codes:
            findings.append(InvalidHintRule.finding(path, target.hint_span or target.name_span, f"{error}",
                                                    target=target.qualname))
        _skip(result, target, "invalid-hint", str(error))
        return
    if not signatures:
        _skip(result, target, "no-arguments", "; ".join(request.notes) or "no abstract arguments known")
        return
    traced, errors = [], []
    reported: set[tuple] = set()
    lines: set[int] = set()  # lines of suppression comments' statements that made equations (JX800)
    wanted = suppression_lines(source)
    for arguments in signatures:
        signature = format_signature(arguments)
        started = time.perf_counter()
        try:
            closed = trace_function(function, arguments)
        except NotArrays as error:
            # A factory (returns a function or an optimizer object): not an error in the user's
            # code; the functions it makes are traced where a traced caller uses them.
            timings["trace"] += time.perf_counter() - started
            _skip(result, target, "not-traceable", str(error))
            return
        except BaseException as error:  # user code: sys.exit() while traced is a trace error too
            timings["trace"] += time.perf_counter() - started
            trace_error = failures.trace_error(error, path, target, signature)
            explained = _explained(codes, path, job["source"], target, error, trace_error.span)
            for finding in explained or ([trace_error] if TraceErrorRule.code in codes else []):
                place = (finding.code, finding.span.start_line, finding.span.start_col)
                if place not in reported:
                    reported.add(place)
                    findings.append(finding)
            errors.append(f"{signature}: {describe_error(error)}")
            continue
        traced.append({"source": arguments.source, "signature": signature,
                       "outputs": [str(a) for a in closed.out_avals]})
        to_compile.append((target.qualname, function, arguments))
        timings["trace"] += time.perf_counter() - started
        started = time.perf_counter()
        for finding in run_rules(rules, codes, path, source, target, closed, signature, job.get("config")):
            # Several signatures, one report: the first signature's finding at each place stands
            # (messages differ only by the signature's sizes).
            place = (finding.code, finding.span.start_line, finding.span.start_col)
            if place not in reported:
                reported.add(place)
                findings.append(finding)
        if wanted - lines:
            lines |= equation_lines(closed, path, wanted - lines)
        timings["rules"] += time.perf_counter() - started
    if traced:
        result["traced"].append({"target": target.qualname, "source": traced[0]["source"],
                                 "signature": traced[0]["signature"],
                                 "signatures": [t["signature"] for t in traced], "notes": request.notes,
                                 # signatures that raised: their code paths went unchecked (JX800)
                                 "failed_signatures": len(errors), "lines": sorted(lines)})
        result["outputs"][target.qualname] = [t["outputs"] for t in traced]
    else:
        _skip(result, target, "trace-error", "trace error: " + "; ".join(errors))


def run_rules(rules: list, codes: set[str], path: str, source: str, target: Target,
               closed: Any, stage_signature: str, config: dict[str, Any] | None = None) -> list[Finding]:
    """Findings of every rule; a rule that crashes is a finding about jaxlint, not a lost run.
    ``config``: the job's configuration (``Config.for_job()``, rule options included), None
    outside a ``jaxlint check`` run (rules then use their defaults)."""
    findings: list[Finding] = []
    stage = "building the IR"
    try:
        program = build_program(closed)
        config = config or {}
        context = RuleContext(path, source, target, program, stage_signature, VMAP_RECORDS,
                              config.get("rule_options", {}), config)
        for rule in rules:
            stage = f"running rule {rule.code}"
            findings.extend(rule.check(context))
    except Exception as error:
        if InternalErrorRule.code in codes:
            findings.append(InternalErrorRule.finding(
                path, target.name_span,
                f"jaxlint failed while {stage} for {target.qualname}: {describe_error(error)} "
                "(a bug in jaxlint; please report it)", target=target.qualname))
    return findings


__all__ = ["analyze"]
