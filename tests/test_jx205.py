"""JX205 recompiled-in-tests: a run-time rule, so it has no case file (``jaxlint check`` runs
nothing): real ``pytest --jaxlint`` sessions and a real ``jaxlint run``, in subprocesses, on small
generated projects, and the parsing of JAX's own explanations of real cache misses in this
process. Findings are compared by (file, code, line)."""
from __future__ import annotations

import json
import logging
import os
import subprocess
import sys
import textwrap
from pathlib import Path

import jax
import jax.numpy as jnp
import pytest

from jaxlint.jaxapi import config_state, logs, tracers

TRAIN = '''\
import jax
import jax.numpy as jnp


@jax.jit
def step(w, batch):
    return w - 0.1 * (batch @ w).sum()


def train(w, batches):
    for batch in batches:
        w = step(w, batch)  # expect JX205 (variable-length batches)
    return w


def apply_each(xs):
    out = []
    for x in xs:
        out.append(jax.jit(lambda v: v * 2.0)(x))  # expect JX203, JX205 (a new function object)
    return out


@jax.jit
def decay(state):
    return state * 0.5 + jnp.ones(())


def run_decay(steps, state=0.0):
    for _ in range(steps):
        state = decay(state)  # two compiles: the carry starts weakly typed
    return state
'''

TESTS = '''\
import jax.numpy as jnp
import pytest

from pkg.train import apply_each, run_decay, step, train


def test_variable_batches():
    assert train(jnp.ones(4), [jnp.ones((n, 4)) for n in (8, 7, 6, 5)]).shape == (4,)


def test_new_lambdas():
    assert len(apply_each([jnp.ones(3)] * 4)) == 4


def test_constant_batches():
    assert train(jnp.ones(4), [jnp.ones((3, 4))] * 5).shape == (4,)


def test_weak_carry():  # two compiles: below the default min-compiles
    assert run_decay(5).shape == ()


def test_cast_carry():  # the cast twin: one compile
    assert run_decay(5, jnp.float32(1.0)).shape == ()


@pytest.mark.parametrize("n", [1, 2, 3, 4, 5])
def test_shapes(n):  # each test compiles once: tests choose shapes on purpose
    assert train(jnp.ones(4), [jnp.ones((n, 4))]).shape == (4,)


def test_the_test_loops_over_shapes_itself():  # the test's own calls: its choice
    for n in (10, 11, 12, 13):
        step(jnp.ones(4), jnp.ones((n, 4)))


def test_the_test_calls_the_loop_with_shapes_it_chose():  # one compile in each call of train
    for n in (14, 15, 16, 17):
        train(jnp.ones(4), [jnp.ones((n, 4))] * 2)
'''


def line_of(text: str, marker: str) -> int:
    return next(n for n, line in enumerate(text.splitlines(), 1) if marker in line)


def project(tmp_path: Path, config: str = "") -> Path:
    (tmp_path / "pkg").mkdir()
    (tmp_path / "pkg" / "__init__.py").write_text("")
    (tmp_path / "pkg" / "train.py").write_text(TRAIN)
    (tmp_path / "tests").mkdir()
    (tmp_path / "tests" / "test_train.py").write_text(TESTS)
    (tmp_path / "pyproject.toml").write_text("[tool.jaxlint]\n" + textwrap.dedent(config))
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


def report(root: Path) -> list[dict]:
    return json.loads((root / "report.json").read_text())


def recompiles(root: Path) -> dict[tuple[str, int], dict]:
    return {(os.path.relpath(f["filename"], root), f["location"]["row"]): f for f in report(root)
            if f["code"] == "JX205"}


def test_a_function_compiled_again_and_again_in_one_test_is_reported_at_the_call(tmp_path: Path) -> None:
    root = project(tmp_path)
    run = pytest_run(root)
    assert "12 passed" in run.stdout, run.stdout + run.stderr
    found = recompiles(root)
    batches, lambdas = line_of(TRAIN, "(variable-length batches)"), line_of(TRAIN, "(a new function object)")
    # The near misses stay quiet: constant shapes, a parametrized test over shapes, a test that
    # loops over shapes itself, a weakly typed carry's two compiles, its cast twin.
    assert set(found) == {("pkg/train.py", batches), ("pkg/train.py", lambdas)}
    batch = found[("pkg/train.py", batches)]
    # At the call (columns 1-based in the JSON report): `step(w, batch)`.
    assert batch["location"]["column"] == TRAIN.splitlines()[batches - 1].index("step(") + 1
    assert batch["end_location"]["column"] == TRAIN.splitlines()[batches - 1].index("  #") + 1
    assert ("`step` (defined at train.py:5) compiled 4 times within one call of `train`, in the test "
            "tests/test_train.py::test_variable_batches") in batch["message"]
    assert "axis 0 of `batch` took 4 sizes (8, 7, 6, 5): pad or bucket the varying axis" in batch["message"]
    assert batch["fix"] is None
    made = found[("pkg/train.py", lambdas)]["message"]
    assert "compiled 4 times" in made and "a new function object each time, made at the same line" in made
    assert "hoist the `jax.jit`" in made
    assert run.returncode == 1


