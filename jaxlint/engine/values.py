"""Fixes proven on values: which traced function runs a fix's code, the demotion of a safe fix
whose function cannot be run, and the comparison of what the original and the fixed function
return on the same generated inputs (worker/values.py), within each dtype's rounding.

Equal output shapes and dtypes (what verification compared before) do not make a fix safe: a
hoisted lambda that keeps the first iteration's learning rate returns arrays of the same shape.
"""
from __future__ import annotations

from dataclasses import replace
from typing import Any, Collection, Iterable, Mapping

from jaxlint.engine import suppressions
from jaxlint.engine.results import FileAnalysis
from jaxlint.model import Finding, Span

# Relative tolerance per output dtype: rounding a fix may change (XLA fuses and reorders the
# fixed program differently). Integers, booleans and key data compare exactly.
TOLERANCE = {"float16": 2e-2, "bfloat16": 2e-2, "float32": 1e-4, "complex64": 1e-4,
             "float64": 1e-9, "complex128": 1e-9}


def function_of(finding: Finding, analysis: FileAnalysis) -> str | None:
    """The traced target whose run executes the fix's code: the finding's own target, else (a
    source rule's finding) the innermost traced target around it; None when none was traced."""
    result = analysis.result
    traced = {entry.target for entry in result.traced} if result is not None else set()
    return running(finding, traced, [(t.qualname, t.span) for t in analysis.targets])


def running(finding: Finding, traced: Collection[str], spans: Iterable[tuple[str, Span]]) -> str | None:
    """Of the ``traced`` functions (their names; ``spans``: name and span of the functions of the
    finding's file), the one whose run executes the finding's code: its own target, else the
    innermost one around it; None when none is."""
    if finding.target in traced:
        return finding.target
    line = finding.span.start_line
    around = [(name, span) for name, span in spans if name in traced and span.start_line <= line <= span.end_line]
    return max(around, key=lambda item: item[1].start_line)[0] if around else None


def demote_unverifiable(analyses: list[FileAnalysis]) -> None:
    """``check``'s demotion: a safe fix jaxlint cannot run the function of (not traced, or calling
    back into Python, or traced only with guessed arguments) becomes unsafe, saying why."""
    for analysis in analyses:
        result = analysis.result
        effectful = set(result.effectful) if result is not None else set()
        guessed = {t.target: t.signature for t in result.traced if t.source == "inferred"} if result is not None else {}
        traced = {entry.target for entry in result.traced} if result is not None else set()
        spans = [(t.qualname, t.span) for t in analysis.targets]
        for old, new in zip(list(analysis.findings), unverifiable_demoted(analysis.findings, traced, spans,
                                                                          effectful, guessed)):
            if new is not old:
                analysis.replace_finding(old, new)


def unverifiable_demoted(findings: list[Finding], traced: Collection[str], spans: Iterable[tuple[str, Span]],
                         effectful: Collection[str] = (), guessed: Mapping[str, str] | None = None) -> list[Finding]:
    """The findings, each safe fix whose code none of the ``traced`` functions runs (``running``),
    or one that calls back into Python (``effectful``) or ran only with guessed arguments
    (``guessed``: name -> signature), made unsafe, saying why: its safety would rest on the
    source alone. Every driver's demotion (check's, and the watched runs' in settle.py)."""
    spans = list(spans)
    kept = []
    for finding in findings:
        fix = finding.fix
        why = None
        if fix is not None and fix.applicability == "safe" and not suppressions.is_comment_fix(finding):
            why = _why_unverifiable(running(finding, traced, spans), effectful, guessed or {})
        kept.append(finding if why is None else demoted(finding, why))
    return kept


def _why_unverifiable(function: str | None, effectful: Collection[str], guessed: Mapping[str, str]) -> str | None:
    if function is None:
        return NOT_RUN
    if function in effectful:
        return f"`{function}` calls back into Python, so jaxlint does not run it to compare values"
    if function in guessed:  # the values were compared at shapes nothing says it receives
        return (f"`{function}` ran only with guessed arguments ({guessed[function]}), so its "
                "values were compared at shapes it may never receive (a hint would trace it)")
    return None


NOT_RUN = "no traced function runs this code, so its values cannot be compared (a hint would trace it)"


def demoted(finding: Finding, why: str) -> Finding:
    """The finding with its safe fix made unsafe, its message saying why."""
    assert finding.fix is not None
    return replace(finding, fix=replace(finding.fix, applicability="unsafe",
                                        message=f"{finding.fix.message} (unsafe: {why})"))


