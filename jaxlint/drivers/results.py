"""What linting the watched calls gives a driver to report, whatever ran them (``pytest --jaxlint``
in the test process, ``jaxlint run`` in the parent of the program): the linted functions, merged
across processes, the findings settled as ``jaxlint check`` settles them, the coverage report and
the summary line.

Imports neither pytest nor JAX: ``jaxlint run``'s parent reports from here without either.
(engine/results.py is what ``jaxlint check`` produced; this is the in-process drivers'.)
"""
from __future__ import annotations

import os
from dataclasses import asdict, dataclass, field
from typing import Any, Callable, Iterable

from jaxlint.config import Config
from jaxlint.engine.results import CheckResult, FileAnalysis
from jaxlint.engine.settle import settle_watched
from jaxlint.engine.store import MAX_TESTS, StoredFunction
from jaxlint.model import Finding
from jaxlint.text import SourceFile, read_source


@dataclass
class Linted:
    """One function called with arrays: how many of its signatures were linted, and why the
    others were not."""

    path: str
    qualname: str
    line: int
    signatures: int = 0
    errors: list[str] = field(default_factory=list)
    signature_texts: list[str] = field(default_factory=list)  # of those linted, readable
    tests: list[str] = field(default_factory=list)  # node ids of the first tests that called it

    def to_json(self) -> dict[str, Any]:
        return asdict(self)


@dataclass
class Ran:
    """A JAX function (scan/functions.py) that ran, and whether the rules read its operations."""

    path: str
    function: str
    line: int
    linted: bool
    first_line: int = 0  # of the def, decorators included: how check's coverage names it
    tests: list[str] = field(default_factory=list)

    def to_json(self) -> dict[str, Any]:
        return asdict(self)


def merged_ran(ran: Iterable[Ran]) -> list[Ran]:
    """One entry per JAX function, linted if any process (an xdist worker) linted it."""
    merged: dict[tuple[str, int], Ran] = {}
    for entry in ran:
        known = merged.get((entry.path, entry.line))
        if known is None or (entry.linted and not known.linted):
            tests = known.tests + entry.tests if known is not None else entry.tests
            merged[(entry.path, entry.line)] = Ran(entry.path, entry.function, entry.line, entry.linted,
                                                   entry.first_line, list(dict.fromkeys(tests))[:MAX_TESTS])
        else:
            known.tests = list(dict.fromkeys(known.tests + entry.tests))[:MAX_TESTS]
    return list(merged.values())


def merged(functions: Iterable[Linted]) -> list[Linted]:
    """One entry per function (xdist workers report the functions their tests called)."""
    found: dict[tuple[str, int, str], Linted] = {}
    for function in functions:
        key = (function.path, function.line, function.qualname)
        known = found.get(key)
        if known is None:
            found[key] = Linted(function.path, function.qualname, function.line, function.signatures,
                                list(function.errors), list(function.signature_texts), list(function.tests))
        else:
            known.signatures += function.signatures
            known.errors += function.errors
            known.signature_texts = list(dict.fromkeys(known.signature_texts + function.signature_texts))
            known.tests = list(dict.fromkeys(known.tests + function.tests))[:MAX_TESTS]
    return list(found.values())


def stored_functions(ran: Iterable[Ran], functions: Iterable[Linted]) -> list[StoredFunction]:
    """What the test-run store keeps of a session's JAX functions (``ran``, merged over xdist
    workers): linted or not, the signatures ``functions`` (those called with arrays) were traced
    with, the tests that called them."""
    signatures = {(f.path, f.line): f.signature_texts for f in merged(functions)}
    return [StoredFunction(r.path, r.function, r.first_line, r.linted, list(signatures.get((r.path, r.first_line), [])),
                           list(r.tests)) for r in merged_ran(ran) if r.first_line]


