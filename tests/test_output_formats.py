"""Every --output-format, -o, JAXLINT_OUTPUT_FORMAT and --statistics through the real CLI.

The project: the founding example (JX101, warning, safe fix) twice, once under a file name with
``,``, ``:`` and ``%`` (escaped in GitHub's workflow commands); a discarded update spanning three
lines (JX504, error, display-only fix, a message with newlines); and two identical discarded
updates in one file (same message and line text: GitLab fingerprints must still differ).
"""
from __future__ import annotations

import json
import os
import re
import shutil
import subprocess
import sys
import xml.etree.ElementTree as ET
from pathlib import Path

import jsonschema
import pytest

from jaxlint.config.keys import OUTPUT_FORMATS

REPO = Path(__file__).resolve().parent.parent
SARIF_SCHEMA = Path(__file__).resolve().parent / "data" / "sarif-schema-2.1.0.json"
ODD_NAME = "odd,name:100%.py"
UPDATES = """\
import jax
import jax.numpy as jnp


@jax.jit
def reset_first(x):
    x.at[0].set(
        0.0
    )
    return x


reset_first(jnp.ones(3))
"""
TWICE = """\
import jax
import jax.numpy as jnp


@jax.jit
def first(x):
    x.at[0].set(0.0)
    return x


@jax.jit
def second(x):
    x.at[0].set(0.0)
    return x


first(jnp.ones(3))
second(jnp.ones(3))
"""


def jaxlint(*args: str, cwd: Path, env: dict[str, str] | None = None) -> subprocess.CompletedProcess:
    environment = {k: v for k, v in os.environ.items()
                   if k not in ("JAXLINT_OUTPUT_FORMAT", "GITHUB_WORKSPACE", "CI_PROJECT_DIR")}
    environment.update(env or {})
    return subprocess.run([sys.executable, "-m", "jaxlint", *args], cwd=cwd, capture_output=True,
                          text=True, timeout=600, env=environment)


def make_project(folder: Path) -> Path:
    folder.mkdir(parents=True, exist_ok=True)
    shutil.copy(REPO / "examples" / "founding.py", folder / "founding.py")
    shutil.copy(REPO / "examples" / "founding.py", folder / ODD_NAME)
    (folder / "updates.py").write_text(UPDATES)
    (folder / "twice.py").write_text(TWICE)
    return folder


@pytest.fixture(scope="module")
def project(tmp_path_factory: pytest.TempPathFactory) -> Path:
    return make_project(tmp_path_factory.mktemp("formats") / "project")


_runs: dict[tuple, subprocess.CompletedProcess] = {}


def run_format(project: Path, name: str) -> subprocess.CompletedProcess:
    """One run per format for the whole module (each imports JAX in its workers)."""
    key = (project, name)
    if key not in _runs:
        _runs[key] = jaxlint("check", "--output-format", name, ".", cwd=project)
        assert _runs[key].returncode == 1, _runs[key].stderr
    return _runs[key]


def test_full_is_the_default_with_source_and_fix_title(project: Path) -> None:
    run = jaxlint("check", ".", cwd=project)
    assert run.returncode == 1, run.stderr
    blocks = run.stdout.split("\n\n")
    founding = next(b for b in blocks if b.startswith("founding.py:13:12: JX101 [*] vmap output [0]"))
    assert founding.splitlines()[1:] == [
        "   |",
        "13 |     x, y = jax.vmap(blackbox_function, in_axes=(None, 0))(x, y)",
        "   |            " + "^" * 52,
        "   |",
        "   = help: Add out_axes=(None, 0) and use `x` directly",
    ]
    # A multi-line message is one header line; the display-only fix says it is not applied.
    update = next(b for b in blocks if b.startswith("updates.py:7:5: JX504 the result of `x.at[0].set( 0.0 )`"))
    assert "\n7 |     x.at[0].set(\n" in update
    assert "  = help: assign the result to `x`" in update and "  = note: this fix is shown, not applied" in update
    assert "5 findings" in run.stderr and "5 findings" not in run.stdout
    # `text`, the format's earlier name, is the same format.
    assert jaxlint("check", "--output-format", "text", ".", cwd=project).stdout == run.stdout
    assert run_format(project, "full").stdout == run.stdout


