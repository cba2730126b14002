"""The founding example end to end through the command line, as a user runs it."""
from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

REPO = Path(__file__).resolve().parent.parent
FOUNDING = REPO / "examples" / "founding.py"
FIXED_LINES = (
    "    x, y = jax.vmap(blackbox_function, in_axes=(None, 0), out_axes=(None, 0))(x, y)\n"
    "    return x, y\n"
)


def jaxlint(*args: str, cwd: Path) -> subprocess.CompletedProcess:
    return subprocess.run([sys.executable, "-m", "jaxlint", *args], cwd=cwd, capture_output=True,
                          text=True, timeout=600)


@pytest.fixture
def project(tmp_path: Path) -> Path:
    shutil.copy(FOUNDING, tmp_path / "founding.py")
    return tmp_path


def test_text_report_points_at_the_vmap_call(project: Path) -> None:
    run = jaxlint("check", "founding.py", cwd=project)
    assert run.returncode == 1, run.stderr
    first = run.stdout.splitlines()[0]
    assert first.startswith("founding.py:13:12: JX101 [*] ")
    assert "under jax.jit XLA deletes the broadcast" in first
    # The source line and a marker under the whole vmap application.
    assert "13 |     x, y = jax.vmap(blackbox_function, in_axes=(None, 0))(x, y)" in run.stdout
    assert "|            " + "^" * 52 in run.stdout
    # Nothing the module printed (its HLO) reaches stdout; the summary goes to stderr.
    assert "HloModule" not in run.stdout
    assert "(1 target traced)" in run.stderr and "1 fixable" in run.stderr


def test_json_report_is_ruff_shaped(project: Path) -> None:
    run = jaxlint("check", "--output-format", "json", "founding.py", cwd=project)
    assert run.returncode == 1, run.stderr
    [finding] = json.loads(run.stdout)
    assert finding["code"] == "JX101" and finding["name"] == "vmap-unbatched-output"
    assert finding["severity"] == "warning"
    assert finding["url"] == "https://github.com/jaxlint/jaxlint/blob/main/rules/JX101.md"
    assert finding["filename"] == str(project / "founding.py")
    assert finding["location"] == {"row": 13, "column": 12}
    assert finding["end_location"] == {"row": 13, "column": 64}
    fix = finding["fix"]
    assert fix["applicability"] == "safe"
    assert {e["content"] for e in fix["edits"]} == {", out_axes=(None, 0)", "x"}


@pytest.mark.slow
def test_diff_shows_the_fix_and_writes_nothing(project: Path) -> None:
    before = (project / "founding.py").read_bytes()
    run = jaxlint("check", "--diff", "founding.py", cwd=project)
    assert run.returncode == 1, run.stderr
    assert "\n-    return x[0], y\n" in run.stdout and "\n+    return x, y\n" in run.stdout
    assert "+    x, y = jax.vmap(blackbox_function, in_axes=(None, 0), out_axes=(None, 0))(x, y)" in run.stdout
    assert (project / "founding.py").read_bytes() == before


@pytest.mark.slow
def test_fix_then_recheck_is_clean(project: Path) -> None:
    run = jaxlint("check", "--fix", "founding.py", cwd=project)
    assert run.returncode == 0, run.stdout + run.stderr
    assert "1 fixed" in run.stderr
    text = (project / "founding.py").read_text()
    assert FIXED_LINES in text
    original = FOUNDING.read_text()
    assert text == original.replace(
        "    x, y = jax.vmap(blackbox_function, in_axes=(None, 0))(x, y)\n    return x[0], y\n", FIXED_LINES)
    again = jaxlint("check", "founding.py", cwd=project)
    assert again.returncode == 0 and again.stdout == "", again.stdout + again.stderr
    assert not list(project.glob(".jaxlint-*")), "temporary files left behind"


def test_bundled_examples_folder(tmp_path: Path) -> None:
    run = jaxlint("check", str(REPO / "examples"), cwd=tmp_path)
    assert run.returncode == 1
    assert "JX101" in run.stdout


