"""What follows the findings on stderr: the summary line, --fix-only's summary, --show-fixes and
--timings. The findings' formats are the other modules of jaxlint.report."""
from __future__ import annotations

import os
import re
from typing import TextIO

from jaxlint.config.keys import read_toml
from jaxlint.engine.results import CheckResult
from jaxlint.model import Finding
from jaxlint.report.full import write_findings
from jaxlint.report.json_array import finding_json
from jaxlint.scan.functions import is_test_file
from jaxlint.text import relative

# finding_json and write_findings moved to jaxlint.report; importers of report keep working.
__all__ = ["coverage_warning", "finding_json", "summary", "timings_text", "write_findings"]

# Why a target was not traced when its module did not finish importing.
_IMPORT_FAILURES = ("import-failed", "timeout", "crash")


def summary(result: CheckResult, fix_mode: str, unsafe_fixes: bool = False) -> str:
    from jaxlint.report.common import is_fixable

    findings = result.findings
    fixable = sum(1 for f in findings if is_fixable(f, unsafe_fixes))
    hidden = hidden_unsafe(findings, unsafe_fixes)
    checked = len(result.files)
    skipped = len(result.skipped)
    # The denominator is every JAX function (scan/functions.py), not only the targets: a plain
    # function nothing names is code the rules never read.
    traced = f"{result.traced} target{'s' if result.traced != 1 else ''} traced"
    parts = [f"{checked} file{'s' if checked != 1 else ''} checked",
             f"linted {result.linted} of {result.jax_functions} JAX functions{_origins(result)} ({traced}"
             + (f", {skipped} skipped: no abstract arguments or errors)" if skipped else ")")]
    if result.changed_since_test_run:
        parts.append(f"{result.changed_since_test_run} changed since the {_runs(result.runs_changed)} "
                     f"({_untraced_shows(result)})")
    parts.append(f"{len(findings)} finding{'s' if len(findings) != 1 else ''}")
    parts += dropped_findings(result)
    missing = missing_dependencies(result)
    if missing:
        count = sum(missing.values())
        parts.append(f"{count} module{'s' if count != 1 else ''} not imported: "
                     + "; ".join(sorted(missing)[:3]) + ("; ..." if len(missing) > 3 else ""))
    if result.unchecked_findings:
        parts.append(f"{result.unchecked_findings} more in helpers in files not checked (check those files "
                     "to see them)")
    if fix_mode == "fix":
        parts.append(f"{len(result.fixed)} fixed")
        if result.not_written:
            parts.append(_not_written(result))
    elif fix_mode == "diff":
        parts.append(_shown(result, unsafe_fixes))
    if fixable and fix_mode == "none":  # with --diff, each fixable one is shown, rejected or deferred
        parts.append(f"{fixable} fixable with --fix")
    if hidden:
        parts.append(hidden_text(hidden))
    if result.fix_rejected:
        parts.append(_rejected(result) + (" (not shown: why is said above)" if fix_mode == "diff" else ""))
    if result.fix_deferred:
        parts.append(_deferred(result))
    return ", ".join(parts) + "."


def _origins(result: CheckResult) -> str:
    """": 3 traced here, 809 in the test run of 2026-12-02 14:03" when a test run's entries
    (engine/store.py) were used, ": 3 traced here" when they were all found stale; nothing otherwise."""
    if not result.test_runs:
        return ""
    here = result.linted_here
    if not result.runs_used:  # every entry found is stale: "N changed since the ..." names those runs
        return f": {here} traced here"
    # Of the functions whose current entries were used: the runs that wrote those.
    return f": {here} traced here, {result.linted - here} in the {_runs(result.runs_used)}"


def _runs(runs: list[str]) -> str:
    """"test run of DATE", "test run of DATE and the jaxlint run of DATE", or "test run of DATE
    and 2 earlier runs": a count beside it is of functions, never of runs."""
    if len(runs) == 2:
        return f"{runs[0]} and the {runs[1]}"
    return runs[0] + (f" and {len(runs) - 1} earlier runs" if len(runs) > 2 else "")


