"""Every rule page in rules/ is checked against jaxlint itself.

The Example must give exactly that rule's finding, Use instead must be clean, and --fix on the
Example must produce Use instead, byte for byte, when the rule has a safe fix (otherwise --fix
must leave the Example untouched). A rule's Options section holds the entry generated from each of
its declared options (jaxlint.report.ruledocs.option_markdown), and the TOML it shows sets the option.

The pages are checked in the test process (helpers.check_in_process: the worker's analysis and the
fixer's verification without worker processes); the rules' tests (test_jx101.py, test_jx203.py,
test_jx303.py, test_jx304.py) write and verify fixes with real workers. The pages of the failures
only a worker process gives (WORKER_PAGES: a timeout, a crash) are checked by a real
`jaxlint check`; NOT_EXECUTABLE says why a page's Example cannot be checked at all. That every
rule has a page is checked by test_rule_cases.py, with its case.
"""
from __future__ import annotations

import importlib.metadata
import importlib.util
import json
import os
import re
import subprocess
import sys
from pathlib import Path

import pytest
from helpers import check_in_process

from jaxlint.config.selection import select_rules
from jaxlint.engine.results import CheckResult
from jaxlint.report.ruledocs import option_markdown, options_intro
from jaxlint.rules import Rule, all_rules

RULES_DIR = Path(__file__).resolve().parents[1] / "rules"
DOCS = sorted(RULES_DIR.glob("JX*.md"))
SECTIONS = ["What it does", "Why is this bad?", "Cost", "Example", "Use instead", "Fix safety", "Options",
            "References"]


def sections(text: str) -> dict[str, str]:
    """Level-2 heading -> the text up to the next level-2 heading."""
    parts = re.split(r"^## (.+)$", text, flags=re.MULTILINE)
    return {title.strip(): body for title, body in zip(parts[1::2], parts[2::2])}


def first_python_block(body: str) -> str:
    match = re.search(r"^```python\n(.*?)^```$", body, flags=re.MULTILINE | re.DOTALL)
    assert match is not None, "no ```python block"
    return match.group(1)


def run(path: Path, fix: bool = False) -> CheckResult:
    return check_in_process([str(path)], select_rules(None, None), fix=fix)


# Pages whose Example only a worker process can give (the in-process analysis enforces no time
# limit, and a crash would end the test process): code -> the `jaxlint check` flags to use.
# The JX902 Example sleeps for 600 s, far past the limit. JX310's builds a (4, 2) mesh: its worker
# gets 8 CPU devices from the literal mesh shape, this test process keeps its own.
# JX311's, JX312's and JX709's compile for a TPU v5e (libtpu, which the CI's older JAX may lack: then skipped).
WORKER_PAGES = {"JX902": ["--timeout", "5"], "JX903": [], "JX310": [],
                "JX311": ["--target", "tpu-v5e", "--timeout", "300"],
                "JX312": ["--target", "tpu-v5e", "--timeout", "300"],
                "JX709": ["--target", "tpu-v5e", "--timeout", "300"]}
NEEDS_LIBTPU = {"JX311", "JX312", "JX709"}
# Pages whose figures are one libtpu's (0.0.42, JAX 0.10.2).
LIBTPU_0042_FIGURES = {"JX311", "JX312"}


def skip_without_the_pages_libtpu(code: str) -> None:
    """A TPU page needs libtpu. JX311's and JX312's pages give libtpu 0.0.42's figures (JAX 0.10.2);
    libtpu 0.0.2 (JAX 0.4.35) compiles the Examples into other sizes and layouts, so the page's
    finding is not its finding."""
    if importlib.util.find_spec("libtpu") is None:
        pytest.skip("libtpu is not installed: the page's Example compiles for a TPU v5e")
    if code not in LIBTPU_0042_FIGURES:
        return
    try:
        version = importlib.metadata.version("libtpu")
    except importlib.metadata.PackageNotFoundError:
        version = ""
    if not version.startswith("0.0.42"):
        pytest.skip(f"the page's figures are libtpu 0.0.42's (JAX 0.10.2); this is libtpu {version or 'unknown'}")
# Pages whose Example no code can give, and why.
NOT_EXECUTABLE = {"JX906": "only a bug in jaxlint gives it; test_internal_error.py injects one"}
# Pages of run-time rules, whose Example only a run gives: checked with a real `jaxlint run`.
RUN_PAGES = {"JX205", "JX309"}
# Options only `pytest --jaxlint` reads: raised, the run page's Example is still reported.
TEST_ONLY_OPTIONS = {("JX309", "min-iterations-in-tests")}
IN_PROCESS = [doc for doc in DOCS
              if doc.stem not in WORKER_PAGES and doc.stem not in NOT_EXECUTABLE and doc.stem not in RUN_PAGES]