@pytest.mark.slow
def test_select_ignore_and_usage_errors(project: Path) -> None:
    assert jaxlint("check", "--ignore", "JX1", "founding.py", cwd=project).returncode == 0
    assert jaxlint("check", "--ignore", "vmap-unbatched-output", "founding.py", cwd=project).returncode == 0
    assert jaxlint("check", "--select", "JX101", "founding.py", cwd=project).returncode == 1
    unknown = jaxlint("check", "--select", "JX999", "founding.py", cwd=project)
    assert unknown.returncode == 2 and "unknown rule selector" in unknown.stderr
    assert jaxlint("check", "--bogus-flag", cwd=project).returncode == 2


MISSING = "No such file or directory (os error 2)"  # ruff's E902 message


def test_a_missing_path_is_a_finding_and_the_others_are_checked(project: Path) -> None:
    run = jaxlint("check", "--output-format", "concise", "founding.py", "missing.py", cwd=project)
    assert run.returncode == 1, run.stderr
    lines = run.stdout.splitlines()
    assert lines[0].startswith("founding.py:13:12: JX101 [*] ")  # still checked
    assert lines[1] == f"missing.py:1:1: E902 {MISSING}"
    full = jaxlint("check", "founding.py", "missing.py", cwd=project)
    assert full.returncode == 1 and f"missing.py:1:1: E902 {MISSING}" in full.stdout.splitlines()


def test_a_missing_path_in_json_is_shaped_as_any_finding(project: Path) -> None:
    run = jaxlint("check", "--output-format", "json", "founding.py", "missing.py", cwd=project)
    assert run.returncode == 1, run.stderr
    jx101, e902 = json.loads(run.stdout)
    assert jx101["code"] == "JX101" and set(e902) == set(jx101)
    assert {key: e902[key] for key in ("code", "name", "message", "severity", "filename", "location",
                                       "end_location", "fix")} == {
        "code": "E902", "name": "io-error", "message": MISSING, "severity": "error",
        "filename": str(project / "missing.py"), "location": {"row": 1, "column": 1},
        "end_location": {"row": 1, "column": 1}, "fix": None}


def test_every_path_missing_is_a_finding_each_as_in_ruff(tmp_path: Path) -> None:
    run = jaxlint("check", "--output-format", "concise", "missing.py", "no_such_dir", cwd=tmp_path)
    assert run.returncode == 1, run.stderr
    assert run.stdout.splitlines() == [f"missing.py:1:1: E902 {MISSING}", f"no_such_dir:1:1: E902 {MISSING}"]
    assert "2 findings" in run.stderr and "Traceback" not in run.stderr


@pytest.mark.parametrize("ignored", ["E902", "E9", "io-error"])
def test_an_ignored_e902_is_a_warning_and_the_exit_follows_the_rest(ignored: str, tmp_path: Path) -> None:
    """As ruff: ``--ignore E902`` (or a prefix, or its name) turns the finding into a warning on
    stderr; the run still says it could not lint the path."""
    (tmp_path / "plain.py").write_text("x = 1\n")
    run = jaxlint("check", "--ignore", ignored, "plain.py", "missing.py", cwd=tmp_path)
    assert run.returncode == 0, run.stderr
    assert "E902" not in run.stdout
    assert f"jaxlint: warning: failed to lint missing.py: {MISSING}" in run.stderr.splitlines()


def test_per_file_ignores_turn_e902_off_for_the_paths_they_match(tmp_path: Path) -> None:
    """A per-file-ignores entry naming E902 applies to a missing path it matches, as to a file's
    findings; the other missing paths are still findings."""
    (tmp_path / "pyproject.toml").write_text('[tool.jaxlint]\nper-file-ignores = {"gone/*.py" = ["E9"]}\n')
    run = jaxlint("check", "--output-format", "concise", "gone/a.py", "missing.py", cwd=tmp_path)
    assert run.returncode == 1, run.stderr
    assert run.stdout.splitlines() == [f"missing.py:1:1: E902 {MISSING}"]
    assert f"jaxlint: warning: failed to lint gone/a.py: {MISSING}" in run.stderr.splitlines()


def test_selecting_rules_keeps_e902_and_selecting_it_alone_names_no_rule(tmp_path: Path) -> None:
    (tmp_path / "plain.py").write_text("x = 1\n")
    selected = jaxlint("check", "--select", "JX101", "--output-format", "concise", "plain.py", "missing.py",
                       cwd=tmp_path)
    assert selected.returncode == 1 and selected.stdout.splitlines() == [f"missing.py:1:1: E902 {MISSING}"]
    alone = jaxlint("check", "--select", "E902", "missing.py", cwd=tmp_path)
    assert alone.returncode == 2
    assert "no rule is selected (--select E902 names no rule)" in alone.stderr


