"""The documentation names only commands and flags that exist, and its relative links resolve.

Every `jaxlint <command>` in README.md, docs/*.md and the rule pages (rules/*.md) must be a
command of `jaxlint --help`, and every flag (`--flag`, or `-x` after a command) must be in the
`--help` of the command it follows: jaxlint's subcommands, pytest (where the plugin adds
`--jaxlint`), or a script in bench/. A flag named without a command must be in one of those
helps. Commands and flags are read from code spans and from each line of code blocks (a
comment on a command's line still speaks of that command); flags also from plain prose.
Also: the files of this repository the pages name exist, and each `[tool.jaxlint]` example is a
configuration `jaxlint check` accepts.
"""
from __future__ import annotations

import functools
import os
import re
import shlex
import subprocess
import sys
from pathlib import Path

import pytest
import yaml
from helpers import with_plugin_autoload

REPO = Path(__file__).resolve().parent.parent
PAGES = [REPO / "README.md", *sorted((REPO / "docs").glob("*.md"))]
RULE_PAGES = sorted((REPO / "rules").glob("JX*.md"))
CHECKED = PAGES + RULE_PAGES

FLAG = re.compile(r"--?[A-Za-z][\w-]*")
PROSE_FLAG = re.compile(r"(?<![\w-])--[A-Za-z][\w-]*")
# Tools whose flags are theirs, not jaxlint's: their command lines are not checked.
FOREIGN = {"pip", "pip3", "ruff", "pre-commit", "git", "apt-get", "sudo", "mkdocs"}
SEPARATORS = re.compile(r"[\s\[\](){}\"'`,;|]+")
FENCE = re.compile(r"^\s*(```|~~~)")
CODE_SPAN = re.compile(r"(`+)(.+?)\1")
LINK = re.compile(r"\[(?:[^\]\\]|\\.)*\]\(([^)\s]+)\)")


def run_help(*command: str) -> str:
    # pytest's help with every installed plugin's flags, as a user's pytest has them (conftest.py
    # turns the autoload off for the suite's other sessions).
    run = subprocess.run([sys.executable, *command, "--help"], capture_output=True, text=True, cwd=REPO,
                         timeout=300, env=with_plugin_autoload(dict(os.environ)))
    assert run.returncode == 0, f"{' '.join(command)} --help: {run.stderr}"
    return run.stdout


def flags_of(help_text: str) -> set[str]:
    return {match.split("=")[0] for match in re.findall(r"(?<![\w-])--?[A-Za-z][\w-]*", help_text)}


@functools.lru_cache(maxsize=None)
def subcommands() -> tuple[str, ...]:
    usage = re.search(r"\{([\w,-]+)\}", run_help("-m", "jaxlint"))
    assert usage is not None, "no {command,...} in jaxlint --help"
    return tuple(usage.group(1).split(","))


@functools.lru_cache(maxsize=None)
def known_flags(context: str) -> frozenset[str]:
    """The flags of one context: "jaxlint" (the main help), "jaxlint <command>", "pytest", a
    script path, or "any" (jaxlint's and pytest's together)."""
    if context == "jaxlint":
        return frozenset(flags_of(run_help("-m", "jaxlint")))
    if context.startswith("jaxlint "):
        return frozenset(flags_of(run_help("-m", "jaxlint", context.split()[1])))
    if context == "pytest":
        return frozenset(flags_of(run_help("-m", "pytest", "-p", "no:cacheprovider")))
    if context == "any":
        every = set(known_flags("jaxlint")) | known_flags("pytest")
        for command in subcommands():
            every |= known_flags(f"jaxlint {command}")
        return frozenset(every)
    assert (REPO / context).is_file(), f"{context} does not exist"
    return frozenset(flags_of(run_help(context)))


def split(text: str) -> tuple[list[str], list[str]]:
    """(the lines of code blocks, the paragraphs outside them, each joined into one line so that a
    code span or link broken over two lines stays whole)."""
    code: list[str] = []
    paragraphs: list[list[str]] = [[]]
    fence = None
    for line in text.splitlines():
        marker = FENCE.match(line)
        if marker and (fence is None or marker.group(1) == fence):
            fence = None if fence else marker.group(1)
            paragraphs.append([])
        elif fence:
            code.append(line)
        elif line.strip():
            paragraphs[-1].append(line.strip())
        else:
            paragraphs.append([])
    return code, [" ".join(lines) for lines in paragraphs if lines]


def units(text: str) -> tuple[list[str], list[str]]:
    """(command units, prose): each line of a code block and each code span is a unit; prose is
    the text outside code with the spans removed."""
    code, paragraphs = split(text)
    code += [span.group(2) for paragraph in paragraphs for span in CODE_SPAN.finditer(paragraph)]
    return code, [CODE_SPAN.sub(" ", paragraph) for paragraph in paragraphs]


