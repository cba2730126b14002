"""Configuration through the real CLI in temporary projects: where the file is found, every key,
the flags that override it, --show-settings/--show-files, and the errors (exit 2, no traceback)."""
from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

from jaxlint.rules import all_rules

SYNTAX_ERROR = "import jax\ndef f(:\n"  # JX900 from the jaxlint process: no worker, no JAX
UNROLLED = """\
import jax
import jax.numpy as jnp


# jaxlint: args x=f32[3]
@jax.jit
def unrolled(x):
    for _ in range(30):
        x = jnp.sin(x) * 2.0
    return x
"""


def files(root: Path, contents: dict[str, str]) -> Path:
    for name, text in contents.items():
        path = root / name
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(text, encoding="utf-8")
    return root


def jaxlint(cwd: Path, *args: str) -> subprocess.CompletedProcess:
    env = {k: v for k, v in os.environ.items() if not k.startswith("JAXLINT_")}
    run = subprocess.run([sys.executable, "-m", "jaxlint", "check", *args], cwd=cwd, env=env,
                         capture_output=True, text=True, timeout=600)
    assert "Traceback" not in run.stderr, run.stderr
    return run


def settings(cwd: Path, *args: str) -> str:
    run = jaxlint(cwd, "--show-settings", *args)
    assert run.returncode == 0, run.stderr
    return run.stdout


def enabled(cwd: Path, *args: str) -> list[str]:
    line = next(line for line in settings(cwd, *args).splitlines() if line.startswith("# enabled rules"))
    return [code for code in line.split(":", 1)[1].strip().split(", ") if code]


def shown_files(cwd: Path, *args: str) -> list[str]:
    run = jaxlint(cwd, "--show-files", *args)
    assert run.returncode == 0, run.stderr
    return run.stdout.splitlines()


def reported(cwd: Path, *args: str) -> list[tuple[str, str]]:
    """(path relative to cwd, code) of each finding."""
    run = jaxlint(cwd, "--output-format", "json", *args)
    assert run.returncode in (0, 1), run.stderr
    return sorted((os.path.relpath(f["filename"], cwd).replace(os.sep, "/"), f["code"])
                  for f in json.loads(run.stdout))


# --- where the configuration comes from -------------------------------------------------------

def test_pyproject_found_from_a_subfolder_and_from_the_checked_path(tmp_path):
    files(tmp_path, {"proj/pyproject.toml": '[tool.jaxlint]\nselect = ["JX2"]\n', "proj/pkg/sub/m.py": ""})
    assert f"# Settings file: {tmp_path / 'proj' / 'pyproject.toml'}" in settings(tmp_path / "proj" / "pkg" / "sub")
    # From another folder, the configuration is looked up from the first path checked.
    assert enabled(tmp_path, "proj/pkg/sub/m.py")[0] == "JX201"
    assert "JX101" in enabled(tmp_path)  # nothing above tmp_path configures jaxlint: defaults


def test_jaxlint_toml_wins_over_pyproject_and_pyproject_without_table_is_skipped(tmp_path):
    files(tmp_path, {"jaxlint.toml": 'select = ["JX3"]\n',
                     "pyproject.toml": '[tool.jaxlint]\nselect = ["JX1"]\n',
                     "inner/pyproject.toml": '[project]\nname = "x"\n',
                     "inner/broken/pyproject.toml": "[project\nname = \n"})  # not ours to judge
    assert settings(tmp_path).startswith(f"# Settings file: {tmp_path / 'jaxlint.toml'}")
    family = sorted(rule.code for rule in all_rules() if rule.code.startswith("JX3"))  # JX301, JX302, ...
    assert "JX301" in family and enabled(tmp_path / "inner" / "broken") == family


