"""Coverage: which targets were traced, which were not, and the hint comment that would trace each.

Built in the jaxlint process from a CheckResult (the workers' ``traced``/``skipped`` entries plus
the scanned Targets, which give lines and parameter names). Never imports JAX.
"""
from __future__ import annotations

import ast
import json
import os
from dataclasses import asdict, dataclass, field
from typing import TYPE_CHECKING, Any, Callable

from jaxlint.engine.store import RUN_ORIGIN
from jaxlint.engine.targets import GUESSED_KINDS
from jaxlint.model import Span, Target
from jaxlint.report.suggestion import suggestion
from jaxlint.scan.functions import JaxFunction, is_test_file
from jaxlint.scan.index import parse

if TYPE_CHECKING:
    from jaxlint.engine.results import CheckResult

@dataclass(frozen=True)
class Traced:
    path: str
    target: str
    line: int
    source: str  # where the arguments came from: "hint", "import-call", ...
    signatures: list[str]


@dataclass(frozen=True)
class Untraced:
    path: str
    target: str
    line: int
    # not-a-target, not-imported, no-operations, or why its target was skipped: no-arguments,
    # invalid-hint, trace-error, not-traceable, not-found, import-failed, dependency-missing,
    # timeout, crash
    kind: str
    reason: str
    hint: str | None  # the comment to put above the function; None when no hint can help
    note: str | None  # why there is no hint, or what to fill in


@dataclass(frozen=True)
class Function:
    """A JAX function (scan/functions.py) and whether the rules read its operations."""

    path: str
    function: str
    line: int
    linted: bool
    linted_in: str | None = None  # "here", or the test run's "test run of 2026-12-02 14:03"


@dataclass(frozen=True)
class LeftOut:
    """A finding left out: its bad point lies among the fields of an instance jaxlint built, alone
    (analysis/instance_points.py)."""

    path: str
    line: int
    target: str
    code: str
    message: str


@dataclass
class Coverage:
    traced: list[Traced]
    untraced: list[Untraced]  # one per JAX function that was not linted
    functions: list[Function] = field(default_factory=list)
    # Targets not traced whose function is not defined in their file (g = jax.jit(imported_f)).
    outside: list[Untraced] = field(default_factory=list)
    targets: int = 0
    # A run's stale entries, whose findings were not used: {"run", "path", "changed", "findings"}.
    dropped: list[dict[str, Any]] = field(default_factory=list)
    left_out: list[LeftOut] = field(default_factory=list)

    def to_json(self) -> dict[str, Any]:
        return {"traced": [asdict(t) for t in self.traced], "left_out": [asdict(f) for f in self.left_out],
                "untraced": [asdict(u) for u in self.untraced],
                "untraced_targets_defined_elsewhere": [asdict(u) for u in self.outside],
                "functions": [asdict(f) for f in self.functions],
                "summary": {"targets": self.targets, "traced": len(self.traced),
                            "jax_functions": len(self.functions),
                            "linted": sum(1 for f in self.functions if f.linted),
                            "dropped": self.dropped}}


def coverage(result: CheckResult) -> Coverage:
    """One entry per JAX function of every file (the summary's denominator), sorted by path, line
    and name: linted or not, and for one that was not, why: the skip of the target that stands for
    it (its def, or the def ``g = jax.jit(f)`` wraps), else kind "not-a-target" (or "not-imported"
    under ``if __name__ == "__main__":``, "no-operations" when traced without making any)."""
    tally = _Tally()
    for analysis in result.files:
        _cover_file(analysis, result, tally)
    key = lambda item: (item.path, item.line, item.target)  # noqa: E731
    dropped = [{"run": f"{s.origin} of {s.when}", "path": relative_to([s.path], result)[0],
                "changed": relative_to(s.changed, result),
                "findings": len(s.dropped)} for s in result.dropped]
    return Coverage(sorted(tally.traced, key=key), sorted(tally.untraced, key=key),
                    sorted(tally.functions, key=lambda f: (f.path, f.line, f.function)),
                    sorted(tally.outside, key=key), tally.targets, dropped, _left_out(result))


def _left_out(result: CheckResult) -> list[LeftOut]:
    """The findings the workers left out, once per place, but for a place another trace reported."""
    reported = {f.place for f in result.findings}
    found: dict[tuple, LeftOut] = {}
    for analysis in result.files:
        for finding in analysis.result.left_out if analysis.result is not None else []:
            if finding.place not in reported:
                found.setdefault(finding.place, LeftOut(finding.path, finding.span.start_line, finding.target or "",
                                                        finding.code, finding.message))
    return [found[place] for place in sorted(found)]