def problems_in_unit(unit: str) -> list[str]:
    """What is wrong with the commands and flags of one code line or span."""
    unit = re.sub(r"\bjaxlint\[", "jaxlint-package[", unit)  # `pip install "jaxlint[tpu]"`: a package, no command
    tokens = [t for t in SEPARATORS.split(unit) if t]
    problems: list[str] = []
    context, comment, i = "any", False, 0
    while i < len(tokens):
        token, after = tokens[i], tokens[i + 1] if i + 1 < len(tokens) else None
        i += 1
        if token.startswith("#"):  # a comment still speaks of its line's command, names none
            comment = True
            continue
        if token in ("--", "&&"):
            context = "any"
            continue
        if not comment:
            if token == "python" and after == "-m" and i + 1 < len(tokens):
                token, after, i = tokens[i + 1], tokens[i + 2] if i + 2 < len(tokens) else None, i + 2
            elif token == "python" and after is not None and after.endswith(".py"):
                context, i = (after if after.startswith("bench/") else "foreign"), i + 1
                continue
            if token == "jaxlint":
                if after in subcommands():
                    context, i = f"jaxlint {after}", i + 1
                elif after is not None and after.startswith("-"):
                    context = "jaxlint"
                elif after is not None and re.fullmatch(r"[a-z][a-z-]*", after):
                    problems.append(f"`jaxlint {after}`: no such command in `jaxlint --help`")
                continue
            if token == "pytest":
                context = "pytest"
                continue
            if token in FOREIGN:
                context = "foreign"
                continue
        flag = FLAG.match(token)
        if flag is None or context == "foreign" or (context == "any" and not token.startswith("--")):
            continue
        if flag.group(0) not in known_flags(context):
            where = "jaxlint or pytest" if context == "any" else context
            problems.append(f"{flag.group(0)}: not in the --help of {where} (in `{unit.strip()}`)")
    return problems


@pytest.mark.parametrize("page", CHECKED, ids=lambda page: str(page.relative_to(REPO)))
def test_commands_and_flags_exist(page: Path) -> None:
    code, prose = units(page.read_text(encoding="utf-8"))
    problems = [p for unit in code for p in problems_in_unit(unit)]
    problems += [f"{flag}: not in the --help of jaxlint or pytest (in prose: {line.strip()!r})"
                 for line in prose for flag in PROSE_FLAG.findall(line) if flag not in known_flags("any")]
    assert problems == []


def slug(heading: str) -> str:
    """GitHub's anchor for a heading: lower case, punctuation dropped, spaces as hyphens."""
    text = CODE_SPAN.sub(lambda m: m.group(2), heading.strip().lower())
    return re.sub(r"[^\w\- ]", "", text).replace(" ", "-")


def anchors(page: Path) -> set[str]:
    found: set[str] = set()
    fence = None
    for line in page.read_text(encoding="utf-8").splitlines():
        marker = FENCE.match(line)
        if marker and (fence is None or marker.group(1) == fence):
            fence = None if fence else marker.group(1)
            continue
        heading = re.match(r"#{1,6}\s+(.+?)\s*#*$", line)
        if heading and not fence:
            base = slug(heading.group(1))
            name, n = base, 1
            while name in found:  # GitHub numbers repeated headings: name, name-1, ...
                name, n = f"{base}-{n}", n + 1
            found.add(name)
    return found


def link_problems(page: Path) -> list[str]:
    """Relative links (outside code) whose file, or whose heading anchor, does not exist."""
    problems = []
    for line in units(page.read_text(encoding="utf-8"))[1]:
        for target in LINK.findall(line):
            if re.match(r"[a-z][a-z0-9+.-]*:", target):  # https:, mailto:
                continue
            path, _, anchor = target.partition("#")
            resolved = (page.parent / path).resolve() if path else page
            if not resolved.exists():
                problems.append(f"{target}: no such file")
            elif anchor and resolved.suffix == ".md" and anchor not in anchors(resolved):
                problems.append(f"{target}: no heading with that anchor")
    return problems


@pytest.mark.parametrize("page", CHECKED, ids=lambda page: str(page.relative_to(REPO)))
def test_relative_links_resolve(page: Path) -> None:
    assert link_problems(page) == []


REPO_PATH = re.compile(r"^(?:jaxlint|tests|bench|rules|examples|docs|\.ci)/[\w./-]*$")


@pytest.mark.parametrize("page", PAGES, ids=lambda page: str(page.relative_to(REPO)))
def test_repository_paths_named_in_prose_exist(page: Path) -> None:
    """A code span in prose naming a file of this repository (`tests/test_layout.py`) names one
    that exists; `JXnnn` stands for any rule. Paths in code blocks are the user's project's."""
    prose_spans = [span.group(2) for line in split(page.read_text(encoding="utf-8"))[1]
                   for span in CODE_SPAN.finditer(line)]
    missing = [name for name in prose_spans
               if REPO_PATH.match(name) and "nnn" not in name and not (REPO / name).exists()]
    assert missing == []


