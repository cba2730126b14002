"""The docs site's hooks (named in mkdocs.yml): the site mirrors the repository's layout.

mkdocs reads one folder (docs_dir: docs/), but the README and the rule pages (rules/) live beside
it. These hooks lay the pages out as the repository does, without copying any into git: README.md
is the home page, docs/X.md stays docs/X.md and rules/JXnnn.md stays rules/JXnnn.md, so the
relative links the pages already use (`../rules/JX101.md` from docs/, `docs/check.md` from the
README) resolve unchanged on GitHub and in the built site alike (a link to a folder, or to a file of
the repository that is no page, is pointed at the folder's index or the file on GitHub). They also
generate the rules index
(rules/index.md) from the rule catalog, and the navigation: the docs in the order docs/README.md
lists them (a page it does not list comes after, alphabetically), then the rules by code.
"""
from __future__ import annotations

import os
import posixpath
import re
from typing import Any

from mkdocs.config.defaults import MkDocsConfig
from mkdocs.structure.files import File, Files, InclusionLevel
from mkdocs.structure.pages import Page

from jaxlint.about import DOCS_URL
from jaxlint.rules.catalog import rule_infos

RULES_INDEX = "rules/index.md"
# A relative inline link (`](../rules/JX101.md#example)`, `](rules/)`): target, anchor.
RELATIVE_LINK = re.compile(r"\]\((?![a-zA-Z][a-zA-Z0-9+.-]*:|/|#)([^)\s#]+)(#[^)\s]*)?\)")
# The pages docs/README.md links to, in its order.
LISTED_PAGE = re.compile(r"\]\(([\w.-]+\.md)\)")


def on_files(files: Files, config: MkDocsConfig) -> Files:
    """The site's files: the theme's, docs/ under docs/, the README, the rule pages and the index."""
    root = os.path.dirname(config.config_file_path)
    docs_dir = os.path.normpath(config.docs_dir)
    site = Files([file for file in files if os.path.normpath(file.src_dir or "") != docs_dir])
    prefix = os.path.relpath(docs_dir, root).replace(os.sep, "/")  # "docs"
    for file in files:
        if os.path.normpath(file.src_dir or "") == docs_dir:
            site.append(_repository_file(f"{prefix}/{file.src_uri}", root, config, file.inclusion))
    site.append(_repository_file("README.md", root, config))
    for name in sorted(os.listdir(os.path.join(root, "rules"))):
        if name.endswith(".md"):
            site.append(_repository_file(f"rules/{name}", root, config))
    site.append(File.generated(config, RULES_INDEX, content=rules_index()))
    config.nav = navigation(site, prefix)
    return site


def _repository_file(src_uri: str, root: str, config: MkDocsConfig,
                     inclusion: InclusionLevel = InclusionLevel.UNDEFINED) -> File:
    return File(src_uri, root, config.site_dir, config.use_directory_urls, inclusion=inclusion)


def rules_index() -> str:
    """The rules index page, from the catalog the registry generates (what `jaxlint rules` lists)."""
    rows = [f"| [{info.code}]({info.code}.md) | {info.name} | {_cell(info.summary)} | {info.severity} "
            f"| {info.fix or 'none'} |" for info in rule_infos()]
    return "\n".join([
        "---",
        "hide: [toc]",  # the page has no sections: the table gets the width
        "---",
        "",
        "# Rule index",
        "",
        "Every rule jaxlint has, generated from its rule catalog (`jaxlint rules` prints the same list).",
        "What the families, severities and fixes mean is in [Rules](../docs/rules.md).",
        "",
        "| Code | Name | Summary | Severity | Fix |",
        "|---|---|---|---|---|",
        *rows,
        "",
    ])


def _cell(text: str) -> str:
    return text.replace("|", "\\|").replace("\n", " ")


def navigation(files: Files, docs_prefix: str) -> list[dict[str, Any]]:
    """Home, the docs (docs/README.md's order, then the pages it does not list), the rules by code."""
    pages = sorted(file.src_uri for file in files.documentation_pages())
    docs = [uri for uri in pages if uri.startswith(f"{docs_prefix}/")]
    overview = f"{docs_prefix}/README.md"
    listed: list[str] = []
    if overview in docs:
        with open(files.get_file_from_path(overview).abs_src_path, encoding="utf-8") as handle:
            listed = [f"{docs_prefix}/{name}" for name in LISTED_PAGE.findall(handle.read())]
    ordered = list(dict.fromkeys([overview, *listed, *docs]))
    names = {info.code: info.name for info in rule_infos()}
    rules = [uri for uri in pages if uri.startswith("rules/") and uri != RULES_INDEX]
    return [
        {"Home": "README.md"},
        {"Documentation": [uri for uri in ordered if uri in docs]},
        {"Rules": [{"Rule index": RULES_INDEX},
                   *({f"{_code(uri)} {names[_code(uri)]}": uri} if _code(uri) in names else uri for uri in rules)]},
    ]


def _code(src_uri: str) -> str:
    return posixpath.splitext(posixpath.basename(src_uri))[0]


def on_page_markdown(markdown: str, page: Page, config: MkDocsConfig, files: Files) -> str:
    """Relative links the site cannot follow as written, made to work as they do on GitHub: a link
    to a folder points at its index page (rules/ -> rules/index.md), a link to a file of the
    repository that is no page of the site points at the file in the repository. mkdocs checks
    the rest, and --strict fails on what does not exist."""
    root = os.path.dirname(config.config_file_path)
    here = posixpath.dirname(page.file.src_uri)

    def relink(match: re.Match[str]) -> str:
        target, anchor = match[1], match[2] or ""
        path = posixpath.normpath(posixpath.join(here, target))
        if files.get_file_from_path(path) is not None:
            return match[0]
        for name in ("index.md", "README.md") if target.endswith("/") else ():
            if files.get_file_from_path(name if path == "." else f"{path}/{name}") is not None:
                return f"]({target}{name}{anchor})"
        if not path.startswith("..") and os.path.exists(os.path.join(root, path)):
            return f"]({DOCS_URL}{path}{anchor})"
        return match[0]

    return RELATIVE_LINK.sub(relink, markdown)
