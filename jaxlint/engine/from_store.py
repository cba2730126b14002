"""What ``jaxlint check`` takes from the test-run store (engine/store.py) for the files it
analyzes: the guesses a current entry makes needless are not traced, and a fresh entry's findings
join the file's own. Kept apart from the store, which knows entries, not the check's files."""
from __future__ import annotations

import os
from dataclasses import replace
from typing import TYPE_CHECKING, Iterable, Sequence

from jaxlint.engine.cache import ResultCache
from jaxlint.engine.results import FileAnalysis
from jaxlint.engine.store import load_stored, slot_material
from jaxlint.engine.targets import GUESSED_KINDS
from jaxlint.model import Target
from jaxlint.scan.functions import JaxFunction

if TYPE_CHECKING:
    from jaxlint.config import Config


def skip_guesses_the_test_run_made(analyses: Iterable[FileAnalysis], codes: Sequence[str], config: Config,
                                   cache: ResultCache) -> None:
    """Before anything is traced: a function that a current test-run entry linted is not traced
    again with inferred arguments. The tests passed real ones; a guess would only rival their
    findings (and cost a trace). With ``rerun-tests``, neither is one whose entry is stale but
    whose tests run again (engine/rerun.py): they bring the real arguments back."""
    shared = None
    for analysis in analyses:
        job = analysis.job
        nested = any("<locals>" in function.qualname for function in analysis.functions)
        if job is None or not (nested or any(target.kind in GUESSED_KINDS for target in job.targets)):
            continue
        shared = shared or slot_material(cache, config)
        linted = {function.first_line
                  for stored in load_stored(cache, config, codes, os.path.abspath(analysis.source.path), shared)
                  if stored.fresh or config.rerun_tests
                  for function in stored.functions if function.linted and (stored.fresh or function.tests)}
        kept = [t for t in job.targets if not _settled(t, analysis.functions, linted)]
        if len(kept) < len(job.targets):
            analysis.job = replace(job, targets=kept)
        if nested and linted:  # nor is a nested function it linted built from its code
            analysis.job = replace(analysis.job, settled=sorted(linted))


def _settled(target: Target, functions: list[JaxFunction], linted: set[int]) -> bool:
    """A guessed target the test run made needless: a JAX function it linted, or an outer function
    tried only for its nested JAX functions (engine/targets.py) once it linted all of those."""
    if target.kind not in GUESSED_KINDS:
        return False
    if any(function.first_line == target.first_line for function in functions):
        return target.first_line in linted
    inside = target.qualname.partition(".<locals>.")[0] + ".<locals>."
    nested = {function.first_line for function in functions if function.qualname.startswith(inside)}
    return bool(nested) and nested <= linted


def join_stored(analyses: Iterable[FileAnalysis], codes: Sequence[str], config: Config, cache: ResultCache) -> None:
    """``check``: give each analyzed file its entries, one per origin (``FileAnalysis.stored``); a
    fresh entry's findings follow the file's own, for the settle step (its own win at a place).
    A file with no JAX function has entries too where a run found something in it (a host sync in
    a loop that calls a jitted step imported from elsewhere)."""
    shared = slot_material(cache, config)
    for analysis in analyses:
        analysis.stored = load_stored(cache, config, codes, analysis.source.path, shared)
        for stored in analysis.stored:
            stored.findings = [replace(finding, path=analysis.source.path) for finding in stored.findings]
            analysis.findings += stored.used