def difference(function: str, before: list[list[Any]] | None, after: list[list[Any]] | None,
               stabilizing: bool = False) -> str | None:
    """Why the fixed function's runs differ from the original's, or None when every output of
    every seed agrees. Runs that could not be made are a difference too: nothing was proven.

    For a function a ``stabilizing`` fix is in (a numerics rule's: it replaces an expression that
    overflows), the worker's last run of each signature is on wide inputs (``{"wide": ...}``):
    there the fixed values must agree where the original's are finite, and the fix may turn the
    original's infinities and NaN into numbers but never add any."""
    if not before or not after:
        return f"`{function}` could not be run on generated inputs"
    compared = 0
    for number, (old_runs, new_runs) in enumerate(zip(before, after), 1):
        for seed, (old, new) in enumerate(zip(old_runs, new_runs)):
            wide = isinstance(old, dict) and "wide" in old
            if wide and not stabilizing:
                continue
            if wide:
                fixed = new.get("wide") if isinstance(new, dict) else None
                why = "not run on wide inputs" if fixed is None else _compare(old["wide"], fixed, stabilizing=True)
            else:
                why = _compare(old, new)
            if why is not None:
                run = "wide inputs" if wide else f"seed {seed}"
                return f"values of `{function}` change on generated inputs (signature {number}, {run}): {why}"
            compared += isinstance(old, list)
    if not compared:  # the same error every time proves nothing about the values
        return f"`{function}` raised on every generated input ({_said(before[0][0])}), so no value was compared"
    return None


def _compare(old: Any, new: Any, stabilizing: bool = False) -> str | None:
    if isinstance(old, dict) or isinstance(new, dict):
        if isinstance(old, dict) and "skipped" in old:
            return f"it could not be run ({old['skipped']})"
        if isinstance(old, dict) and isinstance(new, dict) and _kind(old["error"]) == _kind(new["error"]):
            return None  # the same error before and after
        return f"{_said(old)} before the fix, {_said(new)} after"
    if len(old) != len(new):
        return f"{len(old)} outputs before the fix, {len(new)} after"
    for index, (a, b) in enumerate(zip(old, new)):
        if (a["shape"], a["kind"]) != (b["shape"], b["kind"]):
            return f"output {index} was {a['dtype']}{a['shape']}, is {b['dtype']}{b['shape']}"
        why = _values_differ(a, b, stabilizing)
        if why is not None:
            return f"output {index} ({a['dtype']}{a['shape']}): {why}"
    return None


def _values_differ(a: dict[str, Any], b: dict[str, Any], stabilizing: bool = False) -> str | None:
    import base64

    import numpy as np  # the parent needs NumPy only here, when fixes are verified

    x = np.frombuffer(base64.b64decode(a["data"]), dtype=a["kind"])
    y = np.frombuffer(base64.b64decode(b["data"]), dtype=b["kind"])
    if a["kind"] in ("bool", "int64"):
        unequal = int(np.count_nonzero(x != y))
        return f"{unequal} of {x.size} elements differ" if unequal else None
    wide_scale = 0.0
    if stabilizing:  # only where the original is finite: the rest is what the fix repairs
        finite = np.isfinite(x)
        if not np.all(np.isfinite(y[finite])):
            return "infinity or NaN where the original was finite"
        repaired = y[np.isfinite(y)]
        wide_scale = float(np.max(np.abs(repaired))) if repaired.size else 0.0  # the output's true size
        x, y = x[finite], y[finite]
    if not np.array_equal(np.isnan(x), np.isnan(y)):
        return "NaN in other places"
    if not np.array_equal(np.where(np.isinf(x), x, 0), np.where(np.isinf(y), y, 0)):
        return "infinities in other places"
    finite = np.isfinite(x)
    x, y = x[finite], y[finite]
    # Relative to each element and to the output's largest one: reordered sums round differently.
    rtol = TOLERANCE.get(a["dtype"], 1e-4)
    scale = max(float(np.max(np.abs(x))) if x.size else 0.0, wide_scale)
    gap = np.abs(x - y)
    if np.any(gap > rtol * (np.abs(x) + scale)):
        return f"largest difference {float(np.max(gap)):.3g} (tolerance {rtol:g}, relative)"
    return None


def _kind(error: str) -> str:
    return error.partition(":")[0]


def _said(run: Any) -> str:
    if isinstance(run, dict):
        return f"raised {_kind(run['error'])}" if "error" in run else "not run"
    return f"returned {len(run)} output{'s' * (len(run) != 1)}"
