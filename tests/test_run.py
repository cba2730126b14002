"""``jaxlint run -- COMMAND``: a Python program run under pytest --jaxlint's watcher, in real
subprocesses on small generated projects; findings are compared by (code, line)."""
from __future__ import annotations

import json
import os
import re
import signal
import subprocess
import sys
import textwrap
from pathlib import Path

import pytest

from jaxlint.cli.run import CommandError, program_command

# The founding example, run by its __main__ block with the script's own arguments.
TRAIN = '''\
import sys

import jax
import jax.numpy as jnp

from pkg.model import safe_log


def blackbox_function(x, y):
    x = x + 1
    y = x * y
    return x, y


@jax.jit
def my_mapped_function(x, y):
    x, y = jax.vmap(blackbox_function, in_axes=(None, 0))(x, y)  # expect JX101
    return x[0], y


def main(steps):
    y = jnp.arange(10.0)
    for _ in range(steps):
        x, y = my_mapped_function(1.0, y)
    print("trained", float(safe_log(y).sum()))


if __name__ == "__main__":
    main(int(sys.argv[sys.argv.index("--steps") + 1]))
'''

MODEL = '''\
import jax.numpy as jnp


def safe_log(x):
    return jnp.where(x > 0, jnp.log(x), 0.0)  # expect JX501


def plain_numbers(n):
    return sum(range(n))
'''

# `python -m pkg.cli`: a package module with a __main__ block.
CLI = '''\
import sys

import jax
import jax.numpy as jnp

from pkg.model import safe_log

if __name__ == "__main__":
    print(sys.argv[1:], float(jax.grad(lambda x: safe_log(x).sum())(jnp.ones(3)).sum()))
'''


def expected(text: str, code: str) -> int:
    return next(n for n, line in enumerate(text.splitlines(), 1) if f"# expect {code}" in line)


def project(tmp_path: Path, train: str = TRAIN, config: str = "") -> Path:
    (tmp_path / "pkg").mkdir()
    (tmp_path / "pkg" / "__init__.py").write_text("")
    (tmp_path / "pkg" / "model.py").write_text(MODEL)
    (tmp_path / "pkg" / "cli.py").write_text(CLI)
    (tmp_path / "train.py").write_text(train)
    if config:
        (tmp_path / "pyproject.toml").write_text(textwrap.dedent(config))
    return tmp_path


def run(root: Path, *args: str) -> subprocess.CompletedProcess:
    env = {k: v for k, v in os.environ.items() if k not in ("JAXLINT_OUTPUT_FORMAT", "JAXLINT_RUN")}
    env["JAX_PLATFORMS"] = "cpu"
    # SIGINT as a terminal's foreground process has it: a suite started in the background by a
    # shell without job control inherits it ignored, and the program's own SIGINT would do nothing.
    reset = (lambda: signal.signal(signal.SIGINT, signal.SIG_DFL)) if os.name == "posix" else None
    return subprocess.run([sys.executable, "-m", "jaxlint", "run", *args], cwd=root, env=env,
                          capture_output=True, text=True, timeout=600, preexec_fn=reset)


def reported(root: Path, *args: str) -> tuple[subprocess.CompletedProcess, set[tuple[str, str, int]]]:
    """The run, and (file, code, line) of each finding, read from the JSON report."""
    done = run(root, "--output-format", "json", "-o", "report.json", *args)
    report = root / "report.json"
    found = json.loads(report.read_text()) if report.exists() else []
    return done, {(os.path.relpath(f["filename"], root), f["code"], f["location"]["row"]) for f in found}


def test_a_script_s_main_block_is_linted_with_its_own_arguments(tmp_path: Path) -> None:
    root = project(tmp_path)
    done = run(root, "--", "python", "train.py", "--steps", "2")
    assert done.returncode == 1, done.stderr
    assert done.stdout.startswith("trained ")  # the program's own output, then the findings
    assert f"train.py:{expected(TRAIN, 'JX101')}:12: JX101" in done.stdout
    assert f"pkg/model.py:{expected(MODEL, 'JX501')}:" in done.stdout
    # main() ran jnp but was called with an int: counted, not linted; never green by omission
    assert "jaxlint: linted 2 of 3 JAX functions the program ran, traced 3 of 3 project functions it called " \
           "with arrays (3 signatures), 2 findings" in done.stderr