def test_config_file_flag_inline_overrides_and_isolated(tmp_path):
    files(tmp_path, {"pyproject.toml": '[tool.jaxlint]\nselect = ["JX1"]\ntimeout = 5\n',
                     "other/custom.toml": 'select = ["JX5"]\n'})
    family = sorted(rule.code for rule in all_rules() if rule.code.startswith("JX5"))  # JX501, JX502, ...
    assert "JX501" in family and enabled(tmp_path, "--config", "other/custom.toml") == family
    shown = settings(tmp_path, "--config", "other/custom.toml")
    assert f"# Settings file: {tmp_path / 'other' / 'custom.toml'}" in shown
    assert "timeout = 60.0" in shown  # the found pyproject.toml is not read at all
    # A `KEY = VALUE` line overrides the file's key, as ruff's --config does.
    shown = settings(tmp_path, "--config", "timeout = 7", "--config", 'select = ["JX4"]')
    assert "timeout = 7.0" in shown and "# Overridden by: --config 'timeout = 7'" in shown
    assert enabled(tmp_path, "--config", 'select = ["JX4"]') == ["JX401"]
    isolated = settings(tmp_path, "--isolated")
    assert "# Settings file: none (defaults)" in isolated and "timeout = 60.0" in isolated
    assert "JX101" in enabled(tmp_path, "--isolated") and "JX601" in enabled(tmp_path, "--isolated")
    run = jaxlint(tmp_path, "--isolated", "--config", "other/custom.toml", "--show-settings")
    assert run.returncode == 2 and "--isolated" in run.stderr


# --- rule selection ------------------------------------------------------------------------------

def test_select_ignore_extend_select_layer_as_in_ruff(tmp_path):
    files(tmp_path, {"pyproject.toml": '[tool.jaxlint]\nselect = ["JX2", "prng-key-reuse"]\n'
                                       'ignore = ["recompilation-hazard"]\nextend-select = ["JX303"]\n'})
    assert enabled(tmp_path) == ["JX201", "JX202", "JX204", "JX205", "JX206", "JX303", "JX401"]
    assert enabled(tmp_path, "--extend-select", "JX101") == ["JX101", "JX201", "JX202", "JX204", "JX205", "JX206",
                                                            "JX303", "JX401"]
    assert enabled(tmp_path, "--ignore", "JX20") == ["JX303", "JX401"]
    # --select replaces the configured selection, its ignores included.
    assert enabled(tmp_path, "--select", "JX203") == ["JX203"]
    # The more specific selector wins, whichever key it is in; equal specificity: ignore wins.
    assert enabled(tmp_path, "--select", "JX2,JX203", "--ignore", "JX20") == ["JX203"]
    assert enabled(tmp_path, "--select", "JX202", "--ignore", "python-loop-unrolled") == []
    assert enabled(tmp_path, "--select", "JX202", "--ignore", "JX2") == ["JX202"]
    assert enabled(tmp_path, "--select", "ALL", "--ignore", "JX") == []
    assert enabled(tmp_path, "--select", "JX", "--ignore", "ALL") == enabled(tmp_path, "--isolated")


def test_selection_applies_to_a_real_run(tmp_path):
    files(tmp_path, {"jaxlint.toml": 'ignore = ["syntax-error"]\n', "bad.py": SYNTAX_ERROR})
    assert reported(tmp_path) == []
    assert reported(tmp_path, "--select", "JX9") == [("bad.py", "JX900")]


# --- files --------------------------------------------------------------------------------------

def test_show_files_default_excludes_and_virtualenvs(tmp_path):
    files(tmp_path, {"b.py": "", "a/z.py": "", "a/y.py": "", ".venv/lib/v.py": "", "venv/w.py": "",
                     "build/x.py": "", "dist/d.py": "", "node_modules/n.py": "", "__pycache__/c.py": "",
                     ".hidden/h.py": "", "myenv/pyvenv.cfg": "home = /usr/bin\n", "myenv/lib/e.py": "",
                     "notes.txt": ""})
    assert shown_files(tmp_path) == ["a/y.py", "a/z.py", "b.py"]
    assert shown_files(tmp_path / "a") == ["y.py", "z.py"]


def test_exclude_and_extend_exclude(tmp_path):
    files(tmp_path, {"jaxlint.toml": 'extend-exclude = ["generated", "src/legacy/*.py"]\n',
                     "src/app.py": "", "src/legacy/old.py": "", "src/generated/g.py": "",
                     "other/legacy/kept.py": "", "generated/top.py": "", ".venv/v.py": ""})
    assert shown_files(tmp_path) == ["other/legacy/kept.py", "src/app.py"]
    assert shown_files(tmp_path, "--extend-exclude", "other") == ["src/app.py"]
    # exclude replaces the defaults (.venv comes back), extend-exclude still applies.
    assert shown_files(tmp_path, "--exclude", "src") == [".venv/v.py", "other/legacy/kept.py"]
    # Globs in the configuration are relative to its folder, whatever the cwd.
    assert shown_files(tmp_path / "src") == ["app.py"]
    assert "extend-exclude = [\"generated\", \"src/legacy/*.py\"]" in settings(tmp_path)


