"""Applies safe fixes (and unsafe ones with --unsafe-fixes) only after proving them: the fixed
source is re-imported in a fresh worker, the same targets are traced with the same abstract
arguments, their output shapes and dtypes must be unchanged, the finding must be gone, and the
function each fix is in must return the same values as before on generated inputs (values.py).
Writes are atomic, and never over a file the user changed meanwhile."""
from __future__ import annotations

import difflib
import os
from concurrent.futures import Future, ThreadPoolExecutor
from dataclasses import dataclass, replace
from typing import Any

from jaxlint import scan
from jaxlint.config import Config
from jaxlint.engine import suppressions, values
from jaxlint.engine.jobs import make_job, run_job
from jaxlint.engine.pool import FreshWorkers, WorkerPool
from jaxlint.engine.results import OVERLAPS, CheckResult, FileAnalysis
from jaxlint.engine.settle import settle
from jaxlint.engine.targets import GUESSED_KINDS, file_targets, recorded_keys
from jaxlint.model import Cost, Edit, Finding, Result, Settings, Span, Target, one_per_place
from jaxlint.rules import rule_infos
from jaxlint.text import apply_edits, offset_of, relative, shift_position, write_atomic


def fix_files(result: CheckResult, fresh: FreshWorkers, codes: list[str], write: bool,
              unsafe_fixes: bool = False) -> None:
    """Verify and apply (``write``) or diff the fixes: safe ones, and unsafe ones with
    ``unsafe_fixes``; display-only fixes never. Unsafe fixes are verified like safe ones, each
    import in a fresh worker (``fresh`` may hold some started ahead)."""
    applicable = ("safe", "unsafe") if unsafe_fixes else ("safe",)
    settings = result.config.settings() if result.config is not None else Settings()
    # The re-trace takes its targets where check took them: recorded and inferred ones included.
    config = result.config if result.config is not None else Config(root=os.getcwd())
    recorded = recorded_keys(config)
    for analysis in result.files:
        candidates = [f for f in analysis.findings if f.fix is not None and f.fix.applicability in applicable
                      and not suppressions.is_comment_fix(f)]
        accepted, rejected, new_text, new_result = [], [], analysis.source.text, None
        if candidates:
            accepted, rejected, new_text, new_result = _verified_subset(analysis, candidates, codes, fresh,
                                                                        settings, config, recorded)
        for finding in rejected:
            # Edits that overlap an accepted fix's are left for the next run, as ruff does.
            overlapping = (finding.fix_rejected or "").startswith(OVERLAPS)
            (result.fix_deferred if overlapping else result.fix_rejected).append(finding)
        if accepted:
            accepted = _attach_compiled_costs(analysis, new_result, accepted)
        # JX800 fixes edit only comments: applied last, on the verified text, without re-tracing.
        new_text, findings, comment_fixed = _after_fixes(
            analysis, codes, config, recorded, result.ignore_noqa, new_text, new_result if accepted else None)
        if accepted:
            edits = [e for f in accepted for e in f.fix.edits]
            # One per place, as settle keeps them: a carried finding seen with real arguments
            # replaces the fixed file's own seen only with inferred ones.
            findings = one_per_place(findings + _carried(analysis, edits))
            _keep_rejections(analysis.source.text, edits, rejected, findings)
        if not accepted and not comment_fixed:
            continue
        old_text = analysis.source.text
        if write:
            try:
                write_atomic(analysis.source, new_text)
            except (OSError, UnicodeError) as error:  # this file keeps its findings; the others are fixed
                result.not_written.append((analysis.source.path, _why_not_written(error)))
                continue
            analysis.source.text = new_text
            analysis.findings = findings
            analysis.result = new_result if accepted else analysis.result
            result.fixed.extend(accepted + comment_fixed)
        else:
            result.fixed_texts[analysis.source.path] = new_text
            name = relative(analysis.source.path)
            result.diffs.append("".join(difflib.unified_diff(
                old_text.splitlines(keepends=True), new_text.splitlines(keepends=True),
                fromfile=f"a/{name.lstrip('/')}", tofile=f"b/{name.lstrip('/')}")))
            result.fixed.extend(accepted + comment_fixed)


