"""The first run on a project without configuration: a run that linted less than half of the JAX
functions it found says so on stderr (even with --quiet) with the step that reaches the rest, the
exit status stays ruff's, --show-untraced counts what the summary counts, and its hints fit how
each parameter is used. Through the real command line."""
from __future__ import annotations

import json
import re
import subprocess
import sys
from pathlib import Path

import pytest

from jaxlint.report.parameter_use import parameter_uses
from jaxlint.scan import hints
from jaxlint.scan.index import SourceIndex

REPO = Path(__file__).resolve().parent.parent
FOUNDING = (REPO / "examples" / "founding.py").read_text()

MODEL = """\
import jax
import jax.numpy as jnp


def init(key, n):
    return jax.random.normal(key, (n, 3))


def predict(params, x):
    return jnp.tanh(x @ params["w"] + params["b"])


def loss(params, batch):
    x, y = batch
    return jnp.mean((predict(params, x) - y) ** 2)


def step(params, opt_state, batch, training):
    if training:
        grads = jax.grad(loss)(params, batch)
        params = jax.tree_util.tree_map(lambda p, g: p - opt_state.learning_rate * g, params, grads)
    return params, opt_state


def pad(x, n):
    return jnp.zeros((n, x.shape[1])).at[: x.shape[0]].set(x)


def relay(x):
    return jnp.asarray(other(x))


def other(x):
    return jnp.float32(0) if x is None else x


fast_predict = jax.jit(predict)


if __name__ == "__main__":
    def main():
        print(init(jax.random.key(0), 4))
    main()
"""

TESTS = """\
import unittest

import jax.numpy as jnp

from model import predict


def test_predict():
    params = {"w": jnp.ones((3, 2)), "b": jnp.zeros(2)}
    assert predict(params, jnp.ones((4, 3))).shape == (4, 2)


class TestModel:
    def test_shape(self):
        assert jnp.zeros(2).shape == (2,)


def helper(x):
    return jnp.sin(x)


class ModelCase(unittest.TestCase):  # pytest collects a TestCase whatever its name
    def test_zeros(self):
        self.assertEqual(jnp.zeros(2).shape, (2,))
"""

# Unlinted functions beside the founding example (one JX101 finding, its one JAX function linted).
PLAIN = """\
import jax.numpy as jnp


def first(x):
    return jnp.sin(x)


def second(x):
    return jnp.cos(x)


def third(x):
    return jnp.tan(x)
"""


def jaxlint(*args: str, cwd: Path, infer: bool = False) -> subprocess.CompletedProcess:
    """``jaxlint check`` as a project without inference runs it (``--no-infer-arguments``): the
    ladder of steps these tests walk is about the functions nothing gives arguments."""
    if args[:1] == ("check",) and not infer:
        args = ("check", "--no-infer-arguments", *args[1:])
    return subprocess.run([sys.executable, "-m", "jaxlint", *args], cwd=cwd, capture_output=True,
                          text=True, timeout=600)


@pytest.fixture(scope="module")
def project(tmp_path_factory: pytest.TempPathFactory) -> Path:
    root = tmp_path_factory.mktemp("first_run")
    (root / "model.py").write_text(MODEL)
    (root / "tests").mkdir()
    (root / "tests" / "test_model.py").write_text(TESTS)
    return root


@pytest.fixture(scope="module")
def untraced(project: Path) -> subprocess.CompletedProcess:
    return jaxlint("check", "--show-untraced", ".", cwd=project)


def test_a_run_that_linted_nothing_says_so_even_with_quiet(project: Path) -> None:
    run = jaxlint("check", "-q", ".", cwd=project)
    assert run.returncode == 0 and run.stdout == ""  # no finding: ruff's exit status
    # 8 in model.py (main included) and the test file's helper; the tests themselves are not counted.
    assert run.stderr.startswith("jaxlint: warning: checked nothing: none of the 9 JAX functions found was "
                                 "linted; run `pytest --jaxlint`: it lints the JAX functions the tests run"), \
        run.stderr
    assert "files checked" not in run.stderr  # --quiet still drops the summary line


