"""`jaxlint rule`: each rule's page on the command line, as text or JSON; the pages ship inside the
package; each rule's declared fix applicability agrees with its page and with its findings."""
from __future__ import annotations

import json
import os
import pty
import re
import shutil
import subprocess
import sys
import zipfile
from pathlib import Path

import pytest

from jaxlint.config.selection import select_rules
from jaxlint.engine.check import check
from jaxlint.report.ruledocs import TOML_TYPES
from jaxlint.rules import all_rules

REPO = Path(__file__).resolve().parent.parent
PAGES = sorted((REPO / "rules").glob("JX*.md"))


def jaxlint(*args: str, cwd: Path = REPO, env: dict[str, str] | None = None) -> subprocess.CompletedProcess:
    return subprocess.run([sys.executable, "-m", "jaxlint", *args], cwd=cwd, capture_output=True,
                          text=True, timeout=300, env=env)


def on_a_terminal(*args: str, env: dict[str, str]) -> str:
    """What `jaxlint` prints when its stdout is a terminal (a pseudo-terminal here)."""
    leader, follower = pty.openpty()
    process = subprocess.Popen([sys.executable, "-m", "jaxlint", *args], stdout=follower,
                               stderr=subprocess.PIPE, env=env, cwd=REPO)
    os.close(follower)
    output = b""
    while True:
        try:
            chunk = os.read(leader, 65536)
        except OSError:  # EIO: the process closed the terminal
            break
        if not chunk:
            break
        output += chunk
    os.close(leader)
    assert process.wait(timeout=300) == 0, process.stderr.read()
    return output.decode("utf-8").replace("\r\n", "\n")


def section(text: str, title: str) -> str:
    return text.split(f"\n## {title}\n", 1)[1].split("\n## ", 1)[0]


def test_rule_prints_the_page_as_plain_text_when_piped() -> None:
    by_code, by_name = jaxlint("rule", "JX101"), jaxlint("rule", "vmap-unbatched-output")
    assert by_code.returncode == by_name.returncode == 0
    assert by_code.stdout == by_name.stdout
    text = by_code.stdout
    assert text.startswith("vmap-unbatched-output (JX101)\n=============================\n\n"
                           "Severity: warning. Fix: safe (`--fix` applies it).\n")
    assert "\nFix safety\n----------\n" in text and "## " not in text
    assert "```" not in text and "\x1b[" not in text
    # Code blocks are indented: the Example's function, four spaces in.
    assert "\n    def step(scale, x):\n" in text
    # Links show their target.
    assert "[`jax.vmap`](" not in text and "`jax.vmap` (https://docs.jax.dev/" in text


def test_rule_on_a_terminal_is_styled_unless_no_color() -> None:
    env = {k: v for k, v in os.environ.items() if k != "NO_COLOR"}
    styled = on_a_terminal("rule", "JX501", env=env)
    assert styled.startswith("\x1b[1m\x1b[4mwhere-nan-gradient (JX501)\x1b[0m\n")
    assert "\n\x1b[1mFix safety\x1b[0m\n" in styled
    plain = on_a_terminal("rule", "JX501", env=dict(env, NO_COLOR="1"))
    assert "\x1b[" not in plain and plain == jaxlint("rule", "JX501").stdout


def test_rule_json_has_the_metadata_and_the_page() -> None:
    run = jaxlint("rule", "where-nan-gradient", "--output-format", "json")
    assert run.returncode == 0, run.stderr
    data = json.loads(run.stdout)
    assert data == {"code": "JX501", "name": "where-nan-gradient", "severity": "error", "fix": "unsafe",
                    "summary": data["summary"], "options": [],
                    "doc": (REPO / "rules" / "JX501.md").read_text(encoding="utf-8")}
    assert data["summary"].endswith(".")


def test_rule_all_covers_every_rule_in_text_and_json() -> None:
    rules = all_rules()
    listed = json.loads(jaxlint("rule", "--all", "--output-format", "json").stdout)
    assert [entry["code"] for entry in listed] == [r.code for r in rules]
    for rule, entry in zip(rules, listed):
        assert (entry["name"], entry["severity"], entry["fix"], entry["summary"]) == \
            (rule.name, rule.severity, rule.fix, rule.summary)
        assert entry["doc"].startswith(f"# {rule.name} ({rule.code})\n")
        assert "\n## Fix safety\n" in entry["doc"]
    text = jaxlint("rule", "--all").stdout
    for rule in rules:
        assert f"\n{rule.name} ({rule.code})\n" in "\n" + text


