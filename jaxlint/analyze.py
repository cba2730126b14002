"""Worker side, one module: import it with recording on, trace each target, run the rules."""
from __future__ import annotations

import functools
import inspect
import os
import sys
import time
import traceback
from typing import Any

import jax
import numpy as np

from jaxlint import compat, hints
from jaxlint.argsources import ArgumentError, ArgumentRequest, ArgumentSet, arguments_for
from jaxlint.ir import build_program
from jaxlint.model import Finding, Span, Target
from jaxlint.record import VMAP_RECORDS, CallRecorder, VmapRecorder
from jaxlint.rules import RuleContext, all_rules
from jaxlint.rules.analysis_failures import ImportErrorRule, InternalErrorRule, InvalidHintRule
from jaxlint.rules.jx601_trace_error import TraceError as TraceErrorRule
from jaxlint.rules.jx601_trace_error import hint_for, is_jax_tracing_error
from jaxlint.traced_lines import equation_lines, suppression_lines


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


def is_project_module(module: Any, root: str) -> bool:
    """Loaded from the project's folder (and not from a virtual environment inside it)."""
    try:
        file = getattr(module, "__file__", None)
        files = [file] if file else list(getattr(module, "__path__", []))
    except Exception:  # a module object of the user's with surprising attributes
        return False
    installed = tuple(os.path.join(p, "") for p in (sys.prefix, sys.base_prefix, sys.exec_prefix))
    here = os.path.join(os.path.dirname(os.path.abspath(__file__)), "")
    prefix = os.path.join(root, "")
    return any(isinstance(f, str) and f.startswith(prefix) and not f.startswith((here, *installed))
               and "site-packages" not in f and "dist-packages" not in f for f in files)