def test_without_tests_a_script_is_run_under_jaxlint_run(tmp_path: Path) -> None:
    (tmp_path / "model.py").write_text(MODEL)  # its `if __name__ == "__main__":` block
    run = jaxlint("check", "model.py", cwd=tmp_path)
    assert run.returncode == 0
    last = run.stderr.splitlines()[-1]
    assert last.startswith("jaxlint: warning: checked nothing: none of the 8 JAX functions found was linted; "
                           "run the program under `jaxlint run -- python model.py`"), run.stderr


def test_a_console_entry_is_a_program_too(tmp_path: Path) -> None:
    (tmp_path / "model.py").write_text(MODEL.split("\n\nif __name__")[0] + "\n")
    (tmp_path / "pyproject.toml").write_text('[project]\nname = "m"\n[project.scripts]\ntrain = "model:main"\n'
                                             "[tool.jaxlint]\n")
    run = jaxlint("check", ".", cwd=tmp_path)
    assert "functions found was linted; run the program under `jaxlint run -- train`" in run.stderr, run.stderr


def test_without_tests_or_a_program_the_step_is_infer_arguments(tmp_path: Path) -> None:
    (tmp_path / "model.py").write_text(MODEL.split("\n\nif __name__")[0] + "\n")
    run = jaxlint("check", "model.py", cwd=tmp_path)
    last = run.stderr.splitlines()[-1]
    assert last.startswith("jaxlint: warning: checked nothing: none of the 7 JAX functions found was linted; "
                           "`--infer-arguments` traces"), run.stderr


def test_with_inference_on_the_step_is_hints_not_infer_arguments(tmp_path: Path) -> None:
    """Inference is on by default: the warning does not suggest turning it on. MODEL's functions
    take pytrees and shape ints, which no guess traces, so most stay unlinted."""
    (tmp_path / "model.py").write_text(MODEL.split("\n\nif __name__")[0] + "\n")
    run = jaxlint("check", "model.py", cwd=tmp_path, infer=True)
    last = run.stderr.splitlines()[-1]
    assert last.startswith("jaxlint: warning: linted only 3 of 7 JAX functions; give the targets arguments: "
                           "a hint comment above each or an examples file"), run.stderr
    assert "--infer-arguments" not in run.stderr


def test_by_default_plain_functions_are_traced_with_inferred_arguments(tmp_path: Path) -> None:
    (tmp_path / "founding.py").write_text(FOUNDING)
    (tmp_path / "plain.py").write_text(PLAIN)
    run = jaxlint("check", "-q", ".", cwd=tmp_path, infer=True)
    assert run.returncode == 1 and "JX101" in run.stdout
    assert "linted only" not in run.stderr and "checked nothing" not in run.stderr, run.stderr
    assert "linted 4 of 4 JAX functions" in jaxlint("check", ".", cwd=tmp_path, infer=True).stderr


def test_tests_outside_the_checked_paths_count(project: Path) -> None:
    run = jaxlint("check", "model.py", cwd=project)  # tests/test_model.py is not checked
    assert "was linted; run `pytest --jaxlint`" in run.stderr, run.stderr


def test_less_than_half_warns_and_the_exit_status_stays_rufs(tmp_path: Path) -> None:
    (tmp_path / "founding.py").write_text(FOUNDING)
    (tmp_path / "plain.py").write_text(PLAIN)
    run = jaxlint("check", "-q", ".", cwd=tmp_path)
    assert run.returncode == 1 and "JX101" in run.stdout
    assert "jaxlint: warning: linted only 1 of 4 JAX functions; `--infer-arguments` traces" in run.stderr
    assert jaxlint("check", "-q", "--exit-zero", ".", cwd=tmp_path).returncode == 0
    as_json = jaxlint("check", "--output-format", "json", ".", cwd=tmp_path)
    assert as_json.returncode == 1
    assert [f["code"] for f in json.loads(as_json.stdout)] == ["JX101"]  # stdout holds only the report
    assert "linted only 1 of 4" in as_json.stderr


def test_a_run_that_linted_half_the_functions_does_not_warn(tmp_path: Path) -> None:
    (tmp_path / "founding.py").write_text(FOUNDING)
    (tmp_path / "plain.py").write_text(PLAIN.split("\n\n\ndef second")[0] + "\n")
    run = jaxlint("check", "-q", ".", cwd=tmp_path)
    assert run.returncode == 1 and run.stderr == ""
    assert "linted 1 of 2 JAX functions" in jaxlint("check", ".", cwd=tmp_path).stderr