def test_rule_json_lists_each_declared_option() -> None:
    listed = json.loads(jaxlint("rule", "--all", "--output-format", "json").stdout)
    by_code = {r.code: r for r in all_rules()}
    assert {e["code"] for e in listed if e["options"]} == {c for c, r in by_code.items() if r.options} >= \
        {"JX201", "JX202", "JX301", "JX302"}
    for entry in listed:
        declared = by_code[entry["code"]].options
        assert entry["options"] == [{"name": name, "type": TOML_TYPES[o.type], "default": o.default,
                                     "description": o.description, "minimum": o.minimum}
                                    for name, o in declared.items()]
    [jx202] = [e for e in listed if e["code"] == "JX202"]
    assert [(o["name"], o["type"], type(o["default"])) for o in jx202["options"]] == \
        [("min-equations", "integer", int), ("min-repeats", "integer", int)]
    [jx201] = [e for e in listed if e["code"] == "JX201"]
    assert jx201["options"][0]["type"] == "float" and isinstance(jx201["options"][0]["default"], float)


def test_rule_text_shows_the_options_and_their_toml() -> None:
    run = jaxlint("rule", "python-loop-unrolled")
    assert run.returncode == 0, run.stderr
    options = section(run.stdout.replace("\nOptions\n-------\n", "\n## Options\n", 1), "Options")
    rule = next(r for r in all_rules() if r.code == "JX202")
    for name, option in rule.options.items():
        assert f"\n`{name}`\n" in options  # its heading
        assert f"\n    [tool.jaxlint.rules.JX202]\n    {name} = {option.default}\n" in options


def test_analysis_failures_print_their_pages() -> None:
    run = jaxlint("rule", "analysis-timeout")
    assert run.returncode == 0
    assert run.stdout.startswith("analysis-timeout (JX902)\n")
    page = (REPO / "rules" / "JX902.md").read_text(encoding="utf-8")
    assert "\nExample\n-------\n" in run.stdout and "    time.sleep(600)" in run.stdout
    assert run.stdout.count("\n") > page.count("\n")  # the whole page, headings underlined


@pytest.mark.parametrize("query, expected", [
    # JX709, JX310 and JX309 rank above JX103 by difflib's ratio
    ("JX109", "unknown rule 'JX109'; did you mean JX709 (bf16-matmul-before-solve), "
              "JX310 (involuntary-full-rematerialization), JX309 (host-sync-in-loop)?"),
    ("vmap-unbatchd-output", "did you mean JX101 (vmap-unbatched-output)?"),
    # No pipeline code (JX906 internal-error) for a number it is no typo of.
    ("JX999", "unknown rule 'JX999'; did you mean JX709 (bf16-matmul-before-solve), JX309 (host-sync-in-loop)?"),
    ("JX1", "'JX1' is a prefix of JX101, JX102, JX103: name one rule"),
    ("no-such-thing-at-all", "unknown rule 'no-such-thing-at-all'; `jaxlint rules` lists them"),
])
def test_unknown_rule_is_a_usage_error_with_a_close_match(query: str, expected: str) -> None:
    run = jaxlint("rule", query)
    assert run.returncode == 2 and run.stdout == ""
    assert expected in run.stderr and "Traceback" not in run.stderr


def test_rule_needs_exactly_one_rule_or_all() -> None:
    for args in (["rule"], ["rule", "JX101", "--all"]):
        run = jaxlint(*args)
        assert run.returncode == 2 and "give one rule (code or name), or --all" in run.stderr


def test_rules_list_still_works() -> None:
    run = jaxlint("rules")
    assert run.returncode == 0
    assert [line.split()[0] for line in run.stdout.splitlines()] == [r.code for r in all_rules()]


@pytest.mark.parametrize("page", PAGES, ids=lambda page: page.stem)
def test_fix_safety_section_agrees_with_the_declared_fix(page: Path) -> None:
    [rule] = [r for r in all_rules() if r.code == page.stem]
    fix_safety = section(page.read_text(encoding="utf-8"), "Fix safety")
    if rule.fix is None:
        assert re.search(r"\bno (automatic )?fix\b", fix_safety, flags=re.IGNORECASE), fix_safety
    else:
        assert re.search(rf"(?<![-\w]){rule.fix}\b", fix_safety), (rule.fix, fix_safety)
        if rule.fix == "safe":
            assert "unsafe" not in fix_safety and "display-only" not in fix_safety


