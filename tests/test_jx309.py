"""JX309 host-sync-in-loop: a run-time rule, so it has no case file (``jaxlint check`` runs
nothing): real ``pytest --jaxlint`` sessions and a real ``jaxlint run``, in subprocesses, on a
small generated project, and the loop counting of the watched import in this process. Findings
are compared by (file, line)."""
from __future__ import annotations

import ast
import builtins
import json
import os
import subprocess
import sys
import textwrap
import types
from pathlib import Path

from jaxlint.drivers import loops

TRAIN = '''\
import jax
import jax.numpy as jnp
import numpy as np


@jax.jit
def step(w, x):
    loss = jnp.mean((x @ w) ** 2)
    return w - 0.01 * w, loss


def train_float(w, x, steps):
    losses = []
    for _ in range(steps):
        w, loss = step(w, x)
        losses.append(float(loss))  # expect JX309 (float every step)
    return w, losses


def train_item(w, x, steps):
    total = 0.0
    for _ in range(steps):
        w, loss = step(w, x)
        total += loss.item()  # expect JX309 (item every step)
    return w, total


def train_until_negative(w, x, steps):
    for _ in range(steps):
        w, loss = step(w, x)
        if jnp.any(w < 0):  # expect JX309 (an if on an array)
            break
    return w


def train_printing(w, x, steps):
    for i in range(steps):
        w, loss = step(w, x)
        print(f"step {i}: loss {loss:.4f}, w[0] {w[0]:.3f}")  # expect JX309 (an f-string)
    return w


def log(history, loss):
    history.append(float(loss))  # expect JX309 (in a helper called each step)


def train_logging(w, x, steps):
    history = []
    for _ in range(steps):
        w, loss = step(w, x)
        log(history, loss)
    return w, history


def update(w, x):  # a plain function around the jitted step
    return step(w, x)


def train_through_a_helper(w, x, steps):
    losses = []
    for _ in range(steps):
        w, loss = update(w, x)
        losses.append(float(loss))  # expect JX309 (the jitted call one level down)
    return w, losses


def train_printing_the_loss(w, x, steps):
    for _ in range(steps):
        w, loss = step(w, x)
        print("loss", float(loss))  # expect JX309 (every one of 8 steps in a test)
    return w


def train_every_other(w, x, steps):
    for i in range(steps):
        w, loss = step(w, x)
        if i % 2 == 0:
            print(float(loss))  # half of 10 steps in a test: quiet
    return w


def train_every_100(w, x, steps):
    for i in range(steps):
        w, loss = step(w, x)
        if i % 100 == 0:
            print(float(loss))  # every 100th step: quiet
    return w


def train_then_read(w, x, steps):
    for _ in range(steps):
        w, loss = step(w, x)
    return float(loss)  # after the loop: quiet


def host_sum(values, steps):
    total = 0.0
    for i in range(steps):
        total += float(np.sum(values[i % len(values)]))  # NumPy only: quiet
    return total


def train_batched_reads(w, x, steps, every):
    losses = []
    for i in range(steps):
        w, loss = step(w, x)
        losses.append(loss)
        if (i + 1) % every == 0:
            losses[-every:] = jax.device_get(losses[-every:])  # a batched read: quiet, even every step
    return w, losses


def read_each(xs):
    total = 0.0
    for i in range(xs.shape[0]):
        total += float(xs[i])  # a device array, but no jitted call in the loop: quiet
    return total
'''

TESTS = '''\
import jax.numpy as jnp
import numpy as np
import pytest

from pkg import train

W, X = jnp.ones(3), jnp.ones((4, 3))


def test_float():
    assert len(train.train_float(W, X, 50)[1]) == 50


def test_item():
    train.train_item(W, X, 30)


def test_if_on_an_array():
    train.train_until_negative(W, X, 40)


def test_printing():
    train.train_printing(W, X, 25)


def test_logging_helper():
    train.train_logging(W, X, 30)


def test_through_a_helper():
    train.train_through_a_helper(W, X, 30)


def test_eight_steps():  # a test's short training loop, reading the loss on each step
    train.train_printing_the_loss(W, X, 8)


def test_every_100():
    train.train_every_100(W, X, 2500)


def test_after_the_loop():
    assert train.train_then_read(W, X, 50) >= 0


def test_after_a_short_loop():
    assert train.train_then_read(W, X, 8) >= 0


def test_host_only():
    assert train.host_sum([np.ones(3)] * 4, 60) == 180.0


def test_batched_reads():
    train.train_batched_reads(W, X, 30, 1)


def test_no_jitted_call():
    assert train.read_each(jnp.ones(40)) == 40.0


def test_fewer_than_min_syncs():  # not on every iteration, and fewer than min-syncs
    train.train_every_other(W, X, 10)


@pytest.mark.parametrize("seed", range(8))
def test_parametrized(seed):  # a loop of 3 iterations in each test: tests are not added up
    train.train_float(W * seed, X, 3)


def test_the_test_reads_values_itself():  # the test's own checks: its business
    w = W
    for _ in range(50):
        w, loss = train.step(w, X)
        assert float(loss) >= 0.0
'''