def settled(findings: list[Finding], codes: list[str], config: Config,
            functions: Iterable[Linted] = (), read: Callable[[str], SourceFile] = read_source) -> CheckResult:
    """The findings as ``jaxlint check`` reports them (engine/settle.settle_watched): one per
    place, per-file-ignores and suppression comments applied, and (as check does) a safe fix in
    code that none of the linted ``functions`` runs demoted to unsafe. JX800 stays quiet (which
    lines the rules saw is only partly known). ``findings`` is left as it was: the store keeps
    them raw, fixes undemoted (check demotes by what it traces). ``read``: a file's source (the
    plugin's reads it as the session imported it: imported_sources.py)."""
    by_path: dict[str, list[Finding]] = {}
    for finding in findings:  # several processes may lint the same function: settle keeps one
        by_path.setdefault(finding.path, []).append(finding)
    linted: dict[str, list[tuple[str, int]]] = {}
    for function in functions:
        if function.signatures:
            linted.setdefault(os.path.abspath(function.path), []).append((function.qualname, function.line))
    analyses = []
    for path, found in sorted(by_path.items()):
        try:
            source = read(path)
        except Exception:  # deleted since, or changed during the session: report without its lines
            source = SourceFile(path, "", "utf-8", False)
        kept = settle_watched(path, source.text, found, codes, config, linted.get(os.path.abspath(path), []))
        analyses.append(FileAnalysis(source, [], None, findings=kept))
    return CheckResult(analyses, {}, config=config)


def coverage_report(ran: Iterable[Ran], functions: Iterable[Linted]) -> dict[str, Any]:
    """Per JAX function that ran, linted or not; per function called with arrays, the signatures
    traced and the errors of those that were not."""
    ran = sorted(merged_ran(ran), key=lambda r: (r.path, r.line, r.function))
    functions = sorted(merged(functions), key=lambda f: (f.path, f.line, f.qualname))
    return {"functions": [r.to_json() for r in ran],
            "called_with_arrays": [f.to_json() for f in functions],
            "summary": {"jax_functions_ran": len(ran), "linted": sum(r.linted for r in ran),
                        "called_with_arrays": len(functions),
                        "traced": sum(1 for f in functions if f.signatures)}}


def summary_line(ran: Iterable[Ran], functions: Iterable[Linted], findings: int, seconds: float, runner: str,
                 verbose: bool) -> str:
    """``jaxlint: linted 3 of 4 JAX functions the tests ran, ...``; ``runner`` names what ran them
    ("the tests", "the program"), the pronoun that follows is "they"/"it" accordingly."""
    ran = merged_ran(ran)
    functions = merged(functions)
    traced = [f for f in functions if f.signatures]
    signatures = sum(f.signatures for f in traced)
    pronoun = "they" if runner.endswith("s") else "it"
    parts = [f"jaxlint: linted {sum(r.linted for r in ran)} of {len(ran)} JAX functions {runner} ran",
             f"traced {len(traced)} of {len(functions)} project functions {pronoun} called with arrays "
             f"({signatures} signature{'s' * (signatures != 1)})"]
    failed = len(functions) - len(traced)
    if failed:
        parts.append(f"{failed} could not be traced again{'' if verbose else ' (-v lists them)'}")
    parts.append(f"{findings} finding{'s' * (findings != 1)}")
    after = runner.split()[-1]
    return ", ".join(parts) + f" ({seconds:.1f} s tracing after the {after})."


def not_linted_lines(functions: Iterable[Linted], relative: Any) -> list[str]:
    """``-v``: each function called with arrays that did not trace again, with the first error."""
    failed = [f for f in merged(functions) if not f.signatures]
    return [f"  not linted: {relative(f.path)}:{f.line} {f.qualname}: {f.errors[0]}"
            for f in sorted(failed, key=lambda f: (f.path, f.line))]


def unwatched_modules_note(other_loaders: Iterable[str], imported_before: Iterable[str]) -> str:
    """Lines (each starting with a newline) for the project modules whose calls were not watched
    the cheap way: loaded by another kind of import hook, or imported before jaxlint started."""
    text = ""
    names = sorted(set(other_loaders))
    if names:
        shown = ", ".join(names[:3]) + (", ..." if len(names) > 3 else "")
        text += (f"\njaxlint: {len(names)} project module{'s' * (len(names) != 1)} ({shown}) "
                 f"{'were' if len(names) != 1 else 'was'} loaded by an import hook that does not compile "
                 "Python source as the standard loader does: calls of their functions were not watched")
    names = sorted(set(imported_before))
    if names:
        shown = ", ".join(names[:3]) + (", ..." if len(names) > 3 else "")
        text += (f"\njaxlint: {len(names)} project module{'s' * (len(names) != 1)} ({shown}) had been "
                 "imported before jaxlint started, so calls were watched with a profile hook, which slows "
                 "the tests more")
    return text