def test_json_output_names_each_finding_s_place(tmp_path: Path) -> None:
    root = project(tmp_path)
    done, found = reported(root, "--", "python", "train.py", "--steps", "1")
    assert done.returncode == 1, done.stderr
    assert found == {("train.py", "JX101", expected(TRAIN, "JX101")), ("pkg/model.py", "JX501", expected(MODEL, "JX501"))}


@pytest.mark.parametrize("command", [["python", "-m", "pkg.cli", "a", "b"], ["-m", "pkg.cli", "a", "b"]])
def test_a_module_runs_as_python_m_runs_it(tmp_path: Path, command: list[str]) -> None:
    root = project(tmp_path)
    done, found = reported(root, "--", *command)
    assert done.returncode == 1, done.stderr
    assert done.stdout.startswith("['a', 'b'] 3.0")  # its __main__ block ran with its arguments
    assert found == {("pkg/model.py", "JX501", expected(MODEL, "JX501"))}


def test_the_program_s_failure_status_wins_and_its_calls_are_still_linted(tmp_path: Path) -> None:
    root = project(tmp_path, TRAIN.replace('    print("trained"', '    sys.exit(3)\n    print("trained"'))
    done, found = reported(root, "--", "python", "train.py", "--steps", "1")
    assert done.returncode == 3, done.stderr
    assert ("train.py", "JX101", expected(TRAIN, "JX101")) in found


def test_a_program_that_raises_still_has_its_calls_linted(tmp_path: Path) -> None:
    root = project(tmp_path, TRAIN.replace('    print("trained"', '    raise RuntimeError("diverged")\n    print("trained"'))
    done, found = reported(root, "--", "python", "train.py", "--steps", "1")
    assert done.returncode == 1, done.stderr
    assert "RuntimeError: diverged" in done.stderr and 'train.py", line' in done.stderr  # Python's traceback
    assert "jaxlint/drivers" not in done.stderr  # without jaxlint's own frames
    assert ("train.py", "JX101", expected(TRAIN, "JX101")) in found


def test_an_interrupted_program_is_not_linted(tmp_path: Path) -> None:
    root = project(tmp_path, TRAIN.replace('    print("trained"', '    os.kill(os.getpid(), signal.SIGINT)\n    print("trained"')
                   .replace("import sys\n", "import os\nimport signal\nimport sys\n"))
    done, found = reported(root, "--", "python", "train.py", "--steps", "1")
    assert done.returncode == 130 and "KeyboardInterrupt" in done.stderr
    assert "the program was interrupted: nothing was linted" in done.stderr and found == set()


def test_exit_zero_reports_without_failing(tmp_path: Path) -> None:
    root = project(tmp_path)
    done = run(root, "--exit-zero", "--", "python", "train.py", "--steps", "1")
    assert done.returncode == 0, done.stderr
    assert ": JX101" in done.stdout and "2 findings" in done.stderr


@pytest.mark.slow
def test_configuration_selection_per_file_ignores_and_noqa_apply(tmp_path: Path) -> None:
    config = """\
        [tool.jaxlint.per-file-ignores]
        "pkg/*" = ["JX501"]
    """
    root = project(tmp_path, TRAIN.replace("# expect JX101", "# noqa: JX101"), config)
    done, found = reported(root, "--", "python", "train.py", "--steps", "1")
    assert done.returncode == 0, done.stderr
    assert found == set() and "0 findings" in done.stderr
    (root / "pyproject.toml").write_text('[tool.jaxlint]\nselect = ["JX1"]\n')
    done, found = reported(root, "--", "python", "train.py", "--steps", "1")
    assert done.returncode == 0 and found == set()  # JX501 not selected, JX101 suppressed
    (root / "train.py").write_text(TRAIN)
    done, found = reported(root, "--", "python", "train.py", "--steps", "1")
    assert done.returncode == 1 and found == {("train.py", "JX101", expected(TRAIN, "JX101"))}
    done, found = reported(root, "--config", "select = ['JX5']", "--", "python", "train.py", "--steps", "1")
    assert done.returncode == 1 and found == {("pkg/model.py", "JX501", expected(MODEL, "JX501"))}


def test_a_program_that_calls_nothing_of_jax_says_it_linted_nothing(tmp_path: Path) -> None:
    root = project(tmp_path, "from pkg.model import plain_numbers\n\nprint(plain_numbers(4))\n")
    done = run(root, "-q", "--", "python", "train.py")
    assert done.returncode == 0, done.stderr
    assert done.stdout == "6\n" and "jaxlint: linted" not in done.stderr  # -q: no summary, but the warning
    assert "called no function of the project" in done.stderr and "nothing was linted" in done.stderr
    done = run(root, "--", "python", "train.py")
    assert "jaxlint: linted 0 of 0 JAX functions the program ran, traced 0 of 0 project functions" in done.stderr
    assert "called no function of the project" in done.stderr and "nothing was linted" in done.stderr


