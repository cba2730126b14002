"""Worker side, one module: import it with recording on, trace each target, run the rules."""
from __future__ import annotations

import inspect
import os
import time
import traceback
from typing import Any

import jax

from jaxlint import compat, hints
from jaxlint.arguments import ArgumentError, ArgumentSet, arguments_for
from jaxlint.ir import build_program
from jaxlint.model import Finding, Span, Target
from jaxlint.record import VMAP_RECORDS, CallRecorder, VmapRecorder, abstractify
from jaxlint.rules import RuleContext, all_rules
from jaxlint.rules.analysis_failures import ImportErrorRule, InvalidHintRule, TraceErrorRule


def analyze(job: dict[str, Any]) -> dict[str, Any]:
    from jaxlint.worker import import_module

    path = job["path"]
    targets = [Target.from_json(t) for t in job["targets"]]
    codes = set(job["codes"])
    rules = [r for r in all_rules() if r.checks_ir and r.code in codes]
    source = job["source"]
    findings: list[Finding] = []
    result: dict[str, Any] = {"path": path, "traced": [], "skipped": [], "outputs": {}}
    timings = {"import": 0.0, "trace": 0.0, "rules": 0.0}
    started = time.perf_counter()
    with VmapRecorder({path}), CallRecorder({path}) as calls:
        try:
            module = import_module(job["module"], path, job["root"], job.get("override"))
        except BaseException as error:  # SystemExit and KeyboardInterrupt included
            timings["import"] = time.perf_counter() - started
            if ImportErrorRule.code in codes:
                findings.append(_import_error(error, path))
            result.update(findings=[f.to_json() for f in findings], timings=timings,
                          skipped=[{"target": t.qualname, "reason": "module import failed"} for t in targets])
            return result
    timings["import"] = time.perf_counter() - started
    recorded = lambda function: calls.calls.get(_code_of(function))  # noqa: E731

    with VmapRecorder({path}):
        for target in targets:
            started = time.perf_counter()
            function = _resolve(module, target.qualname)
            if function is None:
                result["skipped"].append({"target": target.qualname, "reason": "not found after import"})
                continue
            try:
                arguments = arguments_for(target, function, recorded)
            except ArgumentError as error:
                if InvalidHintRule.code in codes:
                    findings.append(Finding(InvalidHintRule.code, InvalidHintRule.name,
                                            f"{error}", InvalidHintRule.severity, path,
                                            target.hint_span or target.name_span, target=target.qualname))
                result["skipped"].append({"target": target.qualname, "reason": str(error)})
                continue
            if arguments is None:
                result["skipped"].append({"target": target.qualname, "reason": "no arguments known"})
                continue
            signature = _signature(arguments)
            try:
                closed = _trace(function, arguments)
            except Exception as error:
                timings["trace"] += time.perf_counter() - started
                if TraceErrorRule.code in codes:
                    findings.append(_trace_error(error, path, target, signature))
                result["skipped"].append({"target": target.qualname, "reason": f"trace error: {error}"})
                continue
            program = build_program(closed)
            result["traced"].append({"target": target.qualname, "source": arguments.source,
                                     "signature": signature})
            result["outputs"][target.qualname] = [str(a) for a in closed.out_avals]
            timings["trace"] += time.perf_counter() - started
            started = time.perf_counter()
            context = RuleContext(path, source, target, program, signature, VMAP_RECORDS)
            for rule in rules:
                findings.extend(rule.check(context))
            timings["rules"] += time.perf_counter() - started
    result["findings"] = [f.to_json() for f in findings]
    result["timings"] = timings
    return result


def _resolve(module: Any, qualname: str) -> Any:
    value = module
    for part in qualname.split("."):
        value = getattr(value, part, None)
        if value is None:
            return None
    return value


def _code_of(function: Any) -> Any:
    try:
        return inspect.unwrap(function).__code__
    except (AttributeError, ValueError):
        return None


def _trace(function: Any, arguments: ArgumentSet) -> Any:
    """Trace with ShapeDtypeStruct leaves as inputs; every other leaf is a static value."""
    is_abstract = lambda leaf: isinstance(leaf, jax.ShapeDtypeStruct)  # noqa: E731
    leaves, treedef = jax.tree_util.tree_flatten((arguments.args, arguments.kwargs))
    dynamic = [i for i, leaf in enumerate(leaves) if is_abstract(leaf)]

    def apply(*values: Any) -> Any:
        filled = list(leaves)
        for index, value in zip(dynamic, values):
            filled[index] = value
        args, kwargs = jax.tree_util.tree_unflatten(treedef, filled)
        return function(*args, **kwargs)

    return jax.make_jaxpr(apply)(*[leaves[i] for i in dynamic])


def _signature(arguments: ArgumentSet) -> str:
    parts = [hints.format_abstract(a) for a in arguments.args]
    parts += [f"{k}={hints.format_abstract(v)}" for k, v in arguments.kwargs.items()]
    return ", ".join(parts)


def _user_frame(error: BaseException, path: str) -> traceback.FrameSummary | None:
    """The innermost frame of the analyzed file, else of any file outside JAX and jaxlint."""
    frames = traceback.extract_tb(error.__traceback__)
    here = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
    in_file = [f for f in frames if f.filename == path]
    if in_file:
        return in_file[-1]
    outside = [f for f in frames if not f.filename.startswith(here) and "/jax/" not in f.filename
               and "importlib" not in f.filename and not f.filename.startswith("<")]
    return outside[-1] if outside else None


def _frame_span(frame: traceback.FrameSummary | None) -> Span:
    if frame is None or frame.lineno is None:
        return Span(1, 0, 1, 0)
    col = frame.colno or 0
    return Span(frame.lineno, col, frame.end_lineno or frame.lineno, frame.end_colno or col)


def _describe(error: BaseException) -> str:
    text = str(error).strip().splitlines()
    head = text[0] if text else ""
    return f"{type(error).__name__}: {head}" if head else type(error).__name__


def _import_error(error: BaseException, path: str) -> Finding:
    frame = _user_frame(error, path)
    if isinstance(error, SystemExit):
        message = f"the module exits while being imported (SystemExit({error.code!r})); it was not analyzed"
    else:
        where = "" if frame is None or frame.filename == path else f" (raised at {frame.filename}:{frame.lineno})"
        message = f"importing the module raised {_describe(error)}{where}; its functions were not traced"
    span = _frame_span(frame) if frame is not None and frame.filename == path else Span(1, 0, 1, 0)
    return Finding(ImportErrorRule.code, ImportErrorRule.name, message, ImportErrorRule.severity, path, span)


def _trace_error(error: BaseException, path: str, target: Target, signature: str) -> Finding:
    frame = _user_frame(error, path)
    span = _frame_span(frame) if frame is not None and frame.filename == path else target.name_span
    message = f"tracing {target.qualname}({signature}) raised {_describe(error)}"
    return Finding(TraceErrorRule.code, TraceErrorRule.name, message, TraceErrorRule.severity, path,
                   span, target=target.qualname)


__all__ = ["analyze", "abstractify", "compat"]
