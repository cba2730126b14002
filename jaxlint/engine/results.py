"""What a check run produced, per file and in all: read by the fixer, the report and the CLI.
(drivers/results.py is what the in-process drivers report from.)"""
from __future__ import annotations

from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Iterable

from jaxlint.config import Config
from jaxlint.model import Finding, Job, Result, Skipped, Target
from jaxlint.scan.functions import JaxFunction
from jaxlint.scan.noqa import Tokens
from jaxlint.text import SourceFile

if TYPE_CHECKING:
    from jaxlint.engine.store import StoredModule

# A fix whose edits overlap an accepted fix's is left for the next run, not rejected: its
# Finding.fix_rejected starts with this.
OVERLAPS = "its edits overlap another fix's"


def rejected_by_verification(finding: Finding) -> bool:
    """The finding's fix was verified and failed: ``--fix`` will not apply it (an overlapping fix,
    left for the next run, was not judged)."""
    return finding.fix_rejected is not None and not finding.fix_rejected.startswith(OVERLAPS)


@dataclass
class FileAnalysis:
    """One file: its scanned targets, its worker job (None: nothing to import) and what came back.
    ``findings`` are the file's, after suppressions and fixes: the ones reported."""

    source: SourceFile
    targets: list[Target]
    job: Job | None
    result: Result | None = None
    findings: list[Finding] = field(default_factory=list)
    functions: list[JaxFunction] = field(default_factory=list)  # the coverage denominator
    # First lines of its JAX functions that other files' targets reached (helpers they called).
    linted_through_callers: set[int] = field(default_factory=set)
    # Findings other files' traces made in its helpers: a re-analysis of the file alone (after
    # fixing it) does not see them again, so the fixer carries them over.
    routed: list[Finding] = field(default_factory=list)
    # The tokenizer's view of its comments, from the scan cache (None: tokenized when needed).
    tokens: Tokens | None = None
    # What watched runs linted in it (engine/store.py), one entry per origin (a test run, a
    # ``jaxlint run``); an entry is used when ``fresh``.
    stored: list[StoredModule] = field(default_factory=list)

    def replace_finding(self, old: Finding, new: Finding) -> None:
        """Put ``new`` where ``old`` is (the same object) in ``findings`` and in ``routed``, which
        share their objects: the fixer carries a routed finding only while ``findings`` holds it."""
        for found in (self.findings, self.routed):
            for index, finding in enumerate(found):
                if finding is old:
                    found[index] = new

    @property
    def linted(self) -> list[JaxFunction]:
        """The JAX functions whose operations the rules read, here or in a test run."""
        reached = self._reached_here().union(*(s.linted_lines for s in self.stored if s.fresh))
        return [f for f in self.functions if f.first_line in reached]

    @property
    def linted_here(self) -> list[JaxFunction]:
        """Those this run traced (a function linted here and in the test run counts here)."""
        reached = self._reached_here()
        return [f for f in self.functions if f.first_line in reached]

    @property
    def changed_since_test_run(self) -> list[JaxFunction]:
        """The JAX functions a test run (or a program's) linted whose entry is stale, not linted
        here nor by another run whose entry is current."""
        linted = {f.first_line for f in self.linted}
        return [f for f in self.functions if f.first_line not in linted and self.stale_entry(f) is not None]

    def stale_entry(self, function: JaxFunction) -> StoredModule | None:
        """The first stale entry that linted ``function`` (the test run's before a program's)."""
        return next((s for s in self.stored if not s.fresh and s.linted_entry(function.first_line, function.qualname)),
                    None)

    def used_entry(self, first_line: int) -> StoredModule | None:
        """The first current entry that linted the function of ``first_line``."""
        return next((s for s in self.stored if s.fresh and first_line in s.linted_lines), None)

    def _reached_here(self) -> set[int]:
        reached = set(self.result.linted) if self.result is not None else set()
        return reached | self.linted_through_callers


@dataclass
class CheckResult:
    files: list[FileAnalysis]
    timings: dict[str, float]
    fixed: list[Finding] = field(default_factory=list)
    fix_rejected: list[Finding] = field(default_factory=list)
    fix_deferred: list[Finding] = field(default_factory=list)  # overlapping an applied fix: next run
    diffs: list[str] = field(default_factory=list)
    fixed_texts: dict[str, str] = field(default_factory=dict)  # --diff: path -> the verified fixed text
    workers_started: int = 0  # 0: no module needed importing, so JAX was never imported
    cached: int = 0  # modules whose result came from the result cache (not imported)
    config: Config | None = None
    ignore_noqa: bool = False  # --ignore-noqa: suppression comments are not applied
    # Findings the traces made in helpers whose files were not among those checked (not reported).
    unchecked_findings: int = 0
    not_written: list[tuple[str, str]] = field(default_factory=list)  # (path, why) of fixed files left as they were
    empty_paths: list[str] = field(default_factory=list)  # folders given that hold no Python file
    # E902 for each path given that does not exist: reported, as ruff reports it, with the others checked.
    io_errors: list[Finding] = field(default_factory=list)
    ignored_missing: list[str] = field(default_factory=list)  # missing paths, with E902 ignored: a warning
    unusable_test_run: str | None = None  # why the last test run's store serves none of these files

    @property
    def findings(self) -> list[Finding]:
        return sorted([*self.io_errors, *(f for fa in self.files for f in fa.findings)],
                      key=lambda f: (f.path, f.span.start_line, f.span.start_col, f.code))

    @property
    def traced(self) -> int:
        return sum(len(fa.result.traced) for fa in self.files if fa.result is not None)

    @property
    def jax_functions(self) -> int:
        return sum(len(fa.functions) for fa in self.files)

    @property
    def linted(self) -> int:
        return sum(len(fa.linted) for fa in self.files)

    @property
    def linted_here(self) -> int:
        return sum(len(fa.linted_here) for fa in self.files)

    @property
    def changed_since_test_run(self) -> int:
        return sum(len(fa.changed_since_test_run) for fa in self.files)

    @property
    def test_runs(self) -> list[str]:
        """When and by what the test-run entries this run used or found stale were written:
        "test run of 2026-12-02 14:03", the latest first."""
        return _runs(s for fa in self.files for s in fa.stored)

    @property
    def runs_used(self) -> list[str]:
        """Those of ``test_runs`` whose entries were current and counted as linted."""
        return _runs(s for fa in self.files for s in fa.stored if s.fresh)

    @property
    def runs_changed(self) -> list[str]:
        """Those of ``test_runs`` that linted a function changed since (``changed_since_test_run``)."""
        return _runs(fa.stale_entry(f) for fa in self.files for f in fa.changed_since_test_run)  # type: ignore[misc]

    @property
    def dropped(self) -> list[StoredModule]:
        """The stale entries: their findings are not reported (each names the files that changed)."""
        return sorted((s for fa in self.files for s in fa.stored if not s.fresh), key=lambda s: (-s.time, s.path))

    @property
    def skipped(self) -> list[tuple[str, Skipped]]:
        """(path, why) for each target that was not traced."""
        return [(fa.source.path, s) for fa in self.files if fa.result is not None for s in fa.result.skipped]


def _runs(stored: Iterable[StoredModule]) -> list[str]:
    """"test run of 2026-12-02 14:03" for each session that wrote these entries, the latest first."""
    return list(dict.fromkeys(f"{s.origin} of {s.when}" for s in sorted(stored, key=lambda s: -s.time)))