@dataclass
class _Tally:
    """What ``coverage`` gathers over the files, unsorted."""

    traced: list[Traced] = field(default_factory=list)
    untraced: list[Untraced] = field(default_factory=list)
    outside: list[Untraced] = field(default_factory=list)  # skipped targets whose def is in no file checked
    functions: list[Function] = field(default_factory=list)
    targets: int = 0


def _cover_file(analysis: Any, result: CheckResult, tally: _Tally) -> None:
    """One file's entries: what the test run traced, the skipped targets, the traced ones, then
    every JAX function with why it was not linted, if it was not."""
    path, text = analysis.source.path, analysis.source.text
    linted = {f.first_line for f in analysis.linted}
    here = {f.first_line for f in analysis.linted_here}
    shown = set(here)  # a function two current entries linted is listed once, as the first's
    for stored in analysis.stored:
        if stored.fresh:
            tally.traced += [Traced(path, entry.qualname, entry.first_line, stored.origin, list(entry.signatures))
                             for entry in stored.functions
                             if entry.linted and entry.first_line not in shown and entry.signatures]
            shown |= stored.linted_lines
    function_of = _function_of(analysis.functions)
    tally.targets += len(analysis.targets)
    remaining = list(analysis.targets)
    main_block = _main_block_lines(text)
    nested = _nested_of(analysis.functions)
    described = _skipped_targets(analysis, remaining, function_of, linted, main_block, tally, nested)
    ran = _traced_targets(analysis, remaining, function_of, tally, nested)
    # A function's outermost def tried and skipped (as a target itself, or a factory whose closures
    # were skipped) says why the functions nested in it never ran; a nested target's skip does not.
    kinds = {target.qualname: target.kind for target in analysis.targets}
    outer_skips = {skip.target.partition(".<locals>.")[0]: skip
                   for skip in (analysis.result.skipped if analysis.result is not None else [])
                   if "<locals>" not in skip.target or kinds.get(skip.target) == "closure"}
    for function in analysis.functions:
        used = analysis.used_entry(function.first_line)
        origin = None if function.first_line not in linted else "here" if function.first_line in here \
            else f"{used.origin} of {used.when}" if used is not None else None
        tally.functions.append(Function(path, function.qualname, function.line, function.first_line in linted, origin))
        if function.first_line not in linted and function.first_line not in described:
            tally.untraced.append(_why_not_linted(function, analysis, result, ran, main_block, outer_skips,
                                                  nested.skips.get(function.first_line)))


@dataclass
class _Nested:
    """A file's nested JAX functions by (qualname, line of the def), and the skips of those the
    worker built from their code (worker/nested_code.py), by first line: no target stands for them."""

    functions: dict[tuple[str, int], JaxFunction]
    skips: dict[int, Any] = field(default_factory=dict)


def _nested_of(functions: list[JaxFunction]) -> _Nested:
    return _Nested({(f.qualname, f.line): f for f in functions if "<locals>" in f.qualname})


def _skipped_targets(analysis: Any, remaining: list[Target], function_of: Callable[[Target | None], Any],
                     linted: set[int], main_block: set[int], tally: _Tally, nested: _Nested) -> set[int]:
    """An entry per skipped target, once per function; returns the first lines of the functions
    they stand for. A nested function built from its code and not linted is said below (its skip
    kept in ``nested``); a closure target's own skip also says why its build did not lint it."""
    described: set[int] = set()
    skips = analysis.result.skipped if analysis.result is not None else []
    targets = {(target.qualname, target.name_span.start_line) for target in remaining}
    for skip in skips:
        built = nested.functions.get((skip.target, skip.line or 0))
        if built is not None and ((skip.target, skip.line) not in targets or skip.kind == "nested-not-built"):
            nested.skips[built.first_line] = skip
    for skip in skips:
        target = _take(remaining, skip.target, skip.line)
        if target is None and nested.skips.get(getattr(nested.functions.get((skip.target, skip.line or 0)),
                                                       "first_line", None)) is skip:
            continue  # a nested function built from its code: said with the functions not linted
        function = function_of(target)
        if function is None and target is not None and target.kind in GUESSED_KINDS:
            continue  # an outer function tried for its nested JAX functions (engine/targets.py): no JAX function
        if function is None and target is not None and target.kind != "jit-bound" and is_test_file(analysis.source.path):
            continue  # a test that calls a transformation (scan/functions.py): pytest runs it, no JAX function
        if function is not None and (function.first_line in linted or function.first_line in described
                                     or function.line in main_block):
            continue  # linted through another target, said once already, or said below
        hint, note = suggestion(target, skip.kind, skip.reason, analysis.source.text)
        reason = skip.reason
        if function is not None and function.first_line in nested.skips:
            reason += f"; {_built_reason(nested.skips[function.first_line])}"
        entry = Untraced(analysis.source.path, skip.target, skip.line or 0, skip.kind, reason, hint, note)
        if function is None:
            tally.outside.append(entry)
        else:
            described.add(function.first_line)
            tally.untraced.append(entry)
    return described