def _after_fixes(analysis: FileAnalysis, codes: list[str], config: Config, recorded: frozenset[str],
                 ignore_noqa: bool, text: str, new_result: Result | None) -> tuple[str, list[Finding], list[Finding]]:
    """A file's last step, once its other fixes are verified (``text`` and the fresh analysis
    ``new_result``; None when there were none): the findings of ``text`` settled as check.py
    settles them (so JX800 sees the fixed code), then the JX800 fixes applied on top. They edit
    only comments, so they are not re-traced. Returns (text, findings, JX800 fixed)."""
    findings = analysis.findings
    if new_result is not None:
        path = analysis.source.path
        ran = None if ignore_noqa else suppressions.analyzed(_targets(path, text, config, recorded), new_result)
        findings = settle(path, text, new_result.findings, codes, config, ran, ignore_noqa)
    if ignore_noqa:
        return text, findings, []
    return suppressions.apply_comment_fixes(text, findings)


def _keep_rejections(source: str, edits: list[Edit], rejected: list[Finding], findings: list[Finding]) -> None:
    """The fixed file's findings are new objects: the ones whose fix was rejected say why again."""
    for finding in rejected:
        line, col = shift_position(source, edits, finding.span.start_line, finding.span.start_col)
        for index, found in enumerate(findings):
            if found.place == (finding.path, line, col, finding.code):
                findings[index] = replace(found, fix_rejected=finding.fix_rejected)


def _why_not_written(error: Exception) -> str:
    if isinstance(error, UnicodeEncodeError):
        return f"the fixed text holds a character its encoding ({error.encoding}) cannot hold"
    if isinstance(error, OSError) and error.strerror:
        return error.strerror
    return str(error)


def _carried(analysis: FileAnalysis, edits: list[Edit]) -> list[Finding]:
    """The findings other files' traces made in this file (still reported: not suppressed), moved
    to where the fixes put their code; one inside an edited span keeps the edit's place and loses
    its (display-only) fix, which was written for the code before."""
    source = analysis.source.text
    carried = []
    for finding in analysis.routed:
        if not any(finding is kept for kept in analysis.findings):
            continue
        span = finding.span
        start = offset_of(source, span.start_line, span.start_col)
        end = offset_of(source, span.end_line, span.end_col)
        edited = [e for e in edits if offset_of(source, e.span.start_line, e.span.start_col) < max(end, start + 1)
                  and offset_of(source, e.span.end_line, e.span.end_col) > start]
        if edited:
            line, col = shift_position(source, edits, edited[0].span.start_line, edited[0].span.start_col)
            moved = replace(finding, span=Span(line, col, line, col), fix=None)
        else:
            moved = replace(finding, span=_shifted(source, edits, span), fix=finding.fix and replace(
                finding.fix, edits=tuple(replace(e, span=_shifted(source, edits, e.span)) for e in finding.fix.edits)))
        carried.append(moved)
    return carried


def _shifted(source: str, edits: list[Edit], span: Span) -> Span:
    return Span(*shift_position(source, edits, span.start_line, span.start_col),
                *shift_position(source, edits, span.end_line, span.end_col))


def _attach_compiled_costs(analysis: FileAnalysis, after: Result | None, accepted: list[Finding]) -> list[Finding]:
    """``--cost compiled``: the accepted findings, each of a jitted function with what XLA's cost
    analysis says its fix saves, per call (first signature); the file's findings hold the same.

    Only for jitted functions: an eager function's cost is not what jit compiles (the shapes
    estimate stays). All fixes of a file are verified together, so a function with several fixes
    gets their joint saving; XLA counts a loop body once, whatever its trip count.
    """
    before = analysis.result
    if before is None or after is None:
        return accepted
    jitted = {t.qualname for t in analysis.targets if t.kind in ("jit-decorated", "jit-bound")}
    attached = []
    for finding in accepted:
        cost = _compiled_cost(finding, before, after, accepted) if finding.target in jitted else None
        if cost is not None:
            costed = replace(finding, cost=cost)
            analysis.replace_finding(finding, costed)
            finding = costed
        attached.append(finding)
    return attached


