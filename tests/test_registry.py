"""The rule registry, rule selection, and the README's rule table agree."""
from __future__ import annotations

import re
import subprocess
import sys
from pathlib import Path

import pytest

from jaxlint.config.selection import select_rules
from jaxlint.report import ruledocs
from jaxlint.rules import all_rules

REPO = Path(__file__).resolve().parent.parent


def test_every_rule_has_metadata() -> None:
    for rule in all_rules():
        assert re.fullmatch(r"JX\d{3}", rule.code)
        assert re.fullmatch(r"[a-z0-9]+(-[a-z0-9]+)*", rule.name)
        assert rule.severity in ("error", "warning", "info")
        assert rule.summary.endswith(".")
    assert len({r.name for r in all_rules()}) == len(all_rules())


def test_readme_table_is_generated_from_the_rules() -> None:
    readme = (REPO / "README.md").read_text(encoding="utf-8")
    start, end = readme.index(ruledocs.TABLE_BEGIN), readme.index(ruledocs.TABLE_END)
    table = readme[start + len(ruledocs.TABLE_BEGIN):end].strip("\n") + "\n"
    assert table == ruledocs.readme_table(), "stale: run `python -m jaxlint.report.ruledocs --update-readme`"
    for rule in all_rules():
        link = f" [doc](rules/{rule.code}.md)" if (REPO / "rules" / f"{rule.code}.md").exists() else ""
        assert f"| {rule.code} | `{rule.name}` | {rule.severity} | {rule.fix or ''} | " in table
        assert f"{link} |\n" in table.split(f"| {rule.code} |", 1)[1]


def test_readme_table_update_rewrites_only_the_marked_block(tmp_path: Path) -> None:
    readme = tmp_path / "README.md"
    stale = f"# Title\n\n{ruledocs.TABLE_BEGIN}\n| old |\n{ruledocs.TABLE_END}\n\nAfter.\n"
    readme.write_text(stale, encoding="utf-8")
    run = subprocess.run([sys.executable, "-m", "jaxlint.report.ruledocs", "--update-readme", str(readme)],
                         capture_output=True, text=True, cwd=tmp_path)
    assert run.returncode == 0, run.stderr
    assert readme.read_text(encoding="utf-8") == (
        f"# Title\n\n{ruledocs.TABLE_BEGIN}\n{ruledocs.readme_table()}{ruledocs.TABLE_END}\n\nAfter.\n")
    readme.write_text("no markers\n", encoding="utf-8")
    run = subprocess.run([sys.executable, "-m", "jaxlint.report.ruledocs", "--update-readme", str(readme)],
                         capture_output=True, text=True, cwd=tmp_path)
    assert run.returncode == 2 and "has no <!-- begin rules table -->" in run.stderr


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
