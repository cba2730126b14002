"""A run that checked nothing never looks like a clean one: a script named on the command line is
checked whatever its suffix, a selection of no rules is a usage error naming where it came from, a
folder without Python files is a warning, and a package's __main__.py is never run. Through the
real command line."""
from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import pytest

import jaxlint

REPO = Path(__file__).resolve().parent.parent
FOUNDING = (REPO / "examples" / "founding.py").read_text()


def jaxlint_run(*args: str, cwd: Path) -> subprocess.CompletedProcess:
    return subprocess.run([sys.executable, "-m", "jaxlint", *args], cwd=cwd, capture_output=True,
                          text=True, timeout=600)


def test_a_script_without_suffix_named_on_the_command_line_is_checked(tmp_path: Path) -> None:
    # pre-commit's `types: [python]` passes scripts by their shebang, whatever their name.
    (tmp_path / "train").write_text("#!/usr/bin/env python\n" + FOUNDING)
    run = jaxlint_run("check", "train", cwd=tmp_path)
    assert run.returncode == 1, run.stdout + run.stderr
    assert "train:14:12: JX101" in run.stdout
    assert "1 file checked" in run.stderr
    # In a folder, only .py files are Python files (as ruff walks them).
    assert "0 files checked" in jaxlint_run("check", ".", cwd=tmp_path).stderr


@pytest.mark.parametrize("how", ["flag", "key"])
def test_selecting_no_rule_is_a_usage_error_naming_where(tmp_path: Path, how: str) -> None:
    (tmp_path / "m.py").write_text(FOUNDING)
    if how == "key":
        (tmp_path / "pyproject.toml").write_text("[tool.jaxlint]\nselect = []\n")
        run = jaxlint_run("check", "m.py", cwd=tmp_path)
        where = f"select = [] in {tmp_path / 'pyproject.toml'}"
    else:
        run = jaxlint_run("check", "--select", "", "m.py", cwd=tmp_path)
        where = "--select ''"
    assert run.returncode == 2
    assert f"jaxlint: no rule is selected ({where}), so nothing would be checked" in run.stderr
    assert "0 findings" not in run.stderr


def test_ignoring_every_rule_is_a_usage_error_too(tmp_path: Path) -> None:
    (tmp_path / "m.py").write_text(FOUNDING)
    run = jaxlint_run("check", "--ignore", "JX", "m.py", cwd=tmp_path)
    assert run.returncode == 2
    assert "no rule is selected (the ignore lists leave none of the selected rules)" in run.stderr


def test_the_python_api_refuses_an_empty_selection() -> None:
    nothing = jaxlint.lint_with(select=[])
    assert nothing.rules() == []  # ruff's meaning of `select = []`, as check --show-settings shows it
    with pytest.raises(ValueError, match="no rule is selected"):
        nothing.lint(lambda x: x + 1, 1.0)
    with pytest.raises(ValueError, match="no rule is selected"):
        nothing.assert_clean(lambda x: x + 1, 1.0)


def test_a_folder_without_python_files_is_a_warning(tmp_path: Path) -> None:
    (tmp_path / "docs").mkdir()
    (tmp_path / "docs" / "index.md").write_text("# docs\n")
    (tmp_path / "m.py").write_text("x = 1\n")
    run = jaxlint_run("check", "docs", "m.py", cwd=tmp_path)
    assert run.returncode == 0
    assert "jaxlint: warning: no Python files in docs" in run.stderr
    assert "m.py" not in run.stderr.split("warning")[1].splitlines()[0]  # only the empty folder is named
    quiet = jaxlint_run("check", "--quiet", "docs", cwd=tmp_path)
    assert "no Python files in docs" in quiet.stderr


def test_a_packages_main_module_is_never_run(tmp_path: Path) -> None:
    package = tmp_path / "pkg"
    package.mkdir()
    (package / "__init__.py").write_text("")
    (package / "__main__.py").write_text(FOUNDING + "\nopen('trained.txt', 'w').write('ran')\n")
    run = jaxlint_run("check", "--show-untraced", ".", cwd=tmp_path)
    assert not (tmp_path / "trained.txt").exists()
    assert "not imported: a __main__.py is a program's entry point" in run.stderr
    assert "linted 0 of 1 JAX functions (0 targets traced, 1 skipped" in run.stderr


def test_pytest_jaxlint_refuses_an_empty_selection(tmp_path: Path) -> None:
    (tmp_path / "pyproject.toml").write_text("[tool.jaxlint]\nselect = []\n")
    (tmp_path / "test_nothing.py").write_text("def test_nothing():\n    pass\n")
    run = subprocess.run([sys.executable, "-m", "pytest", "-p", "no:cacheprovider", "--jaxlint"], cwd=tmp_path,
                         capture_output=True, text=True, timeout=600)
    assert run.returncode == 4
    assert "no rule is selected (select = [] in" in run.stderr