def test_under_xdist_each_worker_counts_its_own_tests(tmp_path: Path) -> None:
    root = project(tmp_path)
    run = pytest_run(root, "-n", "2")
    assert "12 passed" in run.stdout, run.stdout + run.stderr
    assert set(recompiles(root)) == {("pkg/train.py", line_of(TRAIN, "(variable-length batches)")),
                                     ("pkg/train.py", line_of(TRAIN, "(a new function object)"))}


def test_min_compiles_reports_a_weakly_typed_carry_and_the_cast_twin_stays_quiet(tmp_path: Path) -> None:
    root = project(tmp_path, "[tool.jaxlint.rules.JX205]\nmin-compiles = 2\n")
    run = pytest_run(root, "-k", "weak_carry or cast_carry")
    assert "2 passed" in run.stdout, run.stdout + run.stderr
    found = recompiles(root)
    assert set(found) == {("pkg/train.py", line_of(TRAIN, "two compiles: the carry"))}
    message = found[("pkg/train.py", line_of(TRAIN, "two compiles: the carry"))]["message"]
    assert "compiled 2 times within one call of `run_decay`, in the test tests/test_train.py::test_weak_carry" \
        in message
    assert ("`state` flipped from weakly typed (a Python scalar) to a JAX array, "
            "f32[]{weak_type=True} -> f32[]{weak_type=False}: cast the initial state") in message


CAPLOG = '''\
import logging

import jax
import jax.numpy as jnp


def test_logging_is_what_it_is_without_jaxlint(caplog):
    caplog.set_level(logging.DEBUG, logger="jax")
    f = jax.jit(lambda x: x + 1)
    for n in (1, 2, 3, 4):
        f(jnp.ones(n))
    assert [r for r in caplog.records if "TRACING CACHE MISS" in r.getMessage()] == []
'''

AT_EXIT = '''\
import atexit
import logging

import jax


def _after_the_session():
    from jaxlint.jaxapi.logs import CACHE_MISS_LOGGERS

    filters = sum(len(logging.getLogger(name).filters) for name in CACHE_MISS_LOGGERS)
    print(f"\\nexplain={jax.config.jax_explain_cache_misses} filters={filters}")


atexit.register(_after_the_session)
'''


@pytest.mark.slow
def test_the_watching_changes_no_test_s_logging_and_is_undone(tmp_path: Path) -> None:
    root = project(tmp_path)
    (root / "tests" / "test_train.py").write_text(CAPLOG)
    (root / "tests" / "conftest.py").write_text(AT_EXIT)
    run = pytest_run(root)
    assert "1 passed" in run.stdout, run.stdout + run.stderr
    assert "explain=False filters=0" in run.stdout


SCRIPT = '''\
import jax.numpy as jnp

from pkg.train import step

w = jnp.ones(4)
for n in (5, 6, 7):
    w = step(w, jnp.ones((n, 4)))  # expect JX205
for _ in range(3):
    w = step(w, jnp.ones((5, 4)))  # a size seen before: no compile
print("trained", float(w.sum()))
'''


def test_jaxlint_run_reports_a_programs_recompiles(tmp_path: Path) -> None:
    root = project(tmp_path)
    (root / "script.py").write_text(SCRIPT)
    run = subprocess.run([sys.executable, "-m", "jaxlint", "run", "--no-cache", "--output-format", "json",
                          "-o", "report.json", "--", "python", "script.py"], cwd=root, env=environment(),
                         capture_output=True, text=True, timeout=600)
    assert run.stdout.startswith("trained "), run.stdout + run.stderr
    found = recompiles(root)
    assert set(found) == {("script.py", line_of(SCRIPT, "# expect JX205"))}
    message = found[("script.py", line_of(SCRIPT, "# expect JX205"))]["message"]
    assert "compiled 3 times in this program's run" in message and "took 3 sizes (5, 6, 7)" in message
    assert run.returncode == 1