def test_concise_is_one_line_per_finding(project: Path) -> None:
    lines = run_format(project, "concise").stdout.splitlines()
    assert len(lines) == 5
    assert all(re.fullmatch(r"\S.*:\d+:\d+: JX\d{3}( \[\*\])? .+", line) for line in lines), lines
    assert lines[0].startswith("founding.py:13:12: JX101 [*] ")
    assert "updates.py:7:5: JX504 the result of `x.at[0].set( 0.0 )` is discarded" in lines[4]


def test_json_and_json_lines_carry_the_doc_url(project: Path) -> None:
    findings = json.loads(run_format(project, "json").stdout)
    lines = run_format(project, "json-lines").stdout.splitlines()
    assert [json.loads(line) for line in lines] == findings
    assert len(findings) == 5
    for finding in findings:
        assert set(finding) == {"code", "name", "message", "severity", "filename", "location",
                                "end_location", "url", "fix", "cost"}
        assert finding["url"] == f"https://github.com/jaxlint/jaxlint/blob/main/rules/{finding['code']}.md"
    update = next(f for f in findings if f["filename"].endswith("updates.py"))
    assert update["location"] == {"row": 7, "column": 5} and update["end_location"] == {"row": 9, "column": 6}
    assert update["severity"] == "error" and update["fix"]["applicability"] == "display-only"


def test_sarif_validates_against_the_official_schema(project: Path) -> None:
    log = json.loads(run_format(project, "sarif").stdout)
    schema = json.loads(SARIF_SCHEMA.read_text(encoding="utf-8"))
    jsonschema.validators.validator_for(schema)(schema).validate(log)
    [run] = log["runs"]
    driver = run["tool"]["driver"]
    assert driver["name"] == "jaxlint" and driver["version"] and driver["informationUri"].startswith("https://")
    assert [rule["id"] for rule in driver["rules"]] == ["JX101", "JX504"]
    jx101 = driver["rules"][0]
    assert jx101["name"] == "vmap-unbatched-output"
    assert jx101["helpUri"] == "https://github.com/jaxlint/jaxlint/blob/main/rules/JX101.md"
    assert jx101["help"]["markdown"] == (REPO / "rules" / "JX101.md").read_text(encoding="utf-8")
    assert jx101["fullDescription"]["text"].startswith("Checks for outputs of a `jax.vmap` call")
    assert jx101["defaultConfiguration"]["level"] == "warning"
    assert driver["rules"][1]["defaultConfiguration"]["level"] == "error"

    results = run["results"]
    assert len(results) == 5
    founding = next(r for r in results
                    if r["locations"][0]["physicalLocation"]["artifactLocation"]["uri"] == "founding.py")
    assert founding["ruleId"] == "JX101" and founding["level"] == "warning"
    assert founding["locations"][0]["physicalLocation"]["region"] == {
        "startLine": 13, "startColumn": 12, "endLine": 13, "endColumn": 64}
    [fix] = founding["fixes"]
    [change] = fix["artifactChanges"]
    assert fix["description"]["text"] == "Add out_axes=(None, 0) and use `x` directly"
    assert change["replacements"] == [
        {"deletedRegion": {"startLine": 13, "startColumn": 57, "endLine": 13, "endColumn": 57},
         "insertedContent": {"text": ", out_axes=(None, 0)"}},
        {"deletedRegion": {"startLine": 14, "startColumn": 12, "endLine": 14, "endColumn": 16},
         "insertedContent": {"text": "x"}},
    ]
    # Applying the replacements to the file gives what --fix writes.
    text = (project / "founding.py").read_text().splitlines(keepends=True)
    for replacement in reversed(change["replacements"]):
        region = replacement["deletedRegion"]
        line = text[region["startLine"] - 1]
        text[region["startLine"] - 1] = (line[:region["startColumn"] - 1] + replacement["insertedContent"]["text"]
                                         + line[region["endColumn"] - 1:])
    assert "out_axes=(None, 0))(x, y)\n    return x, y\n" in "".join(text)
    odd = [r for r in results if r["locations"][0]["physicalLocation"]["artifactLocation"]["uri"] != "founding.py"
           and r["ruleId"] == "JX101"]
    assert odd[0]["locations"][0]["physicalLocation"]["artifactLocation"]["uri"] == "odd%2Cname%3A100%25.py"
    update = next(r for r in results if r["ruleId"] == "JX504"
                  and r["locations"][0]["physicalLocation"]["artifactLocation"]["uri"] == "updates.py")
    assert update["level"] == "error"
    assert update["locations"][0]["physicalLocation"]["region"] == {
        "startLine": 7, "startColumn": 5, "endLine": 9, "endColumn": 6}