def _compiled_cost(finding: Finding, before: Result, after: Result, accepted: list[Finding]) -> Cost | None:
    """What XLA's figures of the finding's function before and after the fixes say the fix saves;
    None when either was not compiled."""
    old = (before.compiled.get(finding.target) or [None])[0]
    new = (after.compiled.get(finding.target) or [None])[0]
    if not old or not new:
        return None
    delta = lambda key: None if old.get(key) is None or new.get(key) is None else old[key] - new[key]  # noqa: E731
    memory = [delta(k) for k in ("temp_bytes", "output_bytes")]
    saved_memory = None if None in memory else sum(memory)
    shared = sum(1 for f in accepted if f.target == finding.target) - 1
    devices = old.get("devices") or 1  # a partitioned program's figures are each device's
    return Cost(
        basis="compiled", flops=delta("flops"), bytes=delta("bytes"),
        note=(f"compiled{' for ' + old['target'] if old.get('target') else ''} before and after the fix: "
              f"{_number(delta('flops'))} FLOPs, "
              f"{_number(delta('bytes'))} bytes accessed, {_number(saved_memory)} bytes of "
              "temporaries and outputs saved per call"
              + (f", per device (on each of the {devices} devices of the sharded program)" if devices > 1 else "")
              + (f" (together with {shared} other fix{'es' if shared != 1 else ''} in "
                 f"{finding.target})" if shared else "")))


def _number(value: Any) -> str:
    return "unknown" if value is None else f"{value:g}"


def _verified_subset(analysis: FileAnalysis, candidates: list[Finding], codes: list[str], fresh: FreshWorkers,
                     settings: Settings, config: Config,
                     recorded: frozenset[str]) -> tuple[list[Finding], list[Finding], str, Result | None]:
    """The largest prefix-greedy set of fixes that verifies, the others (each saying why, as the
    file's findings now do), the fixed text and its analysis."""
    timeout = fresh.timeout
    functions = {id(f): values.function_of(f, analysis) for f in candidates}
    ran = sorted({name for name in functions.values() if name is not None})
    wide = sorted({functions[id(f)] for f in candidates if f.code in _stabilizing_codes()} - {None})
    devices = analysis.job.devices if analysis.job is not None else None
    with fresh.take(devices) as first_trial:
        original_job = None
        if ran:  # the original's values, once: imported again from the text analyzed, in a fresh worker
            original_job = make_job(analysis.source, analysis.targets, codes, settings,
                                    override=analysis.source.text, run_values=ran, wide_values=wide)
        with _OriginalValues(fresh, devices, original_job, codes) as before:
            checks = _Checks(functions, ran, wide, before, config, recorded)
            # The fixed text's first trial runs while the original's values are computed.
            outcome = _verify(analysis, candidates, codes, timeout, settings, checks, first_trial)
            before.wait()
    if outcome[0] is None:
        return candidates, [], outcome[1], outcome[2]
    accepted: list[Finding] = []
    rejected: list[Finding] = []
    text, new_result = analysis.source.text, analysis.result
    for finding in candidates:
        reason, trial_text, trial_result = _verify(analysis, accepted + [finding], codes, timeout, settings, checks)
        if reason is None:
            accepted.append(finding)
            text, new_result = trial_text, trial_result
        else:
            rejected.append(replace(finding, fix_rejected=reason))
            analysis.replace_finding(finding, rejected[-1])
    return accepted, rejected, text, new_result


def _call_fixing_codes() -> set[str]:
    """Rules whose fixes change what a call passes to the traced function (Rule.fixes_calls)."""
    return {rule.code for rule in rule_infos() if rule.fixes_calls}


def _stabilizing_codes() -> set[str]:
    """Rules whose fixes replace an expression that overflows by a stable one (Rule.stabilizing_fix)."""
    return {rule.code for rule in rule_infos() if rule.stabilizing_fix}