def test_the_check_finds_what_does_not_exist() -> None:
    """The checks above can fail: a flag or command that does not exist, or a flag of another
    command, is reported; a broken link or anchor too."""
    assert problems_in_unit("jaxlint check --fix --no-such-flag") == [
        "--no-such-flag: not in the --help of jaxlint check (in `jaxlint check --fix --no-such-flag`)"]
    assert problems_in_unit("jaxlint check --all")  # a flag of `jaxlint rule`, not of check
    assert problems_in_unit("jaxlint lint examples/") == ["`jaxlint lint`: no such command in `jaxlint --help`"]
    assert problems_in_unit("pytest --jaxlint --jaxlint-nope")
    assert problems_in_unit("--no-such-flag")
    assert problems_in_unit("jaxlint record [--config FILE] -- pytest --jaxlint tests/") == []
    assert problems_in_unit("jaxlint record -- pytest --no-such-flag")
    assert problems_in_unit("pip install -e . && jaxlint check --fix examples/") == []
    assert problems_in_unit("ruff check --no-such-ruff-flag") == []


def test_link_check_reports_missing_pages_and_anchors(tmp_path: Path) -> None:
    (tmp_path / "other.md").write_text("# Other page\n\n## `pytest --jaxlint`\n", encoding="utf-8")
    page = tmp_path / "page.md"
    page.write_text("# Title\n\n[a](missing.md) [b](#title) [c](#nope) `[d](x.md)`\n"
                    "[e](other.md#pytest---jaxlint) [f](other.md#other) [g](https://example.com/x.md)\n",
                    encoding="utf-8")
    assert link_problems(page) == ["missing.md: no such file", "#nope: no heading with that anchor",
                                   "other.md#other: no heading with that anchor"]


def configuration_examples() -> list[tuple[Path, str]]:
    """Every ```toml block of the pages that is a `[tool.jaxlint]` configuration."""
    found = []
    for page in PAGES:
        text = page.read_text(encoding="utf-8")
        found += [(page, block) for block in re.findall(r"^```toml\n(.*?)^```$", text, flags=re.MULTILINE | re.DOTALL)
                  if block.startswith("[tool.jaxlint]")]
    assert found, "no configuration example found"
    return found


@pytest.mark.parametrize("page, toml", configuration_examples(),
                         ids=[f"{page.relative_to(REPO)}-{n}" for n, (page, _) in enumerate(configuration_examples())])
def test_configuration_examples_are_valid(page: Path, toml: str, tmp_path: Path) -> None:
    """`jaxlint check --show-settings` accepts each configuration the docs show (the examples
    files they name are created, empty)."""
    (tmp_path / "pyproject.toml").write_text(toml, encoding="utf-8")
    for name in re.findall(r'^examples = \[(.*)\]', toml, flags=re.MULTILINE):
        for path in re.findall(r'"([^"]+)"', name):
            (tmp_path / path).parent.mkdir(parents=True, exist_ok=True)
            (tmp_path / path).touch()
    run = subprocess.run([sys.executable, "-m", "jaxlint", "check", "--show-settings"], capture_output=True,
                         text=True, cwd=tmp_path, timeout=300)
    assert run.returncode == 0, run.stderr


# A requirement that pip would take from PyPI, where `jaxlint` is another project: the bare name,
# with or without extras (not `jaxlint @ git+...`, nor a path such as `.` or `".[server]"`).
PYPI_JAXLINT = re.compile(r"jaxlint(\[[\w,-]*\])?")


def pypi_installs(unit: str) -> list[str]:
    """The requirements of the `pip install` commands in one code line or span that name jaxlint
    as PyPI has it."""
    found = []
    for command in re.findall(r"pip install\b([^#&;|]*)", unit):
        try:
            words = shlex.split(command)
        except ValueError:  # an unbalanced quote in a span cut short
            words = command.split()
        found += [word for word in words if PYPI_JAXLINT.fullmatch(word.strip("'\")"))]
    return found


@pytest.mark.parametrize("page", PAGES, ids=lambda page: str(page.relative_to(REPO)))
def test_jaxlint_is_installed_from_its_repository(page: Path) -> None:
    code, _ = units(page.read_text(encoding="utf-8"))
    assert [unit.strip() for unit in code if pypi_installs(unit)] == []


def test_the_install_check_tells_pypi_from_the_repository() -> None:
    assert pypi_installs("pip install 'jaxlint[server]')") == ["jaxlint[server])"]
    assert pypi_installs("pip install -e . jaxlint  # install the project too") == ["jaxlint"]
    assert pypi_installs('pip install -e ".[server]"') == []
    assert pypi_installs('pip install "jaxlint[server] @ git+https://example.com/jaxlint"') == []
    assert pypi_installs("pip install -e . && jaxlint check examples/") == []


def test_pre_commit_snippets_are_whole_configurations() -> None:
    """Each pre-commit example in docs/ci.md is a `.pre-commit-config.yaml` as written: `repos:`
    first, each repository with its hooks."""
    blocks = re.findall(r"^```yaml\n(.*?)^```", (REPO / "docs" / "ci.md").read_text(encoding="utf-8"),
                        flags=re.MULTILINE | re.DOTALL)
    configs = [yaml.safe_load(block) for block in blocks if "repo:" in block]
    assert len(configs) == 3
    for config in configs:
        assert isinstance(config, dict) and list(config) == ["repos"], config
        assert all(entry["repo"] and entry["hooks"][0]["id"] == "jaxlint" for entry in config["repos"])