def test_sarif_without_findings_is_valid(tmp_path: Path) -> None:
    (tmp_path / "plain.py").write_text("x = 1\n")
    run = jaxlint("check", "--output-format", "sarif", ".", cwd=tmp_path)
    assert run.returncode == 0, run.stderr
    log = json.loads(run.stdout)
    schema = json.loads(SARIF_SCHEMA.read_text(encoding="utf-8"))
    jsonschema.validators.validator_for(schema)(schema).validate(log)
    assert log["runs"][0]["results"] == [] and log["runs"][0]["tool"]["driver"]["rules"] == []


def test_the_schema_rejects_what_sarif_forbids() -> None:
    """The stored schema is the real one: it refuses a misspelled property and a bad level."""
    schema = json.loads(SARIF_SCHEMA.read_text(encoding="utf-8"))
    validator = jsonschema.validators.validator_for(schema)(schema)
    good = {"version": "2.1.0", "runs": [{"tool": {"driver": {"name": "x"}}, "results": [
        {"message": {"text": "m"}, "ruleId": "R1", "level": "warning"}]}]}
    assert validator.is_valid(good)
    assert not validator.is_valid({**good, "runs": [{"tool": {"driver": {"name": "x", "information_uri": "u"}}}]})
    bad_level = json.loads(json.dumps(good))
    bad_level["runs"][0]["results"][0]["level"] = "fatal"
    assert not validator.is_valid(bad_level)


GITHUB = re.compile(r"::(error|warning|notice) title=jaxlint \((JX\d{3})\),file=([^,:]+),line=(\d+)"
                    r"(?:,col=(\d+))?,endLine=(\d+)(?:,endColumn=(\d+))?::([^\r\n]+)")


def test_github_workflow_commands(project: Path) -> None:
    lines = run_format(project, "github").stdout.splitlines()
    assert len(lines) == 5
    matches = [GITHUB.fullmatch(line) for line in lines]
    assert all(matches), lines
    by_file = {}
    for match in matches:
        by_file.setdefault(match.group(3), []).append(match)
    founding = by_file["founding.py"][0]
    assert founding.group(1, 2, 4, 5, 6, 7) == ("warning", "JX101", "13", "12", "13", "64")
    assert founding.group(8).startswith("founding.py:13:12: JX101 vmap output [0]")
    # ',' ':' '%' are escaped in the file property; the message keeps ':' but escapes '%'.
    odd = by_file["odd%2Cname%3A100%25.py"][0]
    assert odd.group(8).startswith("odd,name:100%25.py:13:12: JX101 ")
    # Multi-line span: no columns; newlines in the message escaped.
    update = by_file["updates.py"][0]
    assert update.group(1, 2, 4, 5, 6, 7) == ("error", "JX504", "7", None, "9", None)
    assert "`x.at[0].set(%0A        0.0%0A    )`" in update.group(8)


def test_github_paths_are_relative_to_the_workspace(project: Path) -> None:
    run = jaxlint("check", "--output-format", "github", "--select", "JX504", "updates.py", cwd=project,
                  env={"GITHUB_WORKSPACE": str(project.parent)})
    assert f",file={project.name}/updates.py,line=7," in run.stdout


def test_junit_is_valid_xml_one_testcase_per_finding(project: Path) -> None:
    root = ET.fromstring(run_format(project, "junit").stdout)
    assert root.tag == "testsuites" and root.get("tests") == "5" and root.get("failures") == "5"
    suites = {suite.get("name"): suite for suite in root.findall("testsuite")}
    assert set(suites) == {"founding.py", ODD_NAME, "updates.py", "twice.py"}
    assert suites["twice.py"].get("tests") == "2" and len(suites["twice.py"].findall("testcase")) == 2
    [case] = suites["updates.py"].findall("testcase")
    assert case.get("name") == "org.jaxlint.JX504" and case.get("classname") == "updates"
    assert (case.get("line"), case.get("column")) == ("7", "5")
    failure = case.find("failure")
    assert failure is not None and failure.get("type") == "JX504"
    assert failure.text.startswith("line 7, col 5, the result of `x.at[0].set(\n")