class _OriginalValues:
    """The original text's values (``job``: its traced functions run on seeded inputs), computed in
    a fresh worker of their own on a thread, while the fixed text's first trial runs in another:
    the two imports and runs overlap. ``get`` waits for them; no job: no values."""

    def __init__(self, fresh: FreshWorkers, devices: int | None, job: Any, codes: list[str]) -> None:
        self.pool = fresh.take(devices) if job is not None else None
        self.future: Future | None = None
        if self.pool is not None:
            self.executor = ThreadPoolExecutor(max_workers=1, thread_name_prefix="jaxlint-original-values")
            self.future = self.executor.submit(lambda: run_job(self.pool, job, codes).values)

    def get(self, function: str) -> Any:
        return None if self.future is None else self.future.result().get(function)

    def wait(self) -> None:
        """Its values, or the error computing them raised (as when it ran first)."""
        if self.future is not None:
            self.future.result()

    def __enter__(self) -> _OriginalValues:
        return self

    def __exit__(self, kind: Any, *exc: Any) -> None:
        if self.pool is None:
            return
        if kind is not None:  # a failure or an interrupt here: the original's worker is not waited for
            self.pool.kill()
        self.executor.shutdown(wait=True)
        self.pool.close()


@dataclass
class _Checks:
    """What verifying a file's fixes compares values with: each fix's traced function (None: it
    has none, an unsafe fix whose values cannot be compared), the original's values, and what
    the fixed file's targets are found with."""

    functions: dict[int, str | None]  # id(finding) -> qualname
    ran: list[str]
    wide: list[str]  # of ``ran``: those a stabilizing fix is in, also run on wide inputs
    before: _OriginalValues
    config: Config  # with ``recorded``: where check's targets came from (engine/targets.py)
    recorded: frozenset[str]


def _verify(analysis: FileAnalysis, fixes: list[Finding], codes: list[str], timeout: float,
            settings: Settings, checks: _Checks,
            fresh: WorkerPool | None = None) -> tuple[str | None, str, Result | None]:
    """(None or why the fixes are rejected, fixed text, the fixed file's analysis). ``fresh``: a
    pool whose worker has run nothing yet (started early); else one is started here."""
    source = analysis.source.text
    edits: list[Edit] = [edit for finding in fixes for edit in finding.fix.edits]
    try:
        text = apply_edits(source, edits)
    except ValueError as error:
        return f"{OVERLAPS}: run --fix again to apply it ({error})", source, None
    try:
        targets = _targets(analysis.source.path, text, checks.config, checks.recorded)
    except scan.ScanSyntaxError as error:
        return f"the fixed source does not parse: {error.message}", text, None
    if analysis.job is not None:  # a guess the test run made needless (from_store.py) is not traced after either
        checked = {target.qualname for target in analysis.job.targets}
        targets = [t for t in targets if t.kind not in GUESSED_KINDS or t.qualname in checked]
    # A file without targets (only source rules found something) is imported here for the first time.
    job = make_job(analysis.source, targets, codes, settings, override=text,
                   compile_costs=analysis.job is not None and analysis.job.compile_costs, run_values=checks.ran,
                   wide_values=checks.wide)
    if fresh is None:
        with WorkerPool(timeout) as pool:  # a fresh worker: no state left from the first import
            new_result = run_job(pool, job, codes)
    else:
        new_result = run_job(fresh, job, codes)
    # A suppressed JX9xx was there before the fix too.
    new_findings = suppressions.without_suppressed(analysis.source.path, text, new_result.findings)
    failures = [f for f in new_findings if f.code.startswith("JX9")]
    if failures:
        return f"the fixed source fails to analyze: {failures[0].message}", text, new_result
    for finding in fixes:
        before = analysis.result.outputs.get(finding.target) if analysis.result is not None else None
        after = new_result.outputs.get(finding.target)
        if before != after:
            return _outputs_changed(finding.target, analysis.result, new_result), text, new_result
        line, col = shift_position(source, edits, finding.span.start_line, finding.span.start_col)
        if any(f.code == finding.code and (f.span.start_line, f.span.start_col) == (line, col)
               for f in new_findings):
            return "the finding is still reported after the fix", text, new_result
        function = checks.functions.get(id(finding))
        if function is not None:
            changed = values.difference(function, checks.before.get(function), new_result.values.get(function),
                                        stabilizing=finding.code in _stabilizing_codes())
            if changed is not None:
                return changed, text, new_result
            unproven = _outside_and_unchanged(analysis, finding, function, new_result) \
                if finding.code in _call_fixing_codes() else None
            if unproven is not None:
                return unproven, text, new_result
    return None, text, new_result


