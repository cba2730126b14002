"""The docs site (mkdocs.yml, mkdocs_hooks.py): built with `mkdocs build --strict` as CI builds it.

The build tests need mkdocs and mkdocs-material (the `docs` and `test` extras install them) and
skip, saying so, without them. The list check at the end needs neither: it keeps the pages free of
the two list forms Python-Markdown (the site) reads differently from GitHub.
"""
from __future__ import annotations

import html
import json
import os
import re
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

from jaxlint.about import DOCS_URL
from jaxlint.rules.catalog import rule_infos

REPO = Path(__file__).resolve().parent.parent
PAGES = [REPO / "README.md", *sorted((REPO / "docs").glob("*.md")), *sorted((REPO / "rules").glob("*.md"))]
SITE_SOURCES = ["mkdocs.yml", "mkdocs_hooks.py", "README.md", "docs", "rules"]


def build(config: Path, site_dir: Path) -> subprocess.CompletedProcess:
    pytest.importorskip("mkdocs", reason="mkdocs is not installed (pip install -e '.[docs]')")
    pytest.importorskip("material", reason="mkdocs-material is not installed (pip install -e '.[docs]')")
    env = {**os.environ, "NO_MKDOCS_2_WARNING": "1"}
    return subprocess.run([sys.executable, "-m", "mkdocs", "build", "--strict", "--config-file", str(config),
                           "--site-dir", str(site_dir)], capture_output=True, text=True, env=env, timeout=600)


@pytest.fixture(scope="module")
def site(tmp_path_factory: pytest.TempPathFactory) -> Path:
    site_dir = tmp_path_factory.mktemp("site")
    done = build(REPO / "mkdocs.yml", site_dir)
    assert done.returncode == 0, done.stderr
    return site_dir


def test_a_rule_page_carries_the_rule_and_the_navigation(site: Path) -> None:
    page = (site / "rules" / "JX101.html").read_text(encoding="utf-8")
    assert ">vmap-unbatched-output (JX101)<" in page
    assert "Checks for outputs of a <code>jax.vmap</code> call that depend on no mapped input" in page
    assert 'href="JX203.html"' in page and "JX203 recompilation-hazard" in page  # the rules in the navigation
    assert 'href="../docs/check.html"' in page  # and the docs


def test_the_rules_index_is_generated_from_the_registry(site: Path) -> None:
    index = (site / "rules" / "index.html").read_text(encoding="utf-8")
    for info in rule_infos():
        row = re.search(rf'<tr>\s*<td><a href="{info.code}.html">{info.code}</a></td>(.*?)</tr>', index, re.DOTALL)
        assert row is not None, f"{info.code} is not in the rules index"
        cells = re.findall(r"<td>(.*?)</td>", row.group(1), re.DOTALL)
        assert cells[0] == info.name and cells[2:] == [info.severity, info.fix or "none"]
        assert html.unescape(re.sub(r"</?code>", "`", cells[1])) == info.summary
    assert not (REPO / "rules" / "index.md").exists()  # generated at build time, not kept in git


def test_links_between_the_readme_docs_and_rules_resolve(site: Path) -> None:
    home = (site / "index.html").read_text(encoding="utf-8")
    assert 'href="docs/check.html"' in home and 'href="docs/fixes.html"' in home
    assert 'href="rules/index.html"' in home  # the README's `rules/` (a folder on GitHub)
    rules_doc = (site / "docs" / "rules.html").read_text(encoding="utf-8")
    assert 'href="../rules/JX101.html"' in rules_doc and 'href="../rules/index.html"' in rules_doc
    jx203 = (site / "rules" / "JX203.html").read_text(encoding="utf-8")
    assert 'href="../docs/fixes.html#how-a-fix-is-proven"' in jx203
    assert 'id="how-a-fix-is-proven"' in (site / "docs" / "fixes.html").read_text(encoding="utf-8")


def test_search_indexes_the_rule_pages(site: Path) -> None:
    index = json.loads((site / "search" / "search_index.json").read_text(encoding="utf-8"))
    locations = {entry["location"] for entry in index["docs"]}
    assert {"rules/JX101.html", "rules/index.html", "docs/check.html", "index.html"} <= locations


def site_sources(tmp_path: Path, api_md_ends: str) -> Path:
    """A copy of what the site is built from, with a paragraph added to docs/api.md."""
    copy = tmp_path / "repo"
    copy.mkdir()
    for name in SITE_SOURCES:
        source = REPO / name
        (shutil.copytree if source.is_dir() else shutil.copy)(source, copy / name)
    with open(copy / "docs" / "api.md", "a", encoding="utf-8") as page:
        page.write(f"\n{api_md_ends}\n")
    return copy


def test_a_link_to_a_repository_file_points_at_it_on_github(tmp_path: Path) -> None:
    copy = site_sources(tmp_path, "[the example](../examples/founding.py#L13), [examples](../examples/)")
    shutil.copytree(REPO / "examples", copy / "examples")
    done = build(copy / "mkdocs.yml", tmp_path / "site")
    assert done.returncode == 0, done.stderr
    page = (tmp_path / "site" / "docs" / "api.html").read_text(encoding="utf-8")
    assert f'href="{DOCS_URL}examples/founding.py#L13"' in page and f'href="{DOCS_URL}examples"' in page


def test_a_broken_link_or_a_missing_rule_page_fails_the_build(tmp_path: Path) -> None:
    copy = site_sources(tmp_path, "[a](../rules/JX999.md), [b](check.md#no-such-heading), [c](../no-such-folder/)")
    (copy / "rules" / "JX102.md").unlink()  # the registry still has JX102: the index links to it
    done = build(copy / "mkdocs.yml", tmp_path / "site")
    assert done.returncode != 0
    assert "'../rules/JX999.md'" in done.stderr
    assert "does not contain an anchor '#no-such-heading'" in done.stderr
    assert "unrecognized relative link '../no-such-folder/'" in done.stderr
    assert "'rules/index.md' contains a link 'JX102.md'" in done.stderr


def misread_lists(text: str) -> list[str]:
    """Lines GitHub reads as list items and Python-Markdown does not read the same: an item right
    after a paragraph line (Python-Markdown joins it to the paragraph), an item nested by fewer
    than four spaces (Python-Markdown does not nest it)."""
    problems, fence, previous = [], False, ""
    item = re.compile(r" *([-*+]|\d+\.) ")
    for number, line in enumerate(text.splitlines(), 1):
        if line.lstrip().startswith(("```", "~~~")):
            fence = not fence
        elif not fence and re.match(r" {1,3}([-*+]|\d+\.) ", line):
            problems.append(f"{number}: nested by fewer than 4 spaces: {line.strip()}")
        elif not fence and item.match(line) and previous.strip() and not item.match(previous) \
                and not previous.startswith(" "):
            problems.append(f"{number}: a list right after a paragraph: {line.strip()}")
        previous = line
    return problems


@pytest.mark.parametrize("page", PAGES, ids=lambda page: str(page.relative_to(REPO)))
def test_lists_read_the_same_on_github_and_in_the_site(page: Path) -> None:
    assert misread_lists(page.read_text(encoding="utf-8")) == []


def test_the_list_check_finds_both_forms() -> None:
    text = "A paragraph:\n- an item\n\n- outer\n  - nested by two\n    - nested by four\n\n```\nx:\n- code\n```\n"
    assert misread_lists(text) == ["2: a list right after a paragraph: - an item",
                                   "5: nested by fewer than 4 spaces: - nested by two"]