def check_with_workers(path: Path, flags: list[str]) -> tuple[set[str], int]:
    """The codes `jaxlint check` reports on ``path``, run as a user runs it, and the number of
    targets its summary says it traced."""
    ran = subprocess.run([sys.executable, "-m", "jaxlint", "check", "--output-format", "json", *flags, path.name],
                         cwd=path.parent, capture_output=True, text=True, timeout=300)
    assert ran.returncode in (0, 1), ran.stderr
    traced = re.search(r"\((\d+) targets? traced", ran.stderr)
    assert traced is not None, ran.stderr
    return {finding["code"] for finding in json.loads(ran.stdout)}, int(traced.group(1))


def test_rule_pages_exist() -> None:
    assert RULES_DIR / "JX101.md" in DOCS
    codes = {rule.code for rule in all_rules()}
    assert {doc.stem for doc in DOCS} <= codes, "a page for a rule that does not exist"


@pytest.mark.parametrize("doc", DOCS, ids=lambda doc: doc.stem)
def test_sections_in_order(doc: Path) -> None:
    text = doc.read_text(encoding="utf-8")
    [rule] = [r for r in all_rules() if r.code == doc.stem]
    assert text.startswith(f"# {rule.name} ({rule.code})\n")
    # Correctness rules (wrong answers, failures) may leave out Cost; performance rules have it.
    # Options is there exactly when the rule declares options.
    found = list(sections(text))
    expected = [s for s in SECTIONS if s != "Options" or rule.options]
    assert found in (expected, [s for s in expected if s != "Cost"]), found
    if rule.severity == "warning" and rule.code[2] in "13":
        assert "Cost" in found


@pytest.mark.parametrize("doc", IN_PROCESS, ids=lambda doc: doc.stem)
def test_example_use_instead_and_fix(doc: Path, tmp_path: Path) -> None:
    code = doc.stem
    parts = sections(doc.read_text(encoding="utf-8"))
    example, use_instead = first_python_block(parts["Example"]), first_python_block(parts["Use instead"])
    prefix = code.lower()

    example_path = tmp_path / f"{prefix}_example.py"
    example_path.write_text(example, encoding="utf-8")
    found = run(example_path)
    [rule] = [r for r in all_rules() if r.code == code]
    # A rule over the IR needs the Example traced; a trace error is reported because it is not.
    assert rule.by_pipeline or (found.skipped == [] and found.traced > 0)
    assert {f.code for f in found.findings} == {code}, [f.message for f in found.findings]

    use_instead_path = tmp_path / f"{prefix}_use_instead.py"
    use_instead_path.write_text(use_instead, encoding="utf-8")
    clean = run(use_instead_path)
    assert clean.skipped == [] and clean.traced > 0
    assert clean.findings == [], [f.message for f in clean.findings]

    fixed_path = tmp_path / f"{prefix}_fixed.py"
    fixed_path.write_text(example, encoding="utf-8")
    fixed = run(fixed_path, fix=True)
    assert fixed.fix_rejected == [], [f.fix_rejected for f in fixed.fix_rejected]
    has_safe_fix = any(f.fix is not None and f.fix.applicability == "safe" for f in found.findings)
    assert fixed_path.read_text(encoding="utf-8") == (use_instead if has_safe_fix else example)


# JX311's and JX312's Examples compile programs of several GiB for a TPU: a minute or more each.
@pytest.mark.parametrize("code", [pytest.param(code, marks=pytest.mark.slow) if code in LIBTPU_0042_FIGURES else code
                                  for code in sorted(WORKER_PAGES)])
def test_worker_page_example_and_use_instead(code: str, tmp_path: Path) -> None:
    """The Example gives exactly the page's finding in a real check; Use instead is clean and traced.
    These rules have no safe fix, so --fix has nothing to try (JX312's is shown, never applied);
    JX709's unsafe fix turns its Example into Use instead in test_jx709.py."""
    if code in NEEDS_LIBTPU:
        skip_without_the_pages_libtpu(code)
    [rule] = [r for r in all_rules() if r.code == code]
    assert rule.fix in (None, "display-only", "unsafe")
    parts = sections((RULES_DIR / f"{code}.md").read_text(encoding="utf-8"))
    example = tmp_path / "example" / f"{code.lower()}_example.py"
    use_instead = tmp_path / "use_instead" / f"{code.lower()}_use_instead.py"
    for path, section in ((example, "Example"), (use_instead, "Use instead")):
        path.parent.mkdir()
        path.write_text(first_python_block(parts[section]), encoding="utf-8")
    assert check_with_workers(example, WORKER_PAGES[code])[0] == {code}
    codes, traced = check_with_workers(use_instead, WORKER_PAGES[code])
    assert codes == set() and traced > 0


