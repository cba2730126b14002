"""The hooks in .pre-commit-hooks.yaml, run by the real pre-commit on a repository holding the
founding example: `jaxlint` fails on it, `jaxlint-fix` fixes it, then `jaxlint` passes.

pre-commit installs this checkout (and JAX, from the package index) into its own environment,
which takes a minute or more the first time: the test is marked `network`.
"""
from __future__ import annotations

import os
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

REPO = Path(__file__).resolve().parent.parent
GIT = ["git", "-c", "user.name=jaxlint tests", "-c", "user.email=tests@jaxlint.invalid",
       "-c", "commit.gpgsign=false", "-c", "init.defaultBranch=main"]

pytestmark = [pytest.mark.network, pytest.mark.slow]
pytest.importorskip("pre_commit")  # the `test` extra installs it


def git(*args: str, cwd: Path) -> None:
    subprocess.run([*GIT, *args], cwd=cwd, check=True, capture_output=True, timeout=120)


@pytest.fixture(scope="session")
def hooks_repo(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """This checkout as pre-commit sees it, uncommitted and untracked files included: a snapshot
    of what the package build needs, committed to a fresh git repository."""
    snapshot = tmp_path_factory.mktemp("jaxlint-hooks")
    for name in ("pyproject.toml", "README.md", ".pre-commit-hooks.yaml"):
        shutil.copy(REPO / name, snapshot / name)
    ignore = shutil.ignore_patterns("__pycache__", "*.pyc")
    shutil.copytree(REPO / "jaxlint", snapshot / "jaxlint", symlinks=True, ignore=ignore)
    shutil.copytree(REPO / "rules", snapshot / "rules", ignore=ignore)
    git("init", "-q", cwd=snapshot)
    git("add", "-A", cwd=snapshot)
    git("commit", "-q", "-m", "snapshot", cwd=snapshot)
    return snapshot


@pytest.fixture(scope="session")
def pre_commit_home(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """pre-commit's cache (its hook environments), once per test session."""
    return tmp_path_factory.mktemp("pre-commit-home")


def try_repo(hooks: Path, hook: str, project: Path, home: Path) -> subprocess.CompletedProcess:
    env = dict(os.environ, PRE_COMMIT_HOME=str(home), PRE_COMMIT_COLOR="never")
    return subprocess.run([sys.executable, "-m", "pre_commit", "try-repo", str(hooks), hook, "--all-files"],
                          cwd=project, env=env, capture_output=True, text=True, timeout=1800)


def test_hooks_fail_on_the_founding_example_then_fix_it(hooks_repo: Path, pre_commit_home: Path,
                                                        tmp_path: Path) -> None:
    project = tmp_path / "project"
    project.mkdir()
    shutil.copy(REPO / "examples" / "founding.py", project / "founding.py")
    git("init", "-q", cwd=project)
    git("add", "founding.py", cwd=project)

    check = try_repo(hooks_repo, "jaxlint", project, pre_commit_home)
    output = check.stdout + check.stderr
    assert check.returncode == 1, output
    assert "founding.py:13:12: JX101" in output and "Failed" in output

    fix = try_repo(hooks_repo, "jaxlint-fix", project, pre_commit_home)
    output = fix.stdout + fix.stderr
    assert fix.returncode == 1, output  # pre-commit fails a hook that modified files
    assert "files were modified by this hook" in output
    fixed = (project / "founding.py").read_text(encoding="utf-8")
    assert "in_axes=(None, 0), out_axes=(None, 0))(x, y)\n    return x, y\n" in fixed

    git("add", "founding.py", cwd=project)
    again = try_repo(hooks_repo, "jaxlint", project, pre_commit_home)
    output = again.stdout + again.stderr
    assert again.returncode == 0, output
    assert "Passed" in output