def test_the_script_sees_python_s_main_environment(tmp_path: Path) -> None:
    (tmp_path / "tools").mkdir()
    (tmp_path / "tools" / "helper.py").write_text("NAME = 'helper'\n")
    (tmp_path / "tools" / "show.py").write_text(
        "import os, sys\nimport helper\n"  # found through sys.path[0], the script's folder
        "print(__name__, sys.argv, helper.NAME, os.path.basename(__file__), sys.modules['__main__'].__file__ == __file__)\n")
    done = run(tmp_path, "--", "python", "tools/show.py", "-x", "--y=1")
    assert done.returncode == 0, done.stderr
    assert done.stdout == "__main__ ['tools/show.py', '-x', '--y=1'] helper show.py True\n"


@pytest.mark.parametrize("command, message", [
    ([], "run needs a command after '--'"),
    (["ls", "-l"], "ls is not a Python program"),  # a binary, not a script with a Python shebang
    (["python", "-c", "print(1)"], "python -c is not supported"),
    (["missing.py"], "no such file: missing.py"),
])
def test_commands_it_cannot_run_are_usage_errors(tmp_path: Path, command: list[str], message: str) -> None:
    done = run(tmp_path, "--", *command)
    assert done.returncode == 2 and message in done.stderr and done.stdout == ""


def test_the_command_is_read_as_python_reads_its_own() -> None:
    python = sys.executable
    assert program_command(["python", "-u", "-W", "ignore", "-X", "dev", "train.py", "-m", "x"]) == \
        ([python, "-u", "-W", "ignore", "-X", "dev"], "path", "train.py", ["-m", "x"])
    assert program_command(["python3", "-m", "pkg.cli", "a"]) == ([python], "module", "pkg.cli", ["a"])
    assert program_command(["python", "-mpkg.cli", "a"]) == ([python], "module", "pkg.cli", ["a"])
    assert program_command(["-m", "pkg.cli"]) == ([python], "module", "pkg.cli", [])
    assert program_command(["train.py", "--steps", "2"]) == ([python], "path", "train.py", ["--steps", "2"])
    assert program_command(["/opt/py/bin/python3.11", "t.py"]) == (["/opt/py/bin/python3.11"], "path", "t.py", [])
    with pytest.raises(CommandError):
        program_command(["python", "-m"])
    with pytest.raises(CommandError):
        program_command(["python", "-"])


def test_neither_process_of_jaxlint_imports_pytest_and_jaxlint_imports_no_jax(tmp_path: Path) -> None:
    """The program's process loads no pytest, even while linting (an atexit handler of the program
    runs after it); jaxlint's own process settles and reports without JAX or pytest."""
    root = project(tmp_path, TRAIN.replace("import sys\n", "import atexit\nimport sys\n\n"
                                           "atexit.register(lambda: print('pytest' in sys.modules, flush=True))\n"))
    env = {k: v for k, v in os.environ.items() if k not in ("JAXLINT_OUTPUT_FORMAT", "JAXLINT_RUN")}
    done = subprocess.run(
        [sys.executable, "-c", "import sys\nfrom jaxlint.cli.main import main\n"
         "status = main(['run', '-q', '-o', 'report.json', '--', 'python', 'train.py', '--steps', '1'])\n"
         "print(status, 'jax' in sys.modules, 'pytest' in sys.modules)"],
        cwd=root, env=env, capture_output=True, text=True, timeout=600)
    assert done.stdout.splitlines()[-2:] == ["False", "1 False False"], done.stderr