def _explained(calls: list) -> list:
    """The cache misses JAX explains while ``calls`` run in this process, parsed."""
    misses: list = []

    class Taken(logging.Filter):
        def filter(self, record: logging.LogRecord) -> bool:
            misses.append(logs.parse_cache_miss(record.getMessage()))
            return False

    taken = Taken()
    loggers = [logging.getLogger(name) for name in logs.CACHE_MISS_LOGGERS]
    for logger in loggers:
        logger.addFilter(taken)
    previous = config_state.explain_cache_misses(True)
    try:
        for call in calls:
            call()
    finally:
        config_state.explain_cache_misses(previous)
        for logger in loggers:
            logger.removeFilter(taken)
    return [m for m in misses if m is not None]


def test_jax_s_explanations_are_read_on_this_version() -> None:
    def scale(x, k):
        return x * k

    def double(x):
        return x * 2

    static = jax.jit(scale, static_argnums=1)
    jitted = jax.jit(double)
    misses = _explained([lambda: static(jnp.ones(3), 1.0), lambda: static(jnp.ones(3), 2.0),
                         lambda: jitted(jnp.ones(3)), lambda: jitted(jnp.ones(3, jnp.int32)),
                         lambda: jitted(jnp.ones((2, 3)))])
    assert [(m.function.rpartition(".")[2], m.unseen) for m in misses] == [
        ("scale", True), ("scale", False), ("double", True), ("double", False), ("double", False)]
    assert misses[0].defined_at.endswith(f"test_jx205.py:{scale.__code__.co_firstlineno}")
    static_change = misses[1].differences
    # Newer JAX names the static value; 0.4.x has no explanation for it.
    assert [(d.kind, d.before, d.now) for d in static_change] in ([("static", "1.0", "2.0")],
                                                                  [("unexplained", "", "")])
    assert [(d.kind, d.where, d.before, d.now) for d in misses[3].differences] == [
        ("type", "x", "f32[3]", "i32[3]")]
    assert [(d.kind, d.where) for d in misses[4].differences] == [("type", "x")]
    assert misses[4].differences[0].now.startswith("f32[2,3]")  # newer JAX may add the sharding: ({})


def test_an_inner_jit_traced_into_an_outer_one_is_not_a_compile_of_its_own() -> None:
    def twice(x):
        return x * 2

    inner = jax.jit(twice)
    outer = jax.jit(lambda x: inner(x) + 1)
    under: dict[str, bool] = {}

    class Seen(logging.Filter):
        def filter(self, record: logging.LogRecord) -> bool:
            miss = logs.parse_cache_miss(record.getMessage())
            if miss is not None:
                under[miss.function.rpartition(".")[2]] = tracers.under_jit()
            return False

    seen = Seen()
    loggers = [logging.getLogger(name) for name in logs.CACHE_MISS_LOGGERS]
    for logger in loggers:
        logger.addFilter(seen)
    previous = config_state.explain_cache_misses(True)
    try:
        outer(jnp.ones(5))
    finally:
        config_state.explain_cache_misses(previous)
        for logger in loggers:
            logger.removeFilter(seen)
    assert under == {"<lambda>": False, "twice": True}  # the outer at the top; the inner under its trace


def test_the_compiles_jax_logs_are_read_on_this_version() -> None:
    # jax_log_compiles' record of each compile: the function and each input's sharding, which tell
    # a compile no tracing-cache miss explains (tests/test_sharded_rules_rest.py: on 8 devices).
    messages: list[str] = []

    class Taken(logging.Filter):
        def filter(self, record: logging.LogRecord) -> bool:
            messages.append(record.getMessage())
            return False

    taken = Taken()
    logger = logging.getLogger(logs.COMPILE_LOGGER)
    logger.addFilter(taken)
    previous = config_state.log_compiles(True)
    try:
        def twice(x, y):
            return x * 2 + y

        jax.jit(twice)(jnp.ones(3), jnp.ones(3))
    finally:
        config_state.log_compiles(previous)
        logger.removeFilter(taken)
    parsed = [logs.parse_compile(m) for m in messages]
    assert ("twice", ("UnspecifiedValue", "UnspecifiedValue")) in parsed, messages
    assert logs.parse_compile("Compiling jit(f) with global shapes and types (ShapedArray(float32[8,16]),). "
                                "Argument mapping: (NamedSharding(mesh=Mesh('data': 4, 'model': 2, axis_types="
                                "(Auto, Auto)), spec=P(('data', 'model'), None), memory_kind=device),).") == \
        ("f", ("P(('data', 'model'), None)",))
