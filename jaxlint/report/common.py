"""What several output formats share: rule metadata, doc links, paths and source lines."""
from __future__ import annotations

import functools
import os
import re

from jaxlint.engine.results import CheckResult, rejected_by_verification
from jaxlint.model import Finding
from jaxlint.rules import RuleInfo, rule_infos
from jaxlint.text import physical_lines, relative


@functools.lru_cache(maxsize=None)
def rules_by_code() -> dict[str, RuleInfo]:
    return {rule.code: rule for rule in rule_infos()}


@functools.lru_cache(maxsize=None)
def rule_doc(code: str) -> str | None:
    """The rule's page (rules/JXnnn.md, shipped in the package) as Markdown."""
    from jaxlint.report import ruledocs  # the rule pages: only the formats that show or link them

    rule = rules_by_code().get(code)
    return None if rule is None else ruledocs.doc_text(rule)


def doc_section(doc: str, title: str) -> str:
    """The text of a level-2 section of a rule page, without its heading ("" if absent)."""
    match = re.search(rf"^## {re.escape(title)}\n(.*?)(?=^## |\Z)", doc, flags=re.MULTILINE | re.DOTALL)
    return match.group(1).strip() if match else ""


def summary(code: str, fallback: str) -> str:
    rule = rules_by_code().get(code)
    return rule.summary if rule is not None else fallback


def severity(code: str, fallback: str) -> str:
    rule = rules_by_code().get(code)
    return rule.severity if rule is not None else fallback


def sources(result: CheckResult) -> dict[str, str]:
    """Path -> the text that was checked (after --fix, the fixed text)."""
    return {fa.source.path: fa.source.text for fa in result.files}


@functools.lru_cache(maxsize=64)  # one split per file, however many findings it has
def split_lines(text: str) -> tuple[str, ...]:
    """Lines as spans count them: Python's line breaks only, unlike str.splitlines."""
    return tuple(physical_lines(text))


def source_line(texts: dict[str, str], path: str, line: int) -> str:
    lines = split_lines(texts.get(path, ""))
    return lines[line - 1] if 1 <= line <= len(lines) else ""


def is_fixable(finding: Finding, unsafe_fixes: bool = False) -> bool:
    """What the ``[*]`` marker and "fixable with --fix" count: the fixes --fix applies (not one
    its verification rejected in this run: the report says why instead)."""
    return finding.fix is not None and not rejected_by_verification(finding) and (
        finding.fix.applicability == "safe" or (unsafe_fixes and finding.fix.applicability == "unsafe"))


def project_path(path: str, root_variable: str) -> str:
    """``path`` relative to the CI's checkout (``root_variable``, e.g. GITHUB_WORKSPACE) when set
    and inside it, else relative to the current directory as the text formats show it."""
    root = os.environ.get(root_variable)
    if root:
        try:
            rel = os.path.relpath(path, root)
        except ValueError:  # another drive on Windows
            rel = ".."
        if not rel.startswith(".."):
            from pathlib import Path  # only the CI formats ask (pathlib: a few ms of a warm run)

            return Path(rel).as_posix()
    return relative(path)