def test_force_exclude_applies_to_explicit_paths(tmp_path):
    files(tmp_path, {"pyproject.toml": '[tool.jaxlint]\nextend-exclude = ["gen"]\n',
                     "gen/g.py": "", ".venv/lib/v.py": "", "app.py": ""})
    explicit = ["gen/g.py", ".venv/lib/v.py", "app.py"]
    assert shown_files(tmp_path, *explicit) == [".venv/lib/v.py", "app.py", "gen/g.py"]
    assert shown_files(tmp_path, "--force-exclude", *explicit) == ["app.py"]
    (tmp_path / "pyproject.toml").write_text('[tool.jaxlint]\nextend-exclude = ["gen"]\nforce-exclude = true\n')
    assert shown_files(tmp_path, *explicit) == ["app.py"]
    assert shown_files(tmp_path, "--no-force-exclude", *explicit) == [".venv/lib/v.py", "app.py", "gen/g.py"]
    # The pre-commit case: files named one by one from the repository root, and a finding in an
    # excluded file is not reported.
    files(tmp_path, {"gen/bad.py": SYNTAX_ERROR, "bad.py": SYNTAX_ERROR})
    assert reported(tmp_path, "gen/bad.py", "bad.py") == [("bad.py", "JX900")]


@pytest.mark.skipif(shutil.which("git") is None, reason="needs git")
def test_respect_gitignore_in_a_git_repository(tmp_path):
    files(tmp_path, {".gitignore": "data/\n*_gen.py\n", "app.py": "", "data/d.py": "", "pkg/m_gen.py": "",
                     "pkg/m.py": "", "pkg/.gitignore": "local.py\n", "pkg/local.py": ""})
    assert shown_files(tmp_path) == ["app.py", "data/d.py", "pkg/local.py", "pkg/m.py", "pkg/m_gen.py"]
    subprocess.run(["git", "init", "-q", str(tmp_path)], check=True)
    assert shown_files(tmp_path) == ["app.py", "pkg/m.py"]
    assert shown_files(tmp_path / "pkg") == ["m.py"]
    everything = ["app.py", "data/d.py", "pkg/local.py", "pkg/m.py", "pkg/m_gen.py"]
    assert shown_files(tmp_path, "--no-respect-gitignore") == everything
    files(tmp_path, {"jaxlint.toml": "respect-gitignore = false\n"})
    assert shown_files(tmp_path) == everything
    assert shown_files(tmp_path, "--respect-gitignore") == ["app.py", "pkg/m.py"]


# --- per-file-ignores ---------------------------------------------------------------------------

def test_per_file_ignores_relative_to_the_config_folder_from_any_cwd(tmp_path):
    files(tmp_path, {
        "proj/pyproject.toml": '[tool.jaxlint.per-file-ignores]\n"tests/*" = ["syntax-error"]\n'
                               '"__init__.py" = ["JX9"]\n',
        "proj/tests/unit/bad.py": SYNTAX_ERROR, "proj/src/tests/bad.py": SYNTAX_ERROR,
        "proj/src/pkg/__init__.py": SYNTAX_ERROR, "proj/src/pkg/bad.py": SYNTAX_ERROR,
        "elsewhere/keep.txt": ""})
    expected = [("src/pkg/bad.py", "JX900"), ("src/tests/bad.py", "JX900")]
    assert reported(tmp_path / "proj") == expected
    # From another folder, naming the project: the globs stay relative to proj/.
    assert reported(tmp_path / "elsewhere", "../proj") == [("../proj/" + p, c) for p, c in expected]
    assert reported(tmp_path / "proj" / "src") == [("pkg/bad.py", "JX900"), ("tests/bad.py", "JX900")]
    # --per-file-ignores replaces the configured table; its globs are relative to the cwd.
    assert reported(tmp_path / "proj", "--per-file-ignores", "src/*:JX900") == [("tests/unit/bad.py", "JX900")]
    assert reported(tmp_path / "proj", "--extend-per-file-ignores", "src/pkg/*:JX900") == [
        ("src/tests/bad.py", "JX900")]