def test_junit_without_findings_has_one_passing_case(tmp_path: Path) -> None:
    (tmp_path / "plain.py").write_text("x = 1\n")
    run = jaxlint("check", "--output-format", "junit", ".", cwd=tmp_path)
    assert run.returncode == 0
    root = ET.fromstring(run.stdout)
    [case] = root.iter("testcase")
    assert case.find("failure") is None and root.get("failures") == "0"


def test_gitlab_code_quality(project: Path, tmp_path: Path) -> None:
    issues = json.loads(run_format(project, "gitlab").stdout)
    assert len(issues) == 5
    for issue in issues:
        assert {"description", "check_name", "fingerprint", "severity", "location"} <= set(issue)
        assert issue["severity"] in ("info", "minor", "major", "critical", "blocker")
        assert issue["description"].startswith(issue["check_name"] + ": ")
        assert set(issue["location"]) == {"path", "lines"} and issue["location"]["lines"]["begin"] >= 1
    assert len({issue["fingerprint"] for issue in issues}) == 5, "fingerprints must be unique"
    update = next(i for i in issues if i["location"]["path"] == "updates.py")
    assert update["location"]["lines"] == {"begin": 7, "end": 9} and update["severity"] == "major"
    founding = next(i for i in issues if i["location"]["path"] == "founding.py")
    assert founding["severity"] == "minor" and founding["check_name"] == "JX101"

    # Lines added above the findings move them, and keep their fingerprints.
    moved = make_project(tmp_path / "project")
    for name in ("founding.py", "twice.py"):
        (moved / name).write_text("# a new comment\n\n" + (moved / name).read_text())
    again = json.loads(jaxlint("check", "--output-format", "gitlab", ".", cwd=moved).stdout)
    lines = {(i["location"]["path"], i["fingerprint"]): i["location"]["lines"]["begin"] for i in again}
    for issue in issues:
        key = (issue["location"]["path"], issue["fingerprint"])
        shift = 2 if issue["location"]["path"] in ("founding.py", "twice.py") else 0
        assert lines[key] == issue["location"]["lines"]["begin"] + shift


def test_output_file_gets_the_report_and_stderr_the_summary(project: Path) -> None:
    target = project / "reports" / "jaxlint.sarif"
    target.parent.mkdir(exist_ok=True)
    target.write_text("old report")
    run = jaxlint("check", "--output-format", "sarif", "-o", str(target), ".", cwd=project)
    assert run.returncode == 1, run.stderr
    assert run.stdout == "" and "5 findings" in run.stderr
    assert json.loads(target.read_text())["runs"][0]["results"]
    run = jaxlint("check", "--output-file", "reports/concise.txt", "--output-format", "concise", ".", cwd=project)
    assert (project / "reports" / "concise.txt").read_text() == run_format(project, "concise").stdout
    assert not list((project / "reports").glob(".jaxlint-*")), "temporary files left behind"


@pytest.mark.parametrize("target", ["missing/folder/report.json", "."])
def test_unwritable_output_file_is_a_usage_error(project: Path, target: str) -> None:
    run = jaxlint("check", "-o", target, ".", cwd=project)
    assert run.returncode == 2 and run.stdout == ""
    assert "cannot write the report to" in run.stderr and "Traceback" not in run.stderr


def test_environment_variable_and_flag_precedence(project: Path) -> None:
    run = jaxlint("check", ".", cwd=project, env={"JAXLINT_OUTPUT_FORMAT": "concise"})
    assert run.stdout == run_format(project, "concise").stdout
    run = jaxlint("check", "--output-format", "json-lines", ".", cwd=project,
                  env={"JAXLINT_OUTPUT_FORMAT": "concise"})
    assert run.stdout == run_format(project, "json-lines").stdout


@pytest.mark.parametrize("args, env, source", [
    (["--output-format", "xml"], {}, "--output-format"),
    ([], {"JAXLINT_OUTPUT_FORMAT": "pylint"}, "JAXLINT_OUTPUT_FORMAT"),
    (["--output-format", "json"], {"JAXLINT_OUTPUT_FORMAT": "JSON"}, "JAXLINT_OUTPUT_FORMAT"),
])
def test_invalid_format_names_the_valid_ones(project: Path, args: list[str], env: dict, source: str) -> None:
    run = jaxlint("check", *args, ".", cwd=project, env=env)
    assert run.returncode == 2 and run.stdout == "" and "Traceback" not in run.stderr
    assert "invalid output format" in run.stderr and source in run.stderr
    assert ", ".join(OUTPUT_FORMATS) in run.stderr