def _traced_targets(analysis: Any, remaining: list[Target], function_of: Callable[[Target | None], Any],
                    tally: _Tally, nested: _Nested) -> set[int]:
    """An entry per traced target (a nested function built from its code included); returns the
    first lines of the functions they stand for."""
    ran: set[int] = set()
    for traced_entry in analysis.result.traced if analysis.result is not None else []:
        target = _take(remaining, traced_entry.target, None)
        function = function_of(target) if target is not None else \
            next((f for (name, _), f in nested.functions.items() if name == traced_entry.target), None)
        if function is not None:
            ran.add(function.first_line)
        line = target.name_span.start_line if target is not None else function.line if function is not None else 0
        tally.traced.append(Traced(analysis.source.path, traced_entry.target, line, traced_entry.source,
                                   list(traced_entry.signatures or [traced_entry.signature])))
    return ran


def _why_not_linted(function: JaxFunction, analysis: Any, result: CheckResult, ran: set[int],
                    main_block: set[int], outer_skips: dict[str, Any], built: Any = None) -> Untraced:
    """The entry of a JAX function no target's skip describes and nothing linted; ``built``: the
    skip of the nested function built from its code, if it was tried."""
    path, stored = analysis.source.path, analysis.stale_entry(function)
    if stored is not None and function.first_line in {f.first_line for f in analysis.changed_since_test_run}:
        tests = stored.linted_entry(function.first_line, function.qualname).tests  # type: ignore[union-attr]
        return Untraced(path, function.qualname, function.line, "changed-since-test-run",
                        f"linted in the {stored.origin} of {stored.when}; changed since: "
                        + ", ".join(sorted(relative_to(stored.changed, result))), None,
                        "the tests that reached it: " + " ".join(tests) if tests else None)
    if function.line in main_block:
        return Untraced(path, function.qualname, function.line, "not-imported",
                        'defined under `if __name__ == "__main__":`, which an import does not run',
                        None, "move it to the module's top level to lint it")
    if analysis.result is not None and analysis.result.missing_dependency:
        return Untraced(path, function.qualname, function.line, "dependency-missing",
                        analysis.result.missing_dependency, None, suggestion(None, "dependency-missing", "")[1])
    if function.first_line in ran:
        return Untraced(path, function.qualname, function.line, "no-operations",
                        "traced, but none of its own lines made an operation", None, None)
    hint, note = _plain_suggestion(function, analysis.source.text)
    outer, nested, _ = function.qualname.partition(".<locals>.")
    outer_reason = f"its outer function {outer} was tried, not run: {outer_skips[outer].reason}" \
        if nested and outer in outer_skips else None
    if built is not None:  # its own trace's failure says all; why it was not built, with its outer's
        also = outer_reason if built.kind == "nested-not-built" else None
        return Untraced(path, function.qualname, function.line, built.kind,
                        "; ".join(filter(None, [_built_reason(built), also])), hint, note)
    if outer_reason is not None:
        return Untraced(path, function.qualname, function.line, outer_skips[outer].kind, outer_reason, hint, note)
    return Untraced(path, function.qualname, function.line, "not-a-target",
                    "no jit, transform or hint names it, and no traced function ran it", hint, note)


def _built_reason(skip: Any) -> str:
    """Why a nested function built from its code was not linted (worker/nested_code.py)."""
    if skip.reason.startswith("not built from its code"):  # the worker said so itself (its time, an error)
        return skip.reason
    return f"not built from its code: {skip.reason}" if skip.kind == "nested-not-built" \
        else f"built from its code, not traced: {skip.reason}"


def relative_to(paths: list[str], result: CheckResult) -> list[str]:
    """Paths relative to the configuration's root, for the listing."""
    root = result.config.root if result.config is not None else None
    return [os.path.relpath(path, root) if root else path for path in paths]