def dropped_findings(result: CheckResult) -> list[str]:
    """"dropped 1 finding of the jaxlint run of DATE in pkg/loop.py (pkg/model.py changed since)",
    one per run whose stale entries held findings: what a run found and check no longer reports
    is never lost in silence (--coverage-report lists every stale entry, with or without)."""
    by_run: dict[str, list[tuple[str, int, list[str]]]] = {}
    for stored in result.dropped:
        if stored.dropped:
            by_run.setdefault(f"{stored.origin} of {stored.when}", []).append(
                (relative(stored.path), len(stored.dropped), [relative(path) for path in stored.changed]))
    parts = []
    for run, modules in by_run.items():
        count = sum(found for _, found, _ in modules)
        shown = "; ".join(f"{path} ({', '.join(changed[:3])}{', ...' if len(changed) > 3 else ''} changed since)"
                          for path, _, changed in modules[:3])
        more = f"; and {len(modules) - 3} more modules" if len(modules) > 3 else ""
        parts.append(f"dropped {count} finding{'s' if count != 1 else ''} of the {run} in {shown}{more}")
    return parts


def _untraced_shows(result: CheckResult) -> str:
    """What --show-untraced says of the changed functions (report/coverage.py): the tests that
    reached each only where the store names some (a `jaxlint run` names none)."""
    named = all(fa.stale_entry(f).linted_entry(f.first_line, f.qualname).tests  # type: ignore[union-attr]
                for fa in result.files for f in fa.changed_since_test_run)
    return ("--show-untraced lists them, what changed and the tests that reached them" if named
            else "--show-untraced lists them and what changed")


def missing_dependencies(result: CheckResult) -> dict[str, int]:
    """Why modules were not imported for lack of a package outside the project -> how many."""
    reasons: dict[str, int] = {}
    for analysis in result.files:
        reason = analysis.result.missing_dependency if analysis.result is not None else None
        if reason:
            reasons[reason] = reasons.get(reason, 0) + 1
    return reasons


def coverage_warning(result: CheckResult) -> str | None:
    """A run that linted less than half of the JAX functions it found says so, with the one step
    that reaches the rest: the tool never looks green when it checked nothing. None otherwise, and
    None when a test run's store was read and is mostly current: the summary says what that run
    linted, and running the same tests again would reach nothing more."""
    total, linted = result.jax_functions, result.linted
    if total == 0 or 2 * linted >= total:
        return None
    if result.test_runs and not _mostly_changed(result):
        return None
    if linted == 0:
        head = f"checked nothing: none of the {total} JAX function{'s' if total != 1 else ''} found was linted"
    else:
        head = f"linted only {linted} of {total} JAX functions"
    return (f"jaxlint: warning: {head}; {next_step(result)} "
            "(`--show-untraced` lists each function not linted, why, and the hint that would trace it)")


def _mostly_changed(result: CheckResult) -> bool:
    """Most functions not linted here were linted by a test run (or program) and changed since."""
    changed = result.changed_since_test_run
    return bool(changed) and 2 * changed >= result.jax_functions - result.linted