def run_codes(folder: Path, script: str) -> set[str]:
    """The codes `jaxlint run -- python SCRIPT` reports, ``script`` run in ``folder`` (its project)."""
    (folder / "example.py").write_text(script, encoding="utf-8")
    env = {k: v for k, v in os.environ.items() if k not in ("JAXLINT_OUTPUT_FORMAT", "JAXLINT_RUN")}
    ran = subprocess.run([sys.executable, "-m", "jaxlint", "run", "--no-cache", "--output-format", "json", "-o",
                          "report.json", "--", "python", "example.py"], cwd=folder, env={**env, "JAX_PLATFORMS": "cpu"},
                         capture_output=True, text=True, timeout=300)
    assert ran.returncode in (0, 1), ran.stderr
    assert "nothing was linted" not in ran.stderr, ran.stderr
    return {finding["code"] for finding in json.loads((folder / "report.json").read_text())}


@pytest.mark.parametrize("code", sorted(RUN_PAGES))
def test_run_page_example_and_use_instead(code: str, tmp_path: Path) -> None:
    """A run-time rule's Example, run by `jaxlint run`, gives exactly its finding; Use instead runs
    clean. These rules have no fix."""
    if code in NEEDS_LIBTPU and importlib.util.find_spec("libtpu") is None:
        pytest.skip("libtpu is not installed: the page's Example compiles for a TPU v5e")
    [rule] = [r for r in all_rules() if r.code == code]
    assert rule.fix is None
    parts = sections((RULES_DIR / f"{code}.md").read_text(encoding="utf-8"))
    for section, expected in (("Example", {code}), ("Use instead", set())):
        folder = tmp_path / section.replace(" ", "_")
        folder.mkdir()
        (folder / "pyproject.toml").write_text("[tool.jaxlint]\n", encoding="utf-8")
        assert run_codes(folder, first_python_block(parts[section])) == expected, section


def test_every_page_is_checked_or_says_why_not() -> None:
    assert set(WORKER_PAGES) | set(NOT_EXECUTABLE) | RUN_PAGES <= {doc.stem for doc in DOCS}
    for code in NOT_EXECUTABLE:
        example = sections((RULES_DIR / f"{code}.md").read_text(encoding="utf-8"))["Example"]
        assert "has no example to check" in " ".join(example.split()), f"{code}'s page says why"


def option_problems(rule: type[Rule], page: str) -> list[str]:
    """What the page's Options section lacks or has in excess, against the rule's declarations."""
    body = sections(page).get("Options")
    if body is None:
        return ["no Options section"] if rule.options else []
    problems = [] if options_intro(rule) in body else ["the intro differs from options_intro()"]
    documented = re.findall(r"^### `([^`]+)`$", body, flags=re.MULTILINE)
    if documented != list(rule.options):
        problems.append(f"documents {documented}, declared {list(rule.options)}")
    problems += [f"stale entry for `{name}`; expected:\n{option_markdown(rule, name)}"
                 for name in rule.options if option_markdown(rule, name) not in body]
    return problems


@pytest.mark.parametrize("rule", [r for r in all_rules() if r.options], ids=lambda rule: rule.code)
def test_options_section_documents_every_declared_option(rule: type[Rule]) -> None:
    page = RULES_DIR / f"{rule.code}.md"
    assert page.is_file(), f"{rule.code} has options and no page"
    text = page.read_text(encoding="utf-8")
    assert option_problems(rule, text) == []
    # A changed default makes the page stale.
    name, option = next(iter(rule.options.items()))
    stale = text.replace(f"{name} = {option_markdown(rule, name).splitlines()[-2].split(' = ')[1]}\n",
                         f"{name} = 7\n")
    assert stale != text and any("stale entry" in p for p in option_problems(rule, stale))
    without = text.replace(f"### `{name}`", f"### `{name}-old`")
    assert any("documents" in p for p in option_problems(rule, without))