def test_help_lists_every_format(project: Path) -> None:
    run = jaxlint("check", "--help", cwd=project, env={"COLUMNS": "400"})  # no name split at a hyphen
    assert all(name in run.stdout for name in OUTPUT_FORMATS)


def test_statistics_table_and_json(project: Path) -> None:
    run = jaxlint("check", "--statistics", ".", cwd=project)
    assert run.returncode == 1
    assert run.stdout == ("3\tJX504\t[ ] discarded-functional-update\n"
                          "2\tJX101\t[*] vmap-unbatched-output\n")
    assert "5 findings" in run.stderr
    run = jaxlint("check", "--statistics", "--output-format", "json", ".", cwd=project)
    assert json.loads(run.stdout) == [
        {"code": "JX504", "name": "discarded-functional-update", "count": 3, "fixable": 0},
        {"code": "JX101", "name": "vmap-unbatched-output", "count": 2, "fixable": 2},
    ]


@pytest.mark.parametrize("args", [["--output-format", "sarif"], ["--diff"]])
def test_statistics_usage_errors(project: Path, args: list[str]) -> None:
    run = jaxlint("check", "--statistics", *args, ".", cwd=project)
    assert run.returncode == 2 and "--statistics" in run.stderr and run.stdout == ""


def test_configuration_key_below_environment_and_flag(tmp_path: Path) -> None:
    shutil.copy(REPO / "examples" / "founding.py", tmp_path / "founding.py")
    (tmp_path / "pyproject.toml").write_text('[tool.jaxlint]\noutput-format = "concise"\n')
    run = jaxlint("check", "founding.py", cwd=tmp_path)
    assert run.returncode == 1 and run.stdout.startswith("founding.py:13:12: JX101 [*] ")
    assert len(run.stdout.splitlines()) == 1
    run = jaxlint("check", "founding.py", cwd=tmp_path, env={"JAXLINT_OUTPUT_FORMAT": "gitlab"})
    assert json.loads(run.stdout)[0]["check_name"] == "JX101"
    run = jaxlint("check", "--output-format", "github", "founding.py", cwd=tmp_path,
                  env={"JAXLINT_OUTPUT_FORMAT": "gitlab"})
    assert run.stdout.startswith("::warning title=jaxlint (JX101),file=founding.py,line=13,")
    (tmp_path / "pyproject.toml").write_text('[tool.jaxlint]\noutput-format = "xml"\n')
    run = jaxlint("check", "founding.py", cwd=tmp_path)
    assert run.returncode == 2 and run.stdout == "" and "Traceback" not in run.stderr
    assert "output-format" in run.stderr and ", ".join(OUTPUT_FORMATS) in run.stderr


def test_text_is_full_for_the_key_the_environment_and_the_flag(project: Path, tmp_path: Path) -> None:
    """`text`, the full format's earlier name (check.md), is accepted wherever a format is named."""
    full = run_format(project, "full").stdout
    assert jaxlint("check", ".", cwd=project, env={"JAXLINT_OUTPUT_FORMAT": "text"}).stdout == full
    configured = tmp_path / "configured"
    shutil.copytree(project, configured)
    (configured / "pyproject.toml").write_text('[tool.jaxlint]\noutput-format = "text"\n')
    run = jaxlint("check", ".", cwd=configured)
    assert run.returncode == 1 and run.stdout == full, run.stderr


def test_analysis_failures_link_to_their_pages(tmp_path: Path) -> None:
    """JX900's url is its page, in JSON and SARIF, as every rule's is."""
    (tmp_path / "broken.py").write_text("import jax\n\ndef f(:\n    pass\n")
    [finding] = json.loads(jaxlint("check", "--output-format", "json", ".", cwd=tmp_path).stdout)
    assert finding["code"] == "JX900"
    assert finding["url"] == "https://github.com/jaxlint/jaxlint/blob/main/rules/JX900.md"
    log = json.loads(jaxlint("check", "--output-format", "sarif", ".", cwd=tmp_path).stdout)
    schema = json.loads(SARIF_SCHEMA.read_text(encoding="utf-8"))
    jsonschema.validators.validator_for(schema)(schema).validate(log)
    [rule] = log["runs"][0]["tool"]["driver"]["rules"]
    assert rule["id"] == "JX900" and rule["helpUri"] == finding["url"]
    assert rule["help"]["markdown"].startswith("# syntax-error (JX900)")