def next_step(result: CheckResult) -> str:
    """The one step that reaches most of the JAX functions the run did not lint: running the
    tests (or the program) again when what they linted changed since, fixing the imports when
    failed imports (or missing packages) stopped most, else what runs the code with real arguments
    (the tests under ``pytest --jaxlint``, a program under ``jaxlint run``), else hints for
    targets the scan found without arguments, else guessed arguments."""
    if result.unusable_test_run:
        return (f"its results are not used: {result.unusable_test_run}; check where the tests ran, "
                "or run them again with `pytest --jaxlint` where check runs")
    if _mostly_changed(result):
        from jaxlint.engine.store import RUN_ORIGIN

        if all(run.startswith(RUN_ORIGIN) for run in result.runs_changed):
            return f"run the program again with `{RUN_ORIGIN}`: what it linted changed since"
        return "run the tests again with `pytest --jaxlint`: what they linted changed since"
    failed = described = plain = lacking = 0
    for analysis in result.files:
        if analysis.result is not None and analysis.result.missing_dependency:
            lacking += len(analysis.functions)
            continue
        reached = {f.first_line for f in analysis.linted}
        named = {t.first_line for t in analysis.targets} | {t.name for t in analysis.targets if t.kind == "jit-bound"}
        plain += sum(1 for f in analysis.functions
                     if f.first_line not in reached and f.first_line not in named and f.qualname not in named)
        for skip in analysis.result.skipped if analysis.result is not None else []:
            if skip.kind in _IMPORT_FAILURES:
                failed += 1
            else:
                described += 1
    if lacking > max(failed, described, plain):
        names = sorted({reason.rpartition(": ")[2] for reason in missing_dependencies(result)
                        if reason.startswith("optional dependency missing: ")})
        return (f"install the packages the modules import where jaxlint runs ({', '.join(names[:3]) or 'see above'}"
                f"{', ...' if len(names) > 3 else ''}): {lacking} of the JAX functions are in modules that need them")
    if failed >= max(described, plain):
        return "fix what stops the modules importing first (the JX901, JX902 and JX903 findings)"
    config = result.config
    root = config.root if config is not None else os.getcwd()
    if has_tests(result, root):
        return "run `pytest --jaxlint`: it lints the JAX functions the tests run, with the tests' arguments"
    script = entry_script(result, root)
    if script is not None:
        return (f"run the program under `jaxlint run -- {script}`: it lints the JAX functions the run calls, "
                "with its arguments")
    if described >= plain:
        return "give the targets arguments: a hint comment above each or an examples file (docs/arguments.md)"
    if config is None or not config.infer_arguments:
        return "`--infer-arguments` traces the functions nothing names with guessed arguments"
    return "give them arguments: a hint comment above each or an examples file (docs/arguments.md)"


# Where pytest projects keep their tests, under the project root.
_TEST_FOLDERS = ("tests", "test", "testing")
_MAIN_BLOCK = re.compile(r"""^if\s+(__name__\s*==\s*['"]__main__['"]|['"]__main__['"]\s*==\s*__name__)\s*:""",
                         re.MULTILINE)


def has_tests(result: CheckResult, root: str) -> bool:
    """A checked file is a test file, or a test folder of the project root holds one."""
    if any(is_test_file(analysis.source.path) for analysis in result.files):
        return True
    for name in _TEST_FOLDERS:
        for folder, folders, files in os.walk(os.path.join(root, name)):
            folders[:] = [f for f in folders if not f.startswith(".") and f != "__pycache__"]
            if any(is_test_file(file) for file in files):
                return True
    return False


def entry_script(result: CheckResult, root: str) -> str | None:
    """How to start the project's program: ``python FILE`` for a checked file with a ``__main__``
    block, else a console entry point of pyproject.toml's [project.scripts]; None without either."""
    for analysis in result.files:
        if _MAIN_BLOCK.search(analysis.source.text):
            return f"python {relative(analysis.source.path)}"
    try:
        scripts = read_toml(os.path.join(root, "pyproject.toml")).get("project", {}).get("scripts", {})
    except Exception:  # no pyproject.toml, or one that does not parse: no console entry known
        return None
    return next(iter(sorted(scripts)), None) if isinstance(scripts, dict) else None


def _shown(result: CheckResult, unsafe_fixes: bool) -> str:
    """--diff shows the fixes that verified: what --fix (with the same flags) would write."""
    count = len(result.fixed)
    flags = "--fix --unsafe-fixes" if unsafe_fixes else "--fix"
    return (f"{count} fix{'es' if count != 1 else ''} shown"
            + (f" (verified: {flags} would apply {'it' if count == 1 else 'them'})" if count else ""))