def test_show_untraced_counts_what_the_summary_counts(untraced: subprocess.CompletedProcess) -> None:
    err = untraced.stderr.splitlines()
    assert "linted 0 of 9 JAX functions" in untraced.stderr
    assert "untraced functions (9 of 9 JAX functions):" in err
    entries = [line for line in err if line.startswith("  ") and not line.startswith("    ")]
    assert len(entries) == 9
    # fast_predict stands for predict, which it wraps: one entry, not two; tests are no JAX functions.
    assert [line.split(" [")[0].strip() for line in entries] == [
        "model.py:5: init", "model.py:13: loss", "model.py:18: step", "model.py:25: pad", "model.py:29: relay",
        "model.py:33: other", "model.py:37: fast_predict", "model.py:41: main", "tests/test_model.py:18: helper"]
    assert "model.py:41: main [not-imported]" in untraced.stderr


def hint_of(run: subprocess.CompletedProcess, function: str) -> tuple[str, str]:
    """The hint and note lines --show-untraced prints under ``function``."""
    err = run.stderr.splitlines()
    start = next(i for i, line in enumerate(err) if f": {function} [" in line)
    return err[start + 1].strip(), err[start + 2].strip() if len(err) > start + 2 else ""


def test_hints_fit_integers_booleans_keys_and_pytrees(untraced: subprocess.CompletedProcess) -> None:
    assert hint_of(untraced, "init")[0] == "# jaxlint: args key=key[], n=1"
    assert hint_of(untraced, "pad")[0] == "# jaxlint: args x=f32[...], n=1"
    assert hint_of(untraced, "loss")[0] == \
        "# jaxlint: args params={'w': f32[...], 'b': f32[...]}, batch=(f32[...], f32[...])"
    hint, note = hint_of(untraced, "step")
    assert hint == ("# jaxlint: args params={'w': f32[...], 'b': f32[...]}, opt_state=<pytree>, "
                    "batch=(f32[...], f32[...]), training=False")
    assert "opt_state is a pytree whose structure a hint cannot write (read as opt_state.learning_rate)" in note
    assert "examples file" in note
    hint, note = hint_of(untraced, "other")
    assert hint == "# jaxlint: args x=<unknown>" and "nothing in the function says what x holds" in note


@pytest.mark.parametrize("value", ["<unknown>", "<pytree>", "{'w': f32[...]}"])
def test_a_copied_placeholder_is_an_invalid_hint(value: str) -> None:
    with pytest.raises(hints.HintError, match=re.escape(f"x={value} is a placeholder --show-untraced suggests")):
        hints.parse_hint(f"x={value}")


def uses(source: str) -> dict[str, str]:
    index = SourceIndex("m.py", source)
    return {name: use.kind for name, use in parameter_uses(index, index.functions[0]).items()}


def test_parameter_use_reads_sizes_flags_keys_and_trees() -> None:
    head = "import jax\nimport jax.numpy as jnp\nfrom jax import random\n\n"
    assert uses(head + "def f(xs, ys, n):\n    return jnp.stack((xs, ys))[:n]\n") == \
        {"xs": "array", "ys": "array", "n": "int"}  # a tuple of arrays is no shape
    assert uses(head + "def f(k, seed, m):\n    return random.uniform(k, shape=(m,)), random.key(seed)\n") == \
        {"k": "key", "m": "int", "seed": "int"}
    assert uses(head + "def f(x, flag):\n    return x if not flag else -x\n") == {"flag": "bool"}
    assert uses(head + "def f(tree, fn):\n    return jax.tree.map(fn, tree)\n") == \
        {"tree": "pytree", "fn": "function"}
    assert uses(head + "def f(x, n):\n    return x.reshape(x.shape[0] // n, -1)\n") == \
        {"x": "array", "n": "int"}
    assert uses(head + "def f(*args, **kwargs):\n    return jnp.sum(args[0])\n") == {}
    assert uses(head + "def f(x):\n    return f(x)\n") == {}  # recursion stops
