"""The one step that turns the findings the rules made into the findings a driver reports, the
same for ``jaxlint check`` (and the editor server, which runs it), ``jaxlint explain``,
``pytest --jaxlint``, ``jaxlint run`` and ``jaxlint.lint``: one finding per place
(``model.one_per_place``: the first, one seen with real arguments over one seen with inferred
ones; two targets calling one helper, several signatures or xdist workers see the same
operation), none of the codes per-file-ignores turns off for the file, none a suppression comment
covers, and a JX800 finding for each suppression that suppressed nothing where the rules ran
(``ran``; the in-process drivers know only part of a file's traces, so they pass none and JX800
stays quiet). Then, for the drivers that show fixes, a safe fix whose code jaxlint cannot run is
demoted to unsafe (values.unverifiable_demoted): ``check`` after settling (an ignored or
suppressed finding is not fixed; ``settle_file``), a watched run when it reports
(``settle_watched``), ``explain`` for the function it traced (``settle_explained``). What the drivers keep (the result cache, the test-run store) is raw:
demotion is a decision about what is shown.
"""
from __future__ import annotations

import os
from typing import Collection, Iterable

from jaxlint.config import Config
from jaxlint.engine import suppressions, values
from jaxlint.engine.results import FileAnalysis
from jaxlint.model import Finding, Result, Span, one_per_place
from jaxlint.scan.index import SourceIndex, first_line
from jaxlint.scan.noqa import Tokens
from jaxlint.text import SourceError, read_source


def settle(path: str, text: str, findings: Iterable[Finding], codes: Collection[str], config: Config | None,
           ran: suppressions.Analyzed | None = None, ignore_noqa: bool = False,
           tokens: Tokens | None = None) -> list[Finding]:
    """The reported findings of the file ``path`` (whose source is ``text``) from its raw ones:
    ``codes`` are the rules that ran, ``config`` the project's (None: no per-file-ignores),
    ``ignore_noqa``: suppression comments are not applied (--ignore-noqa); ``tokens``: the
    tokenizer's view of ``text`` when the scan cache has it."""
    ignored = config.ignored_codes(os.path.abspath(path)) if config is not None else set()
    kept = [f for f in one_per_place(findings) if f.code not in ignored]
    if ignore_noqa:
        return kept
    return suppressions.apply(path, text, kept, set(codes) - ignored, ran or suppressions.Analyzed(), tokens)


def settle_each_file(findings: Iterable[Finding], codes: Collection[str], config: Config | None) -> list[Finding]:
    """``settle`` over findings from several files (a function and the helpers it calls), each
    file's findings against its own text; files in order of their first finding. JX800 stays
    quiet: which of a file's lines the rules saw is not known here."""
    by_path: dict[str, list[Finding]] = {}
    for finding in findings:
        by_path.setdefault(finding.path, []).append(finding)
    settled: list[Finding] = []
    for path, found in by_path.items():
        try:
            text = read_source(path).text
        except (OSError, SourceError):  # deleted or undecodable since: no comment to read
            text = ""
        settled += settle(path, text, found, codes, config)
    return settled


def settle_explained(findings: Iterable[Finding], codes: Collection[str], config: Config | None, result: Result,
                     target: str, span: Span) -> list[Finding]:
    """``jaxlint explain``'s settling of the findings of its one function ``target`` (``span``:
    its def) and the helpers it called: ``settle_each_file``, then check's demotion, from what the
    job traced (``result``): a fix in a function that calls back into Python, or that ran only
    with guessed arguments, is unsafe in explain as it is in check."""
    kept = settle_each_file(findings, codes, config)
    guessed = {t.target: t.signature for t in result.traced if t.source == "inferred"}
    return values.unverifiable_demoted(kept, {t.target for t in result.traced}, [(target, span)],
                                       result.effectful, guessed)


def settle_file(analysis: FileAnalysis, codes: Collection[str], config: Config | None,
                ignore_noqa: bool = False) -> None:
    """``check``'s settling of one file: JX800 speaks where the file's traces were complete, and
    a safe fix whose function jaxlint cannot run becomes unsafe (values.demote_unverifiable)."""
    ran = suppressions.analyzed(analysis.targets, analysis.result)
    analysis.findings = settle(analysis.source.path, analysis.source.text, analysis.findings, codes, config, ran,
                               ignore_noqa, analysis.tokens)
    values.demote_unverifiable([analysis])


def settle_watched(path: str, text: str, findings: Iterable[Finding], codes: Collection[str], config: Config | None,
                   traced: Collection[tuple[str, int]]) -> list[Finding]:
    """``pytest --jaxlint``'s and ``jaxlint run``'s settling of the file ``path``: ``settle``, then
    a safe fix whose code none of the functions the run traced runs is made unsafe. ``traced``:
    each such function of the file by its qualified name and its code's first line (the first
    decorator's), which names its def in ``text``."""
    kept = settle(path, text, findings, codes, config)
    spans = [(qualname, Span(node.lineno, 0, node.end_lineno or node.lineno, 0))
             for node in SourceIndex(path, text).functions for qualname, line in traced
             if qualname.rpartition(".")[2] == node.name and first_line(node) <= line <= (node.end_lineno or 0)]
    return values.unverifiable_demoted(kept, {qualname for qualname, _ in traced}, spans)