def test_per_file_ignores_negation(tmp_path):
    files(tmp_path, {"jaxlint.toml": '[per-file-ignores]\n"!src/**" = ["JX900"]\n',
                     "src/a/bad.py": SYNTAX_ERROR, "scripts/bad.py": SYNTAX_ERROR, "bad.py": SYNTAX_ERROR})
    assert reported(tmp_path) == [("src/a/bad.py", "JX900")]


def test_per_file_ignored_findings_are_not_fixed(tmp_path):
    founding = (Path(__file__).parent.parent / "examples" / "founding.py").read_text()
    root = files(tmp_path, {"pyproject.toml": '[tool.jaxlint.per-file-ignores]\n"*.py" = ["vmap-unbatched-output"]\n',
                            "founding.py": founding})
    run = jaxlint(root, "--fix", "--output-format", "json")
    assert run.returncode == 0 and json.loads(run.stdout) == [], run.stderr
    assert (root / "founding.py").read_text() == founding
    assert reported(root, "--isolated") == [("founding.py", "JX101")]


# --- values --------------------------------------------------------------------------------------

def test_scalar_keys_and_their_flags(tmp_path):
    assert "rerun-timeout = 300.0" in settings(tmp_path).splitlines()  # the default
    files(tmp_path, {"jaxlint.toml": 'timeout = 12\njobs = 2\noutput-format = "sarif"\n'
                                     'rerun-timeout = 90\nexamples = ["ex.py"]\n', "ex.py": ""})
    shown = settings(tmp_path)
    for line in ["timeout = 12.0", "jobs = 2", 'output-format = "sarif"', 'examples = ["ex.py"]',
                 "force-exclude = false", "respect-gitignore = true", "per-file-ignores = {}",
                 "rerun-timeout = 90.0"]:
        assert line in shown.splitlines(), line
    shown = settings(tmp_path, "--timeout", "3", "--jobs", "1", "--rerun-timeout", "45")
    assert "timeout = 3.0" in shown and "jobs = 1" in shown and "# Overridden by: command line" in shown
    assert "rerun-timeout = 45.0" in shown


def test_timeout_from_the_configuration_applies(tmp_path):
    files(tmp_path, {"jaxlint.toml": "timeout = 2\n",
                     "slow.py": "import time\nimport jax\n\ntime.sleep(120)\n\n\n"
                                "# jaxlint: args x=f32[3]\n@jax.jit\ndef f(x):\n    return x\n"})
    assert reported(tmp_path) == [("slow.py", "JX902")]


def test_rule_option_changes_what_a_rule_reports(tmp_path):
    files(tmp_path, {"loop.py": UNROLLED})
    assert reported(tmp_path) == []  # 60 equations: under the default of 200
    files(tmp_path, {"jaxlint.toml": "[rules.python-loop-unrolled]\nmin-equations = 50\n"})
    assert reported(tmp_path) == [("loop.py", "JX202")]
    shown = settings(tmp_path)
    assert "[rules.JX202]  # python-loop-unrolled" in shown and "min-equations = 50  #" in shown
    assert "min-flops = 100000.0  #" in shown  # every option shows, defaults too
    # An inline --config overrides an option from the file.
    assert reported(tmp_path, "--config", "rules.JX202.min-repeats = 31") == []


# --- errors ------------------------------------------------------------------------------------