@pytest.mark.slow
def test_the_run_writes_the_store_check_reads(tmp_path: Path) -> None:
    """What the program's run linted joins `jaxlint check` in another process, as a test run's does;
    an edit of the module makes its entry stale; --no-cache writes nothing."""
    root = project(tmp_path)
    env = {k: v for k, v in os.environ.items() if k not in ("JAXLINT_OUTPUT_FORMAT", "JAXLINT_NO_CACHE")}
    env["JAX_PLATFORMS"] = "cpu"  # as run() sets it: the store's entries are keyed by JAX's variables
    # Without inference, which would trace the function again here with guessed arguments.
    check = [sys.executable, "-m", "jaxlint", "check", "--no-infer-arguments", "--output-format", "json", "pkg/model.py"]
    assert run(root, "--no-cache", "--", "python", "train.py", "--steps", "1").returncode == 1
    assert not (root / ".jaxlint_cache" / "tests").exists()
    assert run(root, "--", "python", "train.py", "--steps", "1").returncode == 1
    done = subprocess.run(check, cwd=root, env=env, capture_output=True, text=True, timeout=600)
    found = json.loads(done.stdout)
    assert [(f["code"], f["location"]["row"], f["origin"]) for f in found] == \
        [("JX501", expected(MODEL, "JX501"), "jaxlint run")], done.stderr
    assert "1 in the jaxlint run of " in done.stderr
    (root / "pkg" / "model.py").write_text(MODEL + "\n\nSCALE = 2.0\n")
    done = subprocess.run(check, cwd=root, env=env, capture_output=True, text=True, timeout=600)
    assert json.loads(done.stdout) == [] and "1 changed since the jaxlint run of " in done.stderr, done.stderr
    assert "run the program again with `jaxlint run`" in done.stderr


OTHER = '''\
import jax.numpy as jnp


def unrelated(x):
    return jnp.sin(x)
'''

OTHER_TEST = '''\
import jax.numpy as jnp

from pkg.other import unrelated


def test_other():
    assert unrelated(jnp.zeros(2)).shape == (2,)
'''


def test_the_summary_names_the_run_each_count_is_from(tmp_path: Path) -> None:
    """A program's run lints pkg/model.py, a later test run pkg/other.py; after an edit of
    model.py, the changed function is the program run's, and --show-untraced names no test for it:
    the summary says so, and no count reads as a count of runs."""
    root = project(tmp_path, config="[tool.jaxlint]\n")
    (root / "pkg" / "other.py").write_text(OTHER)
    (root / "tests").mkdir()
    (root / "tests" / "test_other.py").write_text(OTHER_TEST)
    env = {k: v for k, v in os.environ.items()
           if k not in ("JAXLINT_OUTPUT_FORMAT", "JAXLINT_NO_CACHE", "JAXLINT_CACHE_DIR", "JAXLINT_RECORD",
                        "PYTEST_ADDOPTS", "PYTEST_XDIST_WORKER")}
    env["JAX_PLATFORMS"] = "cpu"  # as run() sets it: the store's entries are keyed by JAX's variables
    assert run(root, "--", "python", "train.py", "--steps", "1").returncode == 1
    tests = subprocess.run([sys.executable, "-m", "pytest", "-p", "no:cacheprovider", "--jaxlint", "tests"],
                           cwd=root, env=env, capture_output=True, text=True, timeout=600)
    assert "1 passed" in tests.stdout, tests.stdout + tests.stderr
    check = [sys.executable, "-m", "jaxlint", "check", "--no-infer-arguments", "--show-untraced", "pkg"]
    (root / "pkg" / "model.py").write_text(MODEL + "# edited\n")
    summary = subprocess.run(check, cwd=root, env=env, capture_output=True, text=True, timeout=600).stderr
    when = r"of \d{4}-\d\d-\d\d \d\d:\d\d"
    assert re.search(rf"linted 1 of 2 JAX functions: 0 traced here, 1 in the test run {when} \(0 targets "
                     rf"traced\), 1 changed since the jaxlint run {when} \(--show-untraced lists them and what "
                     r"changed\)", summary), summary
    assert "safe_log [changed-since-test-run] linted in the jaxlint run of " in summary
    assert "(run the program again under `jaxlint run` to lint it)" in summary
    # Both stale: one count of functions, changed since both runs, the latest first.
    (root / "pkg" / "other.py").write_text(OTHER + "# edited\n")
    summary = subprocess.run(check, cwd=root, env=env, capture_output=True, text=True, timeout=600).stderr
    assert re.search(rf"linted 0 of 2 JAX functions: 0 traced here \(0 targets traced\), 2 changed since the "
                     rf"test run {when} and the jaxlint run {when} \(--show-untraced lists them and what "
                     r"changed\)", summary), summary
    assert "(the tests that reached it: tests/test_other.py::test_other; " in summary
    assert "earlier" not in summary


STEP = '''\
import jax
import jax.numpy as jnp


@jax.jit
def step(w, x):
    loss = jnp.mean((x @ w) ** 2)
    return w - 0.01 * w, loss
'''