def _rejected(result: CheckResult) -> str:
    count = len(result.fix_rejected)
    return f"{count} fix{'es' if count != 1 else ''} rejected by verification"


def write_rejections(result: CheckResult, out: TextIO) -> None:
    """--diff prints no findings: each fix it leaves out for failing verification, and why."""
    for finding in sorted(result.fix_rejected, key=lambda f: (f.path, f.span.start_line, f.span.start_col, f.code)):
        out.write(f"jaxlint: {relative(finding.path)}:{finding.span.start_line}:{finding.span.start_col + 1}: "
                  f"{finding.code} fix not shown: {finding.fix_rejected}\n")


def _deferred(result: CheckResult) -> str:
    count = len(result.fix_deferred)
    return f"{count} fix{'es' if count != 1 else ''} left for the next run (overlapping another)"


def _not_written(result: CheckResult) -> str:
    count = len(result.not_written)
    return f"{count} file{'s' if count != 1 else ''} left unfixed (said above)"


def timings_text(result: CheckResult) -> str:
    return "timings: " + ", ".join(f"{stage} {seconds * 1000:.1f} ms"
                                    for stage, seconds in result.timings.items())


def hidden_unsafe(findings: list[Finding], unsafe_fixes: bool) -> int:
    """Unsafe fixes that --unsafe-fixes would enable."""
    if unsafe_fixes:
        return 0
    return sum(1 for f in findings if f.fix is not None and f.fix.applicability == "unsafe")


def hidden_text(count: int) -> str:
    return f"{count} hidden fix{'es' if count != 1 else ''} can be enabled with --unsafe-fixes"


def fix_only_summary(result: CheckResult, unsafe_fixes: bool) -> str:
    """--fix-only says what was fixed, not what remains."""
    checked = len(result.files)
    parts = [f"{checked} file{'s' if checked != 1 else ''} checked", f"{len(result.fixed)} fixed"]
    if result.not_written:
        parts.append(_not_written(result))
    if result.fix_rejected:
        parts.append(_rejected(result))
    if result.fix_deferred:
        parts.append(_deferred(result))
    hidden = hidden_unsafe(result.findings, unsafe_fixes)
    if hidden:
        parts.append(hidden_text(hidden))
    return ", ".join(parts) + "."


def write_show_fixes(result: CheckResult, mode: str, unsafe_fixes: bool, out: TextIO) -> None:
    """--show-fixes: the fixes applied (mode "fix"), shown as a diff ("diff") or available."""
    if mode in ("fix", "diff"):
        listed = result.fixed
        verb = "Fixed" if mode == "fix" else "Would fix"
        out.write(f"{verb} {len(listed)} finding{'s' if len(listed) != 1 else ''}"
                  f"{':' if listed else '.'}\n")
    else:
        listed = [f for f in result.findings if f.fix is not None]
        out.write(f"{len(listed) or 'No'} fix{'es' if len(listed) != 1 else ''} available"
                  f"{':' if listed else '.'}\n")
    by_path: dict[str, list[Finding]] = {}
    for finding in sorted(listed, key=lambda f: (f.path, f.span.start_line, f.span.start_col, f.code)):
        by_path.setdefault(finding.path, []).append(finding)
    for path, findings in by_path.items():
        out.write(f"- {relative(path)}:\n")
        for finding in findings:
            status = "" if mode in ("fix", "diff") else f" [{_status(finding, unsafe_fixes)}]"
            out.write(f"    {finding.span.start_line}:{finding.span.start_col + 1} {finding.code} "
                      f"({finding.name}){status} {finding.fix.message}\n")


def _status(finding: Finding, unsafe_fixes: bool) -> str:
    applicability = finding.fix.applicability
    if applicability == "safe":
        return "safe"
    if applicability == "unsafe":
        return "unsafe" if unsafe_fixes else "unsafe: needs --unsafe-fixes"
    return "display-only: never applied"