@pytest.mark.parametrize("text, expected", [
    ('[tool.jaxlint]\nselct = ["JX1"]\n', ["unknown key `tool.jaxlint.selct`", "did you mean `select`?"]),
    ('[tool.jaxlint]\ntimeout = "fast"\n', ["`tool.jaxlint.timeout`", "expected a positive number of seconds",
                                            '"fast" (a string)']),
    ('[tool.jaxlint]\nrerun-timeout = 0\n', ["`tool.jaxlint.rerun-timeout`", "expected a positive number of seconds"]),
    ('[tool.jaxlint]\nrespect-gitignore = "yes"\n', ["`tool.jaxlint.respect-gitignore`", "true or false"]),
    ('[tool.jaxlint]\nignore = ["JX2O2"]\n', ["`tool.jaxlint.ignore`", "unknown rule selector `JX2O2`",
                                              "did you mean `JX202`?"]),
    ('[tool.jaxlint]\nselect = ["pyton-loop-unrolled"]\n', ["did you mean `python-loop-unrolled`?"]),
    ('[tool.jaxlint.per-file-ignores]\n"tests/*" = ["vmap-unbatched"]\n',
     ['`tool.jaxlint.per-file-ignores."tests/*"`', "did you mean `vmap-unbatched-output`?"]),
    ('[tool.jaxlint.rules.JX202]\nmin-equation = 5\n', ["`tool.jaxlint.rules.JX202.min-equation`",
                                                        "did you mean `min-equations`?"]),
    ('[tool.jaxlint.rules.JX202]\nmin-equations = 2.5\n', ["expected an integer of at least 1", "2.5 (a number)"]),
    ('[tool.jaxlint.rules.python-loop-unroled]\nmin-equations = 5\n', ["did you mean `python-loop-unrolled`?"]),
    ('[tool.jaxlint.rules.JX101]\nmin-equations = 5\n', ["JX101 (vmap-unbatched-output) has no options"]),
    ('[tool.jaxlint]\noutput-format = "sarf"\n', ["`tool.jaxlint.output-format`", "did you mean `sarif`?"]),
    ('[tool.jaxlint]\nselect = ["JX1"\n', ["invalid TOML"]),
])
def test_configuration_errors_exit_2_naming_file_and_key(tmp_path, text, expected):
    files(tmp_path, {"pyproject.toml": text, "m.py": ""})
    run = jaxlint(tmp_path, "m.py")
    assert run.returncode == 2 and run.stdout == ""
    assert f"{tmp_path / 'pyproject.toml'}: " in run.stderr
    for part in expected:
        assert part in run.stderr, run.stderr


def test_jaxlint_toml_errors_and_flag_errors(tmp_path):
    files(tmp_path, {"jaxlint.toml": "jobs = 0\n", "m.py": ""})
    run = jaxlint(tmp_path, "--show-settings")
    assert run.returncode == 2 and f"{tmp_path / 'jaxlint.toml'}: `jobs`: expected a whole number" in run.stderr
    (tmp_path / "jaxlint.toml").write_text("jobs = = 1\n")
    run = jaxlint(tmp_path, "--show-files")
    assert run.returncode == 2 and f"{tmp_path / 'jaxlint.toml'}: invalid TOML" in run.stderr
    for flags, expected in [(["--select", "JX99x"], "--select`: unknown rule selector `JX99x`"),
                            (["--extend-select", "trace-eror"], "did you mean `trace-error`?"),
                            (["--per-file-ignores", "tests/*"], "expected GLOB:CODES"),
                            (["--per-file-ignores", "tests/*:JX1O1"], "did you mean `JX101`?"),
                            (["--config", "selct = 1"], "did you mean `select`?")]:
        run = jaxlint(tmp_path, "--isolated", *flags)
        assert run.returncode == 2 and expected in run.stderr, (flags, run.stderr)
    run = jaxlint(tmp_path, "--config", "nope.toml")
    assert run.returncode == 2 and "nope.toml: no such configuration file" in run.stderr


def test_show_files_leaves_a_missing_path_out_with_a_warning(tmp_path):
    """ruff lists the files that exist; jaxlint also says which path it left out, and exits 0."""
    (tmp_path / "pyproject.toml").write_text("[tool.jaxlint]\n")
    (tmp_path / "a.py").write_text("x = 1\n")
    shown = subprocess.run([sys.executable, "-m", "jaxlint", "check", "--show-files", "a.py", "missing.py"],
                           cwd=tmp_path, capture_output=True, text=True, timeout=120)
    assert shown.returncode == 0, shown.stderr
    assert shown.stdout.splitlines() == ["a.py"]
    assert "jaxlint: warning: no such file or folder: missing.py" in shown.stderr.splitlines()