def _function_of(functions: list[JaxFunction]) -> Callable[[Target | None], JaxFunction | None]:
    """The JAX function a target stands for: its def, or the module-level def a jit-bound name wraps."""
    by_first_line = {f.first_line: f for f in functions}
    module_level = {f.qualname: f for f in functions if "." not in f.qualname}

    def function_of(target: Target | None) -> JaxFunction | None:
        if target is None:
            return None
        if target.kind == "jit-bound":
            return module_level.get(target.name)
        return by_first_line.get(target.first_line)

    return function_of


def _main_block_lines(text: str) -> set[int]:
    """The lines of the module-level ``if __name__ == "__main__":`` blocks."""
    parsed = parse(text)
    if parsed is None:
        return set()
    lines: set[int] = set()
    for statement in parsed.tree.body:
        test = statement.test if isinstance(statement, ast.If) else None
        if (isinstance(test, ast.Compare) and isinstance(test.left, ast.Name) and test.left.id == "__name__"
                and len(test.comparators) == 1 and isinstance(test.comparators[0], ast.Constant)
                and test.comparators[0].value == "__main__"):
            lines.update(range(statement.lineno, (statement.end_lineno or statement.lineno) + 1))
    return lines


def _plain_suggestion(function: Any, text: str) -> tuple[str | None, str | None]:
    """A hint for a JAX function nothing names (a scan.functions.JaxFunction), or why none helps."""
    if "<locals>" in function.qualname:
        return None, ("a nested function is linted through a traced function that calls it, or by "
                      "`pytest --jaxlint` when the tests call it")
    span = Span(function.line, 0, function.line, 0)
    name = function.qualname.rpartition(".")[2]
    target = Target(name, function.qualname, "hinted", span, span, function.first_line, list(function.params))
    hint, note = suggestion(target, "no-arguments", "", text)
    also = "or run the tests with `pytest --jaxlint`"
    return hint, note if note and "pytest --jaxlint" in note else f"{note}; {also}" if note else also


def _take(targets: list[Target], qualname: str, line: int | None) -> Target | None:
    """The first remaining target with that name (and line): two defs may share a qualname."""
    for index, target in enumerate(targets):
        if target.qualname == qualname and line in (None, target.name_span.start_line):
            return targets.pop(index)
    return None


def untraced_text(report: Coverage, relative: Callable[[str], str] = lambda path: path) -> str:
    """The --show-untraced listing: location, name, reason, then the hint (or why there is none);
    its count is the summary's (JAX functions not linted, of all)."""
    lines: list[str] = []
    if report.untraced:
        lines.append(f"untraced functions ({len(report.untraced)} of {len(report.functions)} JAX functions):")
        lines += _entries(report.untraced, relative)
    if report.outside:
        lines.append(f"untraced targets whose function is defined in another file ({len(report.outside)}):")
        lines += _entries(report.outside, relative)
    if report.left_out:
        lines.append(f"findings left out ({len(report.left_out)}): their bad point lies among the fields of an "
                     "instance jaxlint built, alone, which the class may never hold (or among the values it guessed "
                     "for a nested function's outer parameters, alone), or they judge lengths or bytes where the sizes "
                     "are jaxlint's choice (a size parameter, a description, a built instance's):")
        lines += [f"  {relative(f.path)}:{f.line}: {f.target} {f.code} {f.message}" for f in report.left_out]
    return "".join(line + "\n" for line in lines)


def _entries(items: list[Untraced], relative: Callable[[str], str]) -> list[str]:
    lines = []
    for item in items:
        lines.append(f"  {relative(item.path)}:{item.line}: {item.target} [{item.kind}] {item.reason}")
        if item.kind == "changed-since-test-run":  # no hint: running the tests (or program) again lints it
            if item.note:
                lines.append(f"      ({item.note}; `jaxlint check --rerun-tests` or `pytest --jaxlint` runs them)")
            elif item.reason.startswith(f"linted in the {RUN_ORIGIN} "):  # a program's run names no test
                lines.append(f"      (run the program again under `{RUN_ORIGIN}` to lint it)")
            else:
                lines.append("      (`pytest --jaxlint` lints it again)")
            continue
        if item.hint is not None:
            lines.append(f"      {item.hint}")
        if item.note is not None:
            lines.append(f"      ({item.note})" if item.hint is not None else f"      no hint helps: {item.note}")
    return lines


def write_report(report: Coverage, path: str) -> None:
    with open(path, "w", encoding="utf-8") as out:
        json.dump(report.to_json(), out, indent=2)
        out.write("\n")