LOOP = '''\
import jax.numpy as jnp

from pkg.step import step


def train(w, x, steps):
    losses = []
    for _ in range(steps):
        w, loss = step(w, x)
        losses.append(float(jnp.sum(loss)))  # expect JX309
    return w, losses
'''

LOOP_TRAIN = '''\
import jax.numpy as jnp

from pkg.loop import train

if __name__ == "__main__":
    train(jnp.ones(3), jnp.ones((4, 3)), 20)
'''

LOOP_TESTS = '''\
import jax.numpy as jnp

from pkg.loop import train
from pkg.other import unrelated


def test_train():  # two steps: too few for JX309
    assert len(train(jnp.ones(3), jnp.ones((4, 3)), 2)[1]) == 2


def test_other():
    assert unrelated(jnp.zeros(2)).shape == (2,)
'''


@pytest.mark.slow
def test_a_run_s_findings_stay_until_their_own_module_changes_and_then_are_said_dropped(tmp_path: Path) -> None:
    """The program's run finds a host sync in `train`'s loop (JX309: the tests run two steps, too
    few). A test run and `check --rerun-tests` after an edit of the jitted step re-run the tests,
    which also reach `train`: they write their own entries, never the run's, so the finding stays
    (it was dropped in silence). Once `loop.py` itself changes, the run's entry is stale: the
    summary and the coverage report say which findings of which run were dropped, and why."""
    root = project(tmp_path, train=LOOP_TRAIN, config="[tool.jaxlint]\n")
    for name, text in (("step", STEP), ("loop", LOOP), ("other", OTHER)):
        (root / "pkg" / f"{name}.py").write_text(text)
    (root / "tests").mkdir()
    (root / "tests" / "test_loop.py").write_text(LOOP_TESTS)
    env = {k: v for k, v in os.environ.items()
           if k not in ("JAXLINT_OUTPUT_FORMAT", "JAXLINT_NO_CACHE", "JAXLINT_CACHE_DIR", "JAXLINT_RECORD",
                        "PYTEST_ADDOPTS", "PYTEST_XDIST_WORKER")}
    env["JAX_PLATFORMS"] = "cpu"  # as run() sets it: the store's entries are keyed by JAX's variables
    line = expected(LOOP, "JX309")
    done, found = reported(root, "--", "python", "train.py")
    assert ("pkg/loop.py", "JX309", line) in found, done.stderr
    tests = subprocess.run([sys.executable, "-m", "pytest", "-p", "no:cacheprovider", "-p", "no:xdist", "--jaxlint",
                            "tests"], cwd=root, env=env, capture_output=True, text=True, timeout=600)
    assert "2 passed" in tests.stdout, tests.stdout + tests.stderr
    check = [sys.executable, "-m", "jaxlint", "check", "--no-infer-arguments", "--rerun-tests", "--output-format",
             "json", "--coverage-report", "coverage.json", "pkg"]

    def checked() -> tuple[set[tuple[str, int, str]], str, list[dict]]:
        done = subprocess.run(check, cwd=root, env=env, capture_output=True, text=True, timeout=600)
        found = {(f["code"], f["location"]["row"], f["origin"]) for f in json.loads(done.stdout)}
        return found, done.stderr, json.loads((root / "coverage.json").read_text())["summary"].get("dropped", [])

    (root / "pkg" / "step.py").write_text(STEP + "\n\nSCALE = 2.0\n")
    found, summary, dropped = checked()
    assert "running the 1 test that reached them again" in summary, summary  # test_train: loop.py's and step.py's
    assert ("JX309", line, "jaxlint run") in found, summary
    assert "dropped" not in summary
    (root / "pkg" / "loop.py").write_text(LOOP + "\n\nSCALE = 2.0\n")
    found, summary, dropped = checked()
    assert "ran them in" in summary, summary
    assert not any(code == "JX309" for code, _, _ in found), found
    assert re.search(r"dropped 1 finding of the jaxlint run of \d{4}-\d\d-\d\d \d\d:\d\d in pkg/loop\.py "
                     r"\(pkg/loop\.py, pkg/step\.py changed since\)", summary), summary
    assert {"path": "pkg/loop.py", "changed": ["pkg/loop.py", "pkg/step.py"], "findings": 1} in \
        [{k: v for k, v in entry.items() if k != "run"} for entry in dropped], dropped