def _analyze(job: dict[str, Any]) -> dict[str, Any]:
    from jaxlint.worker import import_module

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
            finding = _import_error(error, path)
            explained = _explained(codes, path, job["source"], None, error, finding.span)
            findings.extend(explained or ([finding] if finding.code in codes else []))
            for target in targets:
                _skip(result, target, "import-failed", "the module failed to import")
            result.update(findings=[f.to_json() for f in findings], timings=timings)
            return result
    timings["import"] = time.perf_counter() - started
    recorded = lambda function: calls.calls.get(_code_of(function))  # noqa: E731

    to_compile: list[tuple[str, Any, ArgumentSet]] = []
    with VmapRecorder({path}):
        # After the import, so the examples files bind the very objects the targets resolve to.
        from jaxlint.argsources.examples import run_examples

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
    function = _resolve(module, target.qualname)
    if function is None:
        _skip(result, target, "not-found", "not found on the module after import")
        return
    request = ArgumentRequest(target, function, module, job, recorded)
    try:
        signatures = arguments_for(request)
    except ArgumentError as error:
        if InvalidHintRule.code in codes:
            findings.append(Finding(InvalidHintRule.code, InvalidHintRule.name, f"{error}",
                                    InvalidHintRule.severity, path, target.hint_span or target.name_span,
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
            trace_error = _trace_error(error, path, target, signature)
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
            findings.append(Finding(
                InternalErrorRule.code, InternalErrorRule.name,
                f"jaxlint failed while {stage} for {target.qualname}: {describe_error(error)} "
                "(a bug in jaxlint; please report it)", InternalErrorRule.severity, path,
                target.name_span, target=target.qualname))
    return findings


def _resolve(module: Any, qualname: str) -> Any:
    value = module
    for part in qualname.split("."):
        try:
            value = getattr(value, part, None)
        except Exception:  # a module or class __getattr__ of the user's that raises
            return None
        if value is None:
            return None
    return value


def _code_of(function: Any) -> Any:
    try:
        return inspect.unwrap(function).__code__
    except (AttributeError, ValueError):
        return None


def _bind(function: Any, arguments: ArgumentSet) -> tuple[Any, list[Any]]:
    """(apply, abstract inputs): ShapeDtypeStruct leaves become inputs, others static values."""
    is_abstract = lambda leaf: isinstance(leaf, jax.ShapeDtypeStruct)  # noqa: E731
    leaves, treedef = jax.tree_util.tree_flatten((arguments.args, arguments.kwargs))
    dynamic = [i for i, leaf in enumerate(leaves) if is_abstract(leaf)]

    called = arguments.call or function

    def apply(*values: Any) -> Any:
        filled = list(leaves)
        for index, value in zip(dynamic, values):
            filled[index] = value
        args, kwargs = jax.tree_util.tree_unflatten(treedef, filled)
        out = called(*args, **kwargs)
        kinds = {type(leaf).__name__ for leaf in jax.tree_util.tree_leaves(out)
                 if not isinstance(leaf, (jax.Array, np.ndarray, np.generic, int, float, complex, bool))}
        if kinds:
            raise NotArrays(f"returns {', '.join(sorted(kinds))}, not arrays: a factory is not traced "
                            "itself; the functions it makes are traced where a traced caller uses them")
        return out

    # JAX names the traced function in its messages: the user's, not this wrapper.
    try:
        functools.update_wrapper(apply, called)
    except (AttributeError, TypeError):  # a callable object without a name
        pass
    return apply, [leaves[i] for i in dynamic]


class NotArrays(TypeError):
    """The traced function returned something other than arrays (a function, an object)."""


def trace_function(function: Any, arguments: ArgumentSet) -> Any:
    """The ClosedJaxpr of ``function`` applied to the abstract arguments."""
    apply, inputs = _bind(function, arguments)
    return jax.make_jaxpr(apply)(*inputs)


def compiled_cost(function: Any, arguments: ArgumentSet) -> dict[str, Any] | None:
    """XLA's own figures for the compiled function (``--cost compiled``), or None when it cannot
    compile (symbolic shapes, errors). Run without jaxlint's instrumentation in the trace."""
    apply, inputs = _bind(function, arguments)
    try:
        compiled = jax.jit(apply).lower(*inputs).compile()
    except Exception:
        return None
    return compat.compiled_costs(compiled)


class _Opaque:
    """Stands in for a static object whose repr is useless in a message (``<M object at 0x..>``)."""

    def __init__(self, value: Any) -> None:
        self.text = f"<{type(value).__name__} object>"

    def __repr__(self) -> str:
        return self.text


class _Node:
    """A registered pytree class shown by its children (``Params(f32[3], f32[])``), not its repr."""

    def __init__(self, value: Any, children: list[Any]) -> None:
        self.text = f"{type(value).__name__}({', '.join(hints.format_abstract(c) for c in children)})"

    def __repr__(self) -> str:
        return self.text


def _is_custom_node(value: Any) -> bool:
    """A pytree node other than tuple/list/dict (register_pytree_node_class, dataclasses...)."""
    if value is None or isinstance(value, (tuple, list, dict)):
        return False
    return not jax.tree_util.treedef_is_leaf(jax.tree_util.tree_structure(value))


def _readable(leaf: Any) -> Any:
    if isinstance(leaf, jax.ShapeDtypeStruct):
        return leaf
    if _is_custom_node(leaf):
        children = jax.tree_util.tree_flatten(leaf, is_leaf=lambda child: child is not leaf)[0]
        return _Node(leaf, [_shown(child) for child in children])
    try:
        text = repr(leaf)
    except Exception:  # a user's __repr__ that raises
        return _Opaque(leaf)
    return _Opaque(leaf) if " at 0x" in text else leaf


def _shown(tree: Any) -> Any:
    return jax.tree_util.tree_map(_readable, tree, is_leaf=_is_custom_node)


def format_signature(arguments: ArgumentSet) -> str:
    def show(tree: Any) -> str:
        return hints.format_abstract(_shown(tree))

    # Each argument on its own: mapping over the kwargs dict would sort its keys.
    parts = [show(a) for a in arguments.args] + [f"{k}={show(v)}" for k, v in arguments.kwargs.items()]
    return ", ".join(parts)


def user_frames(error: BaseException, path: str) -> tuple[traceback.FrameSummary | None, str]:
    """The innermost frame in the analyzed file, and where the error was raised if that is
    deeper in another user file (" (raised at helpers.py:7)"), else ""."""
    frames = traceback.extract_tb(error.__traceback__)
    here = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
    in_file = [f for f in frames if f.filename == path]
    outside = [f for f in frames if not f.filename.startswith(here) and "/jax/" not in f.filename
               and "importlib" not in f.filename and not f.filename.startswith("<")]
    frame = in_file[-1] if in_file else None
    raised = outside[-1] if outside else None
    if raised is None or raised.filename == path:
        return frame, ""
    name = os.path.relpath(raised.filename, os.path.dirname(path))
    return frame, f" (raised at {raised.filename if name.startswith('..') else name}:{raised.lineno})"


def _frame_span(frame: traceback.FrameSummary | None) -> Span:
    if frame is None or frame.lineno is None:
        return Span(1, 0, 1, 0)
    # Traceback columns are UTF-8 byte offsets; spans count characters.
    col = compat.char_column(frame.filename, frame.lineno, frame.colno or 0)
    end_line = frame.end_lineno or frame.lineno
    end_col = compat.char_column(frame.filename, end_line, frame.end_colno) if frame.end_colno else col
    return Span(frame.lineno, col, end_line, end_col)


def describe_error(error: BaseException) -> str:
    text = str(error).strip().splitlines()
    head = text[0].rstrip(".") if text else ""  # messages append "; ..." after it
    return f"{type(error).__name__}: {head}" if head else type(error).__name__


def _import_error(error: BaseException, path: str) -> Finding:
    frame, raised = user_frames(error, path)
    if isinstance(error, SystemExit):
        message = f"the module exits while being imported (SystemExit({error.code!r})); it was not analyzed"
    elif is_jax_tracing_error(error):
        # The module traces code itself while imported: a tracing error, at the line that raised.
        message = (f"importing the module raised {describe_error(error)}{raised} while JAX traced it: "
                   f"{hint_for(error)}")
        return Finding(TraceErrorRule.code, TraceErrorRule.name, message, TraceErrorRule.severity,
                       path, _frame_span(frame))
    else:
        message = f"importing the module raised {describe_error(error)}{raised}; its functions were not traced"
    return Finding(ImportErrorRule.code, ImportErrorRule.name, message, ImportErrorRule.severity, path,
                   _frame_span(frame))


def _trace_error(error: BaseException, path: str, target: Target, signature: str) -> Finding:
    frame, raised = user_frames(error, path)
    span = _frame_span(frame) if frame is not None else target.name_span
    hint = hint_for(error)
    message = f"tracing {target.qualname}({signature}) raised {describe_error(error)}{raised}" + (
        f": {hint}" if hint else "")
    return Finding(TraceErrorRule.code, TraceErrorRule.name, message, TraceErrorRule.severity, path,
                   span, target=target.qualname)


__all__ = ["analyze"]
