"""The rule registry, rule selection, and the rules index of the docs agree.

The docs list no rule by hand (the registry and the pages in rules/ are the index), so a new rule
needs only its rule file, its page and its case file. What the docs do list is checked here: the
families (the first digit of a code) and the analysis failures' list. The catalog, the rules'
metadata a warm run reads instead of the rule modules, is checked against the rules themselves.
"""
from __future__ import annotations

import dataclasses
import json
import re
import subprocess
import sys
from pathlib import Path

import pytest

from jaxlint.config.selection import select_rules
from jaxlint.rules import all_rules, catalog

REPO = Path(__file__).resolve().parent.parent


def test_every_rule_has_metadata() -> None:
    for rule in all_rules():
        assert re.fullmatch(r"JX\d{3}", rule.code)
        assert re.fullmatch(r"[a-z0-9]+(-[a-z0-9]+)*", rule.name)
        assert rule.severity in ("error", "warning", "info")
        assert rule.summary.endswith(".")
    assert len({r.name for r in all_rules()}) == len(all_rules())


def test_the_catalog_holds_what_each_rule_declares() -> None:
    """catalog.json holds each rule's declared metadata: a rule whose code, name, summary,
    severity, fix or options changed (or a rule added or removed) must be followed by
    ``python -m jaxlint.rules.catalog``; a comment or a change of a rule's logic need not."""
    fix = "the rules changed since jaxlint/rules/catalog.json was generated: run python -m jaxlint.rules.catalog"
    assert catalog.stale_codes() == [], fix
    assert list(catalog.rule_infos()) == [catalog.info_of(rule) for rule in all_rules()], fix


def test_a_changed_declaration_makes_the_catalog_stale(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """The check above cannot pass on a stale catalog: a changed summary, severity or option
    default, and a rule the catalog lacks, are each found."""
    rules = {rule.code: rule for rule in all_rules()}
    monkeypatch.setattr(rules["JX101"], "summary", rules["JX101"].summary + " Changed.")
    monkeypatch.setattr(rules["JX102"], "severity", "error" if rules["JX102"].severity != "error" else "info")
    changed = {name: dataclasses.replace(option, default=option.default * 2)
               for name, option in rules["JX202"].options.items()}
    monkeypatch.setattr(rules["JX202"], "options", changed)
    assert catalog.stale_codes() == ["JX101", "JX102", "JX202"]
    monkeypatch.undo()
    stored = json.loads(Path(catalog.CATALOG).read_text(encoding="utf-8"))
    stored["rules"] = [entry for entry in stored["rules"] if entry["code"] != "JX203"]
    (tmp_path / "catalog.json").write_text(json.dumps(stored), encoding="utf-8")
    monkeypatch.setattr(catalog, "CATALOG", str(tmp_path / "catalog.json"))
    assert catalog.stale_codes() == ["JX203"]


def test_a_missing_catalog_falls_back_to_the_rule_classes(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(catalog, "CATALOG", str(tmp_path / "absent.json"))
    catalog._loaded.cache_clear()
    try:
        assert list(catalog.rule_infos()) == [catalog.info_of(rule) for rule in all_rules()]
    finally:
        catalog._loaded.cache_clear()


def section(text: str, heading: str) -> str:
    """The text under a Markdown heading, up to the next heading of the same or a higher level."""
    level = heading.split(" ")[0]
    start = text.index(f"\n{heading}\n") + len(heading) + 2
    following = re.search(rf"^#{{1,{len(level)}}} ", text[start:], flags=re.MULTILINE)
    return text[start:start + following.start()] if following else text[start:]


def families() -> set[str]:
    return {rule.code[:3] for rule in all_rules()}


def test_rules_index_describes_every_family_and_no_other() -> None:
    index = (REPO / "docs" / "rules.md").read_text(encoding="utf-8")
    rows = re.findall(r"^\| (JX\d) \|", section(index, "## Families"), flags=re.MULTILINE)
    assert sorted(rows) == sorted(families()), "docs/rules.md's Families table"
    readme = (REPO / "README.md").read_text(encoding="utf-8")
    named = set(re.findall(r"\b(JX\d)\b", section(readme, "## Rules")))
    assert named == families(), "the README's Rules section names each family"


def test_analysis_failures_are_listed_as_the_registry_has_them() -> None:
    """docs/rules.md links each analysis failure's page (JX9xx), with its name; the README's Rules
    section points there."""
    index = (REPO / "docs" / "rules.md").read_text(encoding="utf-8")
    listed = re.findall(r"^- \[(JX\d{3})\]\(\.\./rules/(JX\d{3})\.md\) `([a-z0-9-]+)`",
                        section(index, "## Analysis failures"), flags=re.MULTILINE)
    assert listed == [(rule.code, rule.code, rule.name) for rule in all_rules() if rule.code.startswith("JX9")]
    assert "(docs/rules.md#analysis-failures)" in section((REPO / "README.md").read_text(encoding="utf-8"),
                                                          "## Rules")


def test_docs_list_no_rule_by_hand() -> None:
    """No page names a rule in a table row: such a table would need an edit for every new rule."""
    codes = {rule.code for rule in all_rules()}
    for page in [REPO / "README.md", *sorted((REPO / "docs").glob("*.md"))]:
        rows = re.findall(r"^\|\s*(JX\d{3})\s*\|", page.read_text(encoding="utf-8"), flags=re.MULTILINE)
        assert not set(rows) & codes, f"{page.name} lists rules in a table: {sorted(set(rows) & codes)}"


def test_selectors_take_codes_prefixes_and_names() -> None:
    codes = lambda rules: {r.code for r in rules}  # noqa: E731
    assert codes(select_rules(["JX101"], None)) == {"JX101"}
    assert codes(select_rules(["JX9"], None)) == {r.code for r in all_rules() if r.code.startswith("JX9")}
    assert codes(select_rules(["trace-error"], None)) == {"JX601"}
    assert "JX101" not in codes(select_rules(None, ["vmap-unbatched-output"]))
    assert codes(select_rules(["ALL"], ["JX9"])) == {r.code for r in all_rules() if r.code[2] != "9"}
    with pytest.raises(ValueError):
        select_rules(["JX0"], None)


def test_registry_import_does_not_import_jax() -> None:
    code = "import sys, jaxlint.rules as r; r.all_rules(); assert 'jax' not in sys.modules, 'jax imported'"
    subprocess.run([sys.executable, "-c", code], check=True, cwd=REPO)