def test_unsafe_fixes_count_as_fixable_only_with_the_flag(tmp_path: Path) -> None:
    (tmp_path / "logs.py").write_text(
        "import jax\nimport jax.numpy as jnp\n\n\n@jax.jit\ndef safe_log(x):\n"
        "    return jnp.where(x > 0, jnp.log(x), 0.0)\n\n\nsafe_log(jnp.arange(3.0))\n")
    run = jaxlint("check", ".", cwd=tmp_path)
    assert run.stdout.startswith("logs.py:7:12: JX501 jnp.where")  # no [*]: --fix alone skips it
    assert "\n  = note: this is an unsafe fix and may change runtime behavior\n" in run.stdout
    for flags, fixable in (([], 0), (["--unsafe-fixes"], 1)):
        run = jaxlint("check", "--statistics", "--output-format", "json", *flags, ".", cwd=tmp_path)
        assert json.loads(run.stdout) == [{"code": "JX501", "name": "where-nan-gradient", "count": 1,
                                           "fixable": fixable}]


WIDE_AND_TABS = ("import jax\nimport jax.numpy as jnp\n\n\n@jax.jit\ndef reset(数据, δ):\n"
                 "\tprint('數值'); 数据.at[0].set(δ)\n\treturn 数据\n\n\nreset(jnp.ones(3), 1.0)\n")


def test_carets_line_up_under_wide_characters_and_tabs(tmp_path: Path) -> None:
    """Columns count characters; a terminal gives CJK characters two cells and shows the tab as
    four spaces: the carets stand under the span, not under what precedes it."""
    import io

    from helpers import check_in_process

    from jaxlint.config.selection import select_rules
    from jaxlint.report.full import write_findings

    path = tmp_path / "wide.py"
    path.write_text(WIDE_AND_TABS, encoding="utf-8")
    [finding] = check_in_process([str(path)], select_rules(["JX504"], None)).findings
    out = io.StringIO()
    write_findings([finding], {str(path): WIDE_AND_TABS}, out)
    lines = out.getvalue().splitlines()
    shown = next(line for line in lines if line.startswith("7 | "))[4:]
    carets = next(line for line in lines if line.lstrip(" |").startswith("^"))[4:]
    assert shown == "    print('數值'); 数据.at[0].set(δ)"
    # The carets' cells, read back in the shown line: wide characters count twice.
    cells = [c for char in shown for c in (char, "") if c or ord(char) > 0x2E80][:len(carets)]
    assert "".join(cells[carets.index("^"):]) == "数据.at[0].set(δ)"


@pytest.mark.parametrize("name", OUTPUT_FORMATS)
def test_a_missing_path_is_an_e902_finding_in_every_format(name: str, tmp_path: Path) -> None:
    """As ruff reports it: code E902 at the path, 1:1; parsed as any finding by each format's readers."""
    run = jaxlint("check", "--output-format", name, "missing.py", cwd=tmp_path)
    assert run.returncode == 1, run.stderr
    assert "E902" in run.stdout and "missing.py" in run.stdout
    if name == "sarif":
        log = json.loads(run.stdout)
        schema = json.loads(SARIF_SCHEMA.read_text(encoding="utf-8"))
        jsonschema.validators.validator_for(schema)(schema).validate(log)
        [result] = log["runs"][0]["results"]
        assert result["ruleId"] == "E902" and result["locations"][0]["physicalLocation"]["region"]["startLine"] == 1
    elif name in ("json", "json-lines"):
        rows = json.loads(run.stdout) if name == "json" else [json.loads(line) for line in run.stdout.splitlines()]
        assert [(r["code"], r["name"], r["location"]) for r in rows] == [("E902", "io-error", {"row": 1, "column": 1})]
    elif name == "junit":
        ET.fromstring(run.stdout)
    elif name == "gitlab":
        [issue] = json.loads(run.stdout)
        assert issue["check_name"] == "E902"
        assert issue["location"] == {"path": "missing.py", "lines": {"begin": 1, "end": 1}}