TPU_TARGET_RULES = {"JX312", "JX709"}


def test_findings_carry_the_declared_fix(tmp_path: Path) -> None:
    """Every page's Example, checked in one run: a rule's fixes have its declared applicability."""
    for page in PAGES:
        if page.stem.startswith("JX9"):  # no fix; JX902's and JX903's Examples hang or kill a worker
            continue
        example = re.search(r"```python\n(.*?)```", section(page.read_text(encoding="utf-8"), "Example"),
                            flags=re.DOTALL).group(1)
        (tmp_path / f"{page.stem.lower()}_example.py").write_text(example, encoding="utf-8")
    result = check([str(tmp_path)], select_rules(None, None))
    by_code = {r.code: r for r in all_rules()}
    seen_fixes = set()
    for finding in result.findings:
        declared = by_code[finding.code].fix
        if finding.fix is not None:
            assert finding.fix.applicability == declared, (finding.code, finding.fix)
            seen_fixes.add(finding.code)
    # Each rule that declares a fix offers it on its own Example; the TPU target's rules report only
    # with --target tpu-v5e (test_jx312.py and test_jx709.py check their fixes there).
    assert seen_fixes == {r.code for r in all_rules() if r.fix is not None and r.code not in TPU_TARGET_RULES
                          and (REPO / "rules" / f"{r.code}.md").exists()}


def _snapshot(destination: Path) -> Path:
    """The files a build needs, copied from this checkout (jaxlint/docs stays a symlink)."""
    destination.mkdir()
    for name in ("pyproject.toml", "README.md"):
        shutil.copy(REPO / name, destination / name)
    ignore = shutil.ignore_patterns("__pycache__", "*.pyc")
    shutil.copytree(REPO / "jaxlint", destination / "jaxlint", symlinks=True, ignore=ignore)
    shutil.copytree(REPO / "rules", destination / "rules", ignore=ignore)
    return destination


@pytest.mark.slow
@pytest.mark.network  # pip fetches the build backend (setuptools) into an isolated environment
def test_wheel_ships_the_pages_and_rule_works_from_it(tmp_path: Path) -> None:
    source = _snapshot(tmp_path / "src")
    assert (source / "jaxlint" / "docs").is_symlink()
    build = subprocess.run([sys.executable, "-m", "pip", "wheel", ".", "--no-deps", "-w", str(tmp_path / "dist")],
                           cwd=source, capture_output=True, text=True, timeout=600)
    assert build.returncode == 0, build.stdout + build.stderr
    [wheel] = (tmp_path / "dist").glob("jaxlint-*.whl")
    with zipfile.ZipFile(wheel) as archive:
        shipped = {Path(n).name: archive.read(n) for n in archive.namelist() if n.startswith("jaxlint/docs/")}
        shipped_catalog = archive.read("jaxlint/rules/catalog.json")
    assert shipped == {page.name: page.read_bytes() for page in PAGES}
    assert shipped_catalog == (REPO / "jaxlint" / "rules" / "catalog.json").read_bytes()  # what a warm run reads

    # A non-editable install of that wheel, run away from this checkout.
    site = tmp_path / "site"
    install = subprocess.run([sys.executable, "-m", "pip", "install", "--no-deps", "--target", str(site), str(wheel)],
                             capture_output=True, text=True, timeout=600)
    assert install.returncode == 0, install.stdout + install.stderr
    env = dict(os.environ, PYTHONPATH=str(site))
    where = subprocess.run([sys.executable, "-c", "import jaxlint; print(jaxlint.__file__)"], cwd=tmp_path,
                           env=env, capture_output=True, text=True, timeout=60)
    assert where.stdout.strip() == str(site / "jaxlint" / "__init__.py")
    run = jaxlint("rule", "JX101", cwd=tmp_path, env=env)
    assert run.returncode == 0, run.stderr
    assert run.stdout == jaxlint("rule", "JX101").stdout
    listed = json.loads(jaxlint("rule", "--all", "--output-format", "json", cwd=tmp_path, env=env).stdout)
    assert {e["code"]: e["doc"] for e in listed if e["code"] in {p.stem for p in PAGES}} == \
        {page.stem: page.read_text(encoding="utf-8") for page in PAGES}
