"""A warm check replayed (engine/replay.py): a run of ``python -m jaxlint check`` that the result
cache answered records its output, and the same command prints it again while nothing it read
has changed; any change to what it read, its command line or its environment runs it in full.
Real processes throughout; a replay is told apart from a full run by marking the recorded output."""
from __future__ import annotations

import os
import subprocess
import sys
import time
from pathlib import Path

import pytest

from jaxlint.engine import replay

MODULE = """\
import jax


# jaxlint: args key=u32[2]
@jax.jit
def draws(key):
    return jax.random.normal(key) + jax.random.normal(key)
"""
MARK = "REPLAYED-OUTPUT\n"


def check(root: Path, *args: str, env: dict[str, str] | None = None) -> subprocess.CompletedProcess:
    return subprocess.run([sys.executable, "-m", "jaxlint", "check", "--output-format", "concise", *args],
                          cwd=root, capture_output=True, text=True, timeout=300, env={**os.environ, **(env or {})})


def entries(root: Path) -> list[Path]:
    folder = root / replay.FOLDER
    return sorted(folder.iterdir()) if folder.is_dir() else []


def settle(root: Path) -> None:
    """Wait until the project's files and folders are older than the "racy" window, as a
    project's are between two commits (their change times cannot be set back)."""
    newest = max(os.stat(path).st_ctime for path in [root, *root.iterdir()])
    time.sleep(max(0.0, newest + replay.RACY_SECONDS + 0.1 - time.time()))


def mark_recorded_output(entry: Path) -> None:
    """Put MARK in front of what the entry prints, so a replay shows itself."""
    recorded = replay._read(str(entry))
    assert recorded is not None
    recorded["chunks"] = [(1, MARK), *recorded["chunks"]]
    replay._write(str(entry), recorded)


@pytest.fixture
def project(tmp_path: Path) -> Path:
    (tmp_path / "jaxlint.toml").write_text("")
    (tmp_path / "draws.py").write_text(MODULE)
    return tmp_path


def recorded(root: Path, *args: str) -> tuple[subprocess.CompletedProcess, Path]:
    """A cold run (workers: no entry), then a warm one (recorded), its entry marked."""
    cold = check(root, *args)
    assert "JX401" in cold.stdout and cold.returncode == 1 and entries(root) == []
    settle(root)
    warm = check(root, *args)
    assert (warm.stdout, warm.stderr, warm.returncode) == (cold.stdout, cold.stderr, cold.returncode)
    [entry] = entries(root)
    mark_recorded_output(entry)
    return warm, entry


def test_a_warm_check_prints_its_recorded_output_and_status(project: Path) -> None:
    warm, _ = recorded(project)
    again = check(project)
    assert again.stdout == MARK + warm.stdout and again.stderr == warm.stderr and again.returncode == 1


@pytest.mark.parametrize("change", ["edit the module", "add a module", "edit the configuration",
                                    "another JAX variable", "another flag"])
def test_a_change_to_what_the_check_read_runs_it_in_full(project: Path, change: str) -> None:
    recorded(project)
    env, args = None, ()
    if change == "edit the module":
        (project / "draws.py").write_text(MODULE.replace("normal(key) +", "normal(key) * 2 +"))
    elif change == "add a module":
        (project / "more.py").write_text("import jax\n\n\n@jax.jit\ndef double(x):\n    return 2 * x\n")
    elif change == "edit the configuration":
        (project / "jaxlint.toml").write_text('ignore = ["JX401"]\n')
    elif change == "another JAX variable":
        env = {"JAX_ENABLE_X64": "1"}
    else:
        args = ("--select", "JX4")
    again = check(project, *args, env=env)
    assert MARK not in again.stdout and again.returncode in (0, 1)
    assert ("JX401" in again.stdout) == (change != "edit the configuration")


def test_a_damaged_entry_is_a_full_run_and_is_replaced(project: Path) -> None:
    warm, entry = recorded(project)
    entry.write_bytes(entry.read_bytes()[:100])
    again = check(project)
    assert (again.stdout, again.returncode) == (warm.stdout, 1)
    assert replay._read(str(entry)) is not None  # the full run recorded it again


def test_a_file_changed_just_before_the_run_is_not_trusted(project: Path) -> None:
    """Times tell apart only edits a clock tick apart: a file changed within RACY_SECONDS of
    the run gets no entry (same bytes, new times: the run itself is a full one)."""
    _, entry = recorded(project)
    before = entry.read_bytes()
    os.utime(project / "draws.py")  # now: same bytes, new times
    again = check(project)
    assert MARK not in again.stdout and "JX401" in again.stdout
    assert entry.read_bytes() == before  # not rewritten: that run's view of the file cannot be vouched for


@pytest.mark.parametrize("argv, expected", [
    (["check", "src", "--output-format", "json", "--exit-zero", "-j", "1"], True),
    (["check", "--select=JX4", "--quiet", "."], True),
    (["check", "--fix", "."], False),
    (["check", "--diff"], False),
    (["check", "--fi", "."], False),  # argparse's abbreviation of --fix
    (["check", "-qv"], False),
    (["check", "-o", "report.json"], False),
    (["check", "--timings"], False),
    (["check", "--coverage-report", "c.json"], False),
    (["check", "--no-cache"], False),
    (["check", "-n"], False),
    (["check", "--exit-zero=1"], False),
    (["check", "--select"], False),  # a value missing: argparse's error, never replayed
    (["rules"], False),
    (["run", "--", "python", "x.py"], False),
])
def test_only_a_plain_report_is_replayed(argv: list[str], expected: bool) -> None:
    assert replay.replayable(argv) is expected


def test_in_a_git_work_tree_a_gitignore_edit_runs_it_in_full(project: Path) -> None:
    """Discovery asks git which files it ignores: that one process does not stop the recording;
    the .gitignore files it read are what the entry depends on."""
    subprocess.run(["git", "init", "-q", str(project)], check=True)
    (project / ".gitignore").write_text("draws.py\n.jaxlint_cache/\n")
    (project / "kept.py").write_text(MODULE.replace("def draws", "def kept"))
    settle(project)
    warm, _ = recorded(project)
    assert "kept.py" in warm.stdout and "draws.py" not in warm.stdout
    assert check(project).stdout == MARK + warm.stdout
    (project / ".gitignore").write_text(".jaxlint_cache/\n")
    again = check(project)
    assert MARK not in again.stdout and "draws.py" in again.stdout and "kept.py" in again.stdout