def test_rules_without_options_have_no_options_section() -> None:
    for doc in DOCS:
        [rule] = [r for r in all_rules() if r.code == doc.stem]
        if not rule.options:
            assert "Options" not in sections(doc.read_text(encoding="utf-8")), doc.stem


@pytest.mark.parametrize("rule, name", [(r, n) for r in all_rules() for n in r.options],
                         ids=lambda value: value if isinstance(value, str) else value.code)
def test_options_toml_sets_the_option(rule: type[Rule], name: str, tmp_path: Path) -> None:
    """The page's TOML, in a pyproject.toml, with the threshold raised far above the Example's
    figures: the Example is no longer reported (unless `jaxlint run` does not read the option)."""
    assert name.startswith("min-"), "a threshold; this test raises it"
    parts = sections((RULES_DIR / f"{rule.code}.md").read_text(encoding="utf-8"))
    entry = parts["Options"].split(f"### `{name}`\n", 1)[1]
    toml = re.search(r"^```toml\n(.*?)^```$", entry, flags=re.MULTILINE | re.DOTALL).group(1)
    raised = re.sub(rf"^{name} = .*$", f"{name} = 1000000000000", toml, flags=re.MULTILINE)
    assert raised != toml and raised.startswith(f"[tool.jaxlint.rules.{rule.code}]\n")
    (tmp_path / "pyproject.toml").write_text(raised, encoding="utf-8")
    if rule.code in RUN_PAGES:
        expected = {rule.code} if (rule.code, name) in TEST_ONLY_OPTIONS else set()
        assert run_codes(tmp_path, first_python_block(parts["Example"])) == expected
        return
    example = tmp_path / f"{rule.code.lower()}_example.py"
    example.write_text(first_python_block(parts["Example"]), encoding="utf-8")
    result = check_in_process([str(example)], [rule])
    assert result.skipped == [] and result.traced > 0
    assert result.findings == [], [f.message for f in result.findings]


def cost_script(page: str) -> tuple[str, str] | None:
    """The Cost section's script and the output the page says it prints (a ```python block
    followed by a ```text block), when the page measures its figures that way."""
    body = sections(page).get("Cost", "")
    match = re.search(r"^```python\n(.*?)^```\n\n```text\n(.*?)^```$", body, flags=re.MULTILINE | re.DOTALL)
    return None if match is None else (match.group(1), match.group(2))


# The numerics pages, and the wrong-value pages whose Cost prints the wrong and the right value.
NUMERICS = [doc for doc in DOCS if doc.stem.startswith("JX7") or doc.stem in ("JX501", "JX505", "JX506", "JX507")]


@pytest.mark.parametrize("doc", [d for d in NUMERICS if d.stem not in ("JX705", "JX709")], ids=lambda doc: doc.stem)
def test_cost_script_prints_the_figures_on_the_page(doc: Path, tmp_path: Path) -> None:
    """The wrong and right values a numerics page quotes are what its script prints on the JAX
    this suite runs with (CI runs it on the oldest and the newest supported JAX). JX705's figures
    are timings: bench/bench_inverse.py measures them by hand. JX709's were measured on a TPU v5e
    chip, whose products no CPU reproduces (../shared/notes/tpu-facts.md)."""
    found = cost_script(doc.read_text(encoding="utf-8"))
    assert found is not None, "no script and output in Cost"
    script, output = found
    path = tmp_path / "cost.py"
    path.write_text(script, encoding="utf-8")
    ran = subprocess.run([sys.executable, str(path)], capture_output=True, text=True, timeout=300,
                         env={**os.environ, "JAX_PLATFORMS": "cpu"})
    assert ran.returncode == 0, ran.stderr
    assert ran.stdout == output


@pytest.mark.parametrize("doc", [d for d in NUMERICS if "--unsafe-fixes" in d.read_text(encoding="utf-8")
                                 and d.stem not in NEEDS_LIBTPU], ids=lambda doc: doc.stem)
def test_unsafe_fix_turns_the_example_into_use_instead(doc: Path, tmp_path: Path) -> None:
    parts = sections(doc.read_text(encoding="utf-8"))
    path = tmp_path / f"{doc.stem.lower()}_unsafe.py"
    path.write_text(first_python_block(parts["Example"]), encoding="utf-8")
    result = check_in_process([str(path)], select_rules([doc.stem], None), fix=True, unsafe_fixes=True)
    assert result.fix_rejected == [], [f.fix_rejected for f in result.fix_rejected]
    assert path.read_text(encoding="utf-8") == first_python_block(parts["Use instead"])