def test_timings_name_every_stage(project: Path) -> None:
    run = jaxlint("check", "--timings", "founding.py", cwd=project)
    line = next(l for l in run.stderr.splitlines() if l.startswith("timings:"))
    for stage in ("discover", "scan", "import", "trace", "rules", "fix"):
        assert f"{stage} " in line


def test_rules_command_lists_registry() -> None:
    run = jaxlint("rules", cwd=REPO)
    assert run.returncode == 0
    codes = [line.split()[0] for line in run.stdout.splitlines()]
    assert codes[0] == "JX101" and {"JX900", "JX901", "JX902", "JX903"} <= set(codes)


def test_readme_shows_the_real_output() -> None:
    run = jaxlint("check", "examples/", cwd=REPO)
    readme = (REPO / "README.md").read_text()
    assert "$ jaxlint check examples/\n" + run.stdout + run.stderr in readme


README_JAX = "0.10.2"  # the JAX docs/explain.md's output was made with (HLO names differ by version)


def test_readme_shows_the_real_explain_output() -> None:
    from importlib.metadata import version

    if version("jax") != README_JAX:
        pytest.skip(f"docs/explain.md's output comes from JAX {README_JAX}")
    run = subprocess.run([sys.executable, "-m", "jaxlint", "explain", "examples/founding.py::my_mapped_function"],
                         cwd=REPO, capture_output=True, text=True, timeout=300, env={**os.environ, "COLUMNS": "100"})
    assert run.returncode == 0, run.stderr
    readme = (REPO / "docs" / "explain.md").read_text()
    assert "$ jaxlint explain examples/founding.py::my_mapped_function\n" + run.stdout in readme


def test_json_carries_the_honest_cost(project: Path) -> None:
    run = jaxlint("check", "--output-format", "json", "founding.py", cwd=project)
    [finding] = json.loads(run.stdout)
    assert finding["cost"]["basis"] == "shapes"
    assert finding["cost"]["bytes"] == 0.0 and "XLA deletes" in finding["cost"]["note"]


@pytest.mark.parametrize("args, said", [
    (["check", "--jobs", "abc", "."], "argument -j/--jobs: expected a whole number, got 'abc'"),
    (["check", "--jobs", "0", "."], "argument -j/--jobs: must be at least 1"),
    (["check", "--timeout", "-1", "."], "argument --timeout: must be a positive number of seconds, got -1"),
    (["check", "--timeout", "soon", "."], "argument --timeout: expected a number of seconds, got 'soon'"),
    (["explain", "--timeout", "-1", "m.py::f"], "argument --timeout: must be a positive number of seconds, got -1"),
])
def test_bad_numbers_are_usage_errors_saying_what_was_expected(args: list[str], said: str, tmp_path: Path) -> None:
    run = jaxlint(*args, cwd=tmp_path)
    assert run.returncode == 2 and said in run.stderr, run.stderr


def test_a_check_command_line_is_parsed_the_same_by_the_parser_built_for_check_alone(capsys) -> None:
    from jaxlint.cli.main import build_parser

    line = ["check", "--select", "JX101,JX2", "--output-format", "json", "--exit-zero", "--jobs", "1",
            "--no-cache", "--config", "timeout = 5", "src", "tests"]
    assert vars(build_parser(only_check=True).parse_args(line)) == vars(build_parser().parse_args(line))
    helps = []
    for parser in (build_parser(), build_parser(only_check=True)):
        with pytest.raises(SystemExit):
            parser.parse_args(["check", "--help"])
        helps.append(capsys.readouterr().out)
    assert "--exit-zero" in helps[0] and helps[0] == helps[1]


def test_a_current_folder_removed_under_the_shell_is_a_usage_error(tmp_path: Path) -> None:
    gone = tmp_path / "gone"
    gone.mkdir()
    code = f"import os, sys; os.chdir({str(gone)!r}); os.rmdir({str(gone)!r}); sys.argv = ['jaxlint', 'check']; " \
           "from jaxlint.cli.main import entry; sys.exit(entry())"
    run = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=300)
    assert run.returncode == 2 and "the current folder cannot be used" in run.stderr, run.stderr
    assert "Traceback" not in run.stderr