def _outside_and_unchanged(analysis: FileAnalysis, finding: Finding, function: str, after: Result) -> str | None:
    """A fix outside the function its values are compared on (JX206's cast of a loop's starting
    value, at the call) proves something only if it changes what the function is traced with: the
    same signatures before and after run the same inputs twice. Why not, or None."""
    target = next((t for t in analysis.targets if t.qualname == function), None)
    if target is None or finding.fix is None:
        return None
    lines = range(target.first_line, target.span.end_line + 1)
    if any(e.span.start_line in lines or e.span.end_line in lines for e in finding.fix.edits):
        return None
    before = _traced_with(function, analysis.result)
    if before is None or before != _traced_with(function, after):
        return None
    return (f"the fix is outside `{function}` and leaves the arguments it is traced with as they were "
            f"({'; '.join(before[0])}), so comparing its values proves nothing about the fix")


def _traced_with(function: str, result: Result | None) -> tuple[list[str], list[list[int]]] | None:
    """The signatures ``function`` was traced with, and which inputs of each were weakly typed."""
    traced = next((e for e in result.traced if e.target == function), None) if result is not None else None
    return None if traced is None else (list(traced.signatures), list(traced.weak_inputs))


def _targets(path: str, text: str, config: Config, recorded: frozenset[str]) -> list[Target]:
    """The fixed text's targets, found as check found the original's. Raises scan.ScanSyntaxError."""
    return file_targets(path, text, config, recorded).targets


def _outputs_changed(function: str, before: Result | None, after: Result) -> str:
    """In words, how the output shapes and dtypes of ``function`` differ after the fix: which
    signature and output changed from what to what, or why the fixed function was not traced."""
    old = _outputs_by_signature(function, before)
    new = _outputs_by_signature(function, after)
    if not new:
        skipped = next((s.reason for s in after.skipped if s.target == function), None)
        return (f"the fixed function `{function}` could not be traced with the same arguments: "
                f"{skipped or 'it is no longer a target'}")
    for signature, outputs in old.items():
        if signature not in new:
            return (f"the fixed function `{function}` could not be traced with the same arguments "
                    f"({signature}): it raised where the original traced")
        changed = new[signature]
        if len(outputs) != len(changed):
            return (f"`{function}` returns {len(outputs)} output{'s' * (len(outputs) != 1)} before the fix and "
                    f"{len(changed)} after ({_shown(outputs)} -> {_shown(changed)}, with {signature})")
        for index, (was, now) in enumerate(zip(outputs, changed)):
            if was != now:
                return f"output {index} of `{function}` changes from {was} to {now} (with {signature})"
    if not old:
        return f"`{function}` was not traced before the fix and is after it"
    added = ", ".join(signature for signature in new if signature not in old)
    return f"`{function}` is traced after the fix with signatures it was not traced with before: {added}"


def _outputs_by_signature(function: str, result: Result | None) -> dict[str, list[str]]:
    """Signature text -> the output avals ``function`` was traced to (the worker keeps them in
    the order of Traced.signatures)."""
    if result is None:
        return {}
    traced = next((entry for entry in result.traced if entry.target == function), None)
    outputs = result.outputs.get(function) or []
    if traced is None:
        return {f"signature {number}": avals for number, avals in enumerate(outputs, 1)}
    return dict(zip(traced.signatures, outputs))


def _shown(outputs: list[str]) -> str:
    return "(" + ", ".join(outputs) + ")"