TRIGGERS = ["(float every step)", "(item every step)", "(an if on an array)", "(an f-string)",
            "(in a helper called each step)", "(the jitted call one level down)",
            "(every one of 8 steps in a test)"]


def line_of(text: str, marker: str) -> int:
    return next(n for n, line in enumerate(text.splitlines(), 1) if marker in line)


def project(tmp_path: Path, config: str = "") -> Path:
    (tmp_path / "pkg").mkdir()
    (tmp_path / "pkg" / "__init__.py").write_text("")
    (tmp_path / "pkg" / "train.py").write_text(TRAIN)
    (tmp_path / "tests").mkdir()
    (tmp_path / "tests" / "test_train.py").write_text(TESTS)
    (tmp_path / "pyproject.toml").write_text('[tool.jaxlint]\nselect = ["JX309"]\n' + textwrap.dedent(config))
    return tmp_path


def environment() -> dict[str, str]:
    env = {k: v for k, v in os.environ.items()
           if k not in ("JAXLINT_RECORD", "PYTEST_ADDOPTS", "JAXLINT_OUTPUT_FORMAT", "PYTEST_XDIST_WORKER",
                        "JAXLINT_RUN")}
    env["JAX_PLATFORMS"] = "cpu"
    return env


def pytest_run(root: Path, *args: str) -> subprocess.CompletedProcess:
    return subprocess.run([sys.executable, "-m", "pytest", "-p", "no:cacheprovider", "--jaxlint",
                           "--jaxlint-no-cache", "--jaxlint-report", "report.json", *args],
                          cwd=root, env=environment(), capture_output=True, text=True, timeout=600)


def syncs(root: Path) -> dict[tuple[str, int], dict]:
    report = json.loads((root / "report.json").read_text())
    return {(os.path.relpath(f["filename"], root), f["location"]["row"]): f for f in report if f["code"] == "JX309"}


def test_a_conversion_on_each_step_of_a_loop_calling_a_jitted_function_is_reported(tmp_path: Path) -> None:
    root = project(tmp_path)
    run = pytest_run(root)
    assert "23 passed" in run.stdout, run.stdout + run.stderr
    found = syncs(root)
    # The near misses stay quiet: every 100th step, after the loop (of 50 steps, of 8), NumPy only,
    # a loop without a jitted call, every other step of 10, a parametrized test (3 steps in each),
    # the test file's own conversions, `jax.device_get` (the batched read the message recommends).
    assert set(found) == {("pkg/train.py", line_of(TRAIN, marker)) for marker in TRIGGERS}
    every_step = found[("pkg/train.py", line_of(TRAIN, "(float every step)"))]
    text = TRAIN.splitlines()[line_of(TRAIN, "(float every step)") - 1]
    # At the conversion (columns 1-based in the JSON report): `float(loss)`.
    assert every_step["location"]["column"] == text.index("float(") + 1
    assert every_step["end_location"]["column"] == text.index("))  #") + 2
    message = every_step["message"]
    assert ("turned a device array into a Python value on 50 of the 50 iterations of the loop at train.py:"
            f"{line_of(TRAIN, 'def train_float') + 2} (float 50) in the test tests/test_train.py::test_float, "
            "a loop that calls the jitted `step`") in message
    assert "the host wait" in message and "dispatch cannot run ahead" in message
    assert "read it every k steps" in message and "`jax.device_get`" in message
    assert every_step["fix"] is None
    kinds = {marker: found[("pkg/train.py", line_of(TRAIN, marker))]["message"] for marker in TRIGGERS}
    assert "(.item() 30)" in kinds["(item every step)"]
    assert "(bool 40)" in kinds["(an if on an array)"]
    # Two conversions on each iteration count as one iteration.
    assert "on 25 of the 25 iterations" in kinds["(an f-string)"] and "(format 50)" in kinds["(an f-string)"]
    loop = line_of(TRAIN, "def train_logging") + 2
    assert f"on 30 of the 30 iterations of the loop at train.py:{loop}" in kinds["(in a helper called each step)"]
    assert "`update` (which calls the jitted `step`)" in kinds["(the jitted call one level down)"]
    # Below min-syncs, but on every one of the test's 8 steps (min-iterations-in-tests is 5).
    assert "on 8 of the 8 iterations" in kinds["(every one of 8 steps in a test)"]
    assert run.returncode == 1


def test_min_syncs_is_an_option(tmp_path: Path) -> None:
    root = project(tmp_path, "[tool.jaxlint.rules.JX309]\nmin-syncs = 5\n")
    run = pytest_run(root, "-k", "parametrized or fewer")
    assert "9 passed" in run.stdout, run.stdout + run.stderr
    # Every other step of 10: 5 syncs, half of the loop's iterations; 3 steps in each test stay quiet.
    assert set(syncs(root)) == {("pkg/train.py", line_of(TRAIN, "half of 10 steps"))}


