"""The one step that turns the findings the rules made into the findings a driver reports, the
same for ``jaxlint check`` (and the editor server, which runs it), ``pytest --jaxlint`` and
``jaxlint.lint``: one finding per place (the first: two targets calling one helper, several
signatures or xdist workers see the same operation), none of the codes per-file-ignores turns off
for the file, none a suppression comment covers, and a JX800 finding for each suppression that
suppressed nothing where the rules ran (``ran``; the in-process drivers know only part of a
file's traces, so they pass none and JX800 stays quiet). ``check`` settles before fixing (an
ignored or suppressed finding is not fixed) and then demotes the safe fixes it cannot verify
(``settle_file``)."""
from __future__ import annotations

import os
from typing import Collection, Iterable

from jaxlint.config import Config
from jaxlint.engine import suppressions, values
from jaxlint.engine.results import FileAnalysis
from jaxlint.model import Finding
from jaxlint.scan.noqa import Tokens
from jaxlint.text import SourceError, read_source


def one_per_place(findings: Iterable[Finding]) -> list[Finding]:
    """The first finding at each place, in order; one seen with real arguments (a caller's trace)
    stands over one seen only with inferred ones, whose message and fix rest on a guess."""
    unique: dict[tuple, Finding] = {}
    for finding in findings:
        first = unique.setdefault(finding.place, finding)
        if first.arguments == "inferred" and finding.arguments != "inferred":
            unique[finding.place] = finding
    return list(unique.values())


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


def settle_file(analysis: FileAnalysis, codes: Collection[str], config: Config | None,
                ignore_noqa: bool = False) -> None:
    """``check``'s settling of one file: JX800 speaks where the file's traces were complete, and
    a safe fix whose function jaxlint cannot run becomes unsafe (values.demote_unverifiable)."""
    ran = suppressions.analyzed(analysis.targets, analysis.result)
    analysis.findings = settle(analysis.source.path, analysis.source.text, analysis.findings, codes, config, ran,
                               ignore_noqa, analysis.tokens)
    values.demote_unverifiable([analysis])