def test_min_iterations_in_tests_is_an_option(tmp_path: Path) -> None:
    root = project(tmp_path, "[tool.jaxlint.rules.JX309]\nmin-iterations-in-tests = 9\n")
    run = pytest_run(root, "-k", "eight_steps or test_float")
    assert "2 passed" in run.stdout, run.stdout + run.stderr
    # The 8 steps are too few now; 50 steps reach min-syncs whatever this option says.
    assert set(syncs(root)) == {("pkg/train.py", line_of(TRAIN, "(float every step)"))}


AT_EXIT = '''\
import atexit

from jax._src.array import ArrayImpl


def _after_the_session():
    wrapped = [name for name in ("__float__", "__bool__", "__format__", "item", "__array__")
               if hasattr(ArrayImpl.__dict__[name], "__wrapped__")]
    print(f"\\nwrapped={wrapped}")


atexit.register(_after_the_session)
'''

VALUES = '''\
import jax.numpy as jnp
import numpy as np

from pkg import train


def test_values_are_what_they_are_without_jaxlint():
    _, losses = train.train_float(jnp.ones(3), jnp.ones((4, 3)), 3)
    assert losses == [9.0, 8.820899963378906, 8.645363807678223]  # as without the plugin
    x = jnp.arange(3.0)
    assert (x.tolist(), x[1].item(), int(x[2]), bool(x[1]), f"{x[1]:.2f}", np.asarray(x).tolist()) == \\
        ([0.0, 1.0, 2.0], 1.0, 2, True, "1.00", [0.0, 1.0, 2.0])
'''


def test_the_watching_changes_no_value_and_is_undone(tmp_path: Path) -> None:
    root = project(tmp_path)
    (root / "tests" / "test_train.py").write_text(VALUES)
    (root / "tests" / "conftest.py").write_text(AT_EXIT)
    run = pytest_run(root)
    assert "1 passed" in run.stdout, run.stdout + run.stderr
    assert "wrapped=[]" in run.stdout


SCRIPT = '''\
import jax.numpy as jnp

from pkg.train import step

w, x = jnp.ones(3), jnp.ones((4, 3))
for i in range(30):
    w, loss = step(w, x)
    print(f"{i} {float(loss):.3f}")  # expect JX309
for i in range(300):
    w, loss = step(w, x)
    if i % 100 == 0:
        print(float(loss))  # every 100th step
for i in range(8):
    w, loss = step(w, x)
    print(float(loss))  # every one of 8 steps: a test's threshold, not a program's
print("trained", float(w.sum()))
'''


def test_jaxlint_run_reports_a_programs_syncs(tmp_path: Path) -> None:
    root = project(tmp_path)
    (root / "script.py").write_text(SCRIPT)
    run = subprocess.run([sys.executable, "-m", "jaxlint", "run", "--no-cache", "--output-format", "json",
                          "-o", "report.json", "--", "python", "script.py"], cwd=root, env=environment(),
                         capture_output=True, text=True, timeout=600)
    assert "trained " in run.stdout, run.stdout + run.stderr
    found = syncs(root)
    assert set(found) == {("script.py", line_of(SCRIPT, "# expect JX309"))}
    message = found[("script.py", line_of(SCRIPT, "# expect JX309"))]["message"]
    assert "on 30 of the 30 iterations of the loop at script.py:6 (float 30) in this program's run" in message
    assert run.returncode == 1


NESTED = '''\
def f(xs):
    for x in xs:
        while x:
            x = g(x)
        h.update(x)
    return [y for y in xs]


class C:
    @staticmethod
    def m(n):
        for i in range(n):
            pass
'''


def test_the_watched_import_counts_each_loop_and_keeps_its_lines_and_callees(tmp_path: Path) -> None:
    path = str(tmp_path / "nested.py")
    first = len(loops.SITES)
    tree = loops.CountLoops(path).visit(ast.parse(NESTED))
    sites = loops.SITES[first:]
    assert [(s.start_line, s.end_line, s.function_line, s.callees) for s in sites] == [
        (3, 4, 1, ("g",)), (2, 5, 1, ("h.update", "g")), (12, 13, 10, ())]
    assert loops.site_at(path, 1, 4) == first and loops.site_at(path, 1, 5) == first + 1
    assert loops.site_at(path, 1, 6) is None and loops.site_at(path, 10, 13) == first + 2
    counted: list[int] = []
    namespace = {"g": lambda x: x - 1, "h": types.SimpleNamespace(update=lambda x: None), "__builtins__": {**vars(builtins), loops.COUNT: counted.append}}
    exec(compile(ast.fix_missing_locations(tree), path, "exec"), namespace)
    assert namespace["f"]([2, 1]) == [2, 1]  # the loops run as written
    assert counted == [first + 1, first, first, first + 1, first]
    namespace["C"].m(3)
    assert counted[5:] == [first + 2] * 3
