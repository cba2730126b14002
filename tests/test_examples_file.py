"""Arguments from an examples file (``[tool.jaxlint] examples = [...]``), end to end.

Each project is a temporary folder with a pyproject.toml naming ``tests/jaxlint_examples.py``;
the whole check runs on it, with real traces. Most run in the test process
(helpers.check_in_process: the worker's analysis without a worker process); an examples file that
raises (user code the worker catches) and the examples file's runs across the modules of one
worker keep the real worker, and so does the command line.
"""
import subprocess
import sys
import textwrap
from dataclasses import asdict
from pathlib import Path

import pytest
from helpers import check_in_process

from jaxlint.engine.check import check
from jaxlint.engine.results import CheckResult
from jaxlint.model import Finding
from jaxlint.rules import all_rules

PYPROJECT = '[tool.jaxlint]\nexamples = ["tests/jaxlint_examples.py"]\n'

# The founding pattern in a jitted train step taking a parameter pytree.
TRAIN = """\
import jax
import jax.numpy as jnp


def blackbox(x, y):
    return x + 1, y * 2


@jax.jit
def train_step(params, batch):
    w, y = jax.vmap(blackbox, in_axes=(None, 0))(params["w"], batch)
    return w[0] + params["b"], y


# jaxlint: args x=f32[7, 2]
def hinted(x):
    return jax.vmap(lambda row: row * 2)(x)


def called_at_import(x):
    return jax.vmap(lambda row: row * 2)(x)


def scaled(x, k):
    return jax.vmap(lambda row: row * k)(x)


class Scaler:
    def __init__(self, k):
        self.k = k

    def apply(self, x):
        return jax.vmap(lambda row: row * self.k)(x)


called_at_import(jnp.ones((2, 3)))
"""

EXAMPLES = """\
import jax
import jax.numpy as jnp
import numpy as np
import jaxlint
from functools import partial
from mypkg.train import Scaler, called_at_import, hinted, scaled, train_step

# Real arrays: jaxlint keeps their shapes and dtypes.
params = {"w": jnp.zeros((3, 4)), "b": np.zeros(4, np.float32)}
batch = jax.ShapeDtypeStruct((10, 5), jnp.float32)
jaxlint.example(train_step, params, batch)
jaxlint.example(train_step, params={"w": jnp.zeros((6, 4)), "b": jnp.zeros(4)}, batch=batch)
jaxlint.example(hinted, jnp.ones((3, 3)))  # the hint wins
jaxlint.example(called_at_import, jnp.ones((5, 3)))  # beats the import-time call
jaxlint.example(Scaler(2.0).apply, jnp.ones((4, 3)))  # a bound method
jaxlint.example(partial(scaled, k=3), jnp.ones((4, 3)))  # a partial: its function
"""


def write(root: Path, files: dict[str, str]) -> Path:
    for name, content in files.items():
        path = root / name
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(textwrap.dedent(content))
    return root


def run(root: Path) -> CheckResult:
    """The real pipeline: one worker process."""
    return check([str(root)], all_rules(), jobs=1)


def run_in_process(root: Path) -> CheckResult:
    return check_in_process([str(root)], all_rules(), jobs=1)


def traced(result: CheckResult) -> dict[str, dict]:
    return {t["target"]: t for fa in result.files if fa.result for t in map(asdict, fa.result.traced)}


def in_file(result: CheckResult, root: Path, name: str, code: str | None = None) -> list[Finding]:
    return [f for f in result.findings if Path(f.path) == root / name and code in (None, f.code)]


def line_of(root: Path, name: str, text: str) -> int:
    lines = (root / name).read_text().splitlines()
    return next(i for i, line in enumerate(lines, 1) if text in line)


@pytest.fixture(scope="module")
def project(tmp_path_factory) -> tuple[Path, CheckResult]:
    root = write(tmp_path_factory.mktemp("examples"), {
        "pyproject.toml": PYPROJECT, "mypkg/__init__.py": "", "mypkg/train.py": TRAIN,
        "tests/jaxlint_examples.py": EXAMPLES})
    return root, run_in_process(root)


def test_parameter_pytree_of_real_arrays_finds_the_founding_pattern(project):
    root, result = project
    step = traced(result)["train_step"]
    assert step["source"] == "examples"
    assert step["signature"] == "{'b': f32[4], 'w': f32[3,4]}, f32[10,5]"
    jx101 = in_file(result, root, "mypkg/train.py", "JX101")
    assert [f.span.start_line for f in jx101] == [line_of(root, "mypkg/train.py", "jax.vmap(blackbox")]
    assert [f for f in result.findings if f.code.startswith("JX9")] == []


def test_two_registrations_are_two_signatures_and_one_finding(project):
    _, result = project
    assert traced(result)["train_step"]["signatures"] == [
        "{'b': f32[4], 'w': f32[3,4]}, f32[10,5]",
        "params={'b': f32[4], 'w': f32[6,4]}, batch=f32[10,5]",
    ]
    assert len([f for f in result.findings if f.code == "JX101"]) == 1  # same finding, deduplicated


@pytest.mark.parametrize("target, source, signature", [
    ("hinted", "hint", "x=f32[7,2]"),  # a hint beats the examples file
    ("called_at_import", "examples", "f32[5,3]"),  # the examples file beats the import-time call
    ("Scaler.apply", "examples", "<Scaler object>, f32[4,3]"),  # obj.method: obj goes first
    ("scaled", "examples", "f32[4,3], k=3"),
])
def test_precedence_and_spellings(project, target, source, signature):
    _, result = project
    assert (traced(result)[target]["source"], traced(result)[target]["signature"]) == (source, signature)


def test_examples_file_that_raises_is_a_finding_and_the_rest_is_analyzed(tmp_path):
    """User code that raises, caught by the worker: the real worker."""
    root = write(tmp_path, {"pyproject.toml": PYPROJECT, "mod.py": """\
        import jax
        import jax.numpy as jnp


        def registered(x):
            return jax.vmap(lambda row: row * 2)(x)


        def called(x):
            return jax.vmap(lambda row: row * 2)(x)


        called(jnp.ones((2, 3)))
        """, "tests/jaxlint_examples.py": """\
        import jax.numpy as jnp
        import jaxlint
        from mod import registered

        jaxlint.example(registered, jnp.ones((4, 3)))
        raise ValueError("no data here")
        """})
    result = run(root)
    [failure] = in_file(result, root, "mod.py", "JX901")
    assert (failure.span.start_line, failure.span.start_col) == (1, 0)
    assert failure.message == ("the examples file tests/jaxlint_examples.py:6 raised ValueError: no "
                               "data here; the examples it registers after that line are missing")
    # The registration made before the error is used; the other target still traced.
    assert traced(result)["registered"]["source"] == "examples"
    assert traced(result)["called"]["source"] == "import-call"


def test_examples_file_runs_only_for_modules_it_registers_in(tmp_path):
    """What one worker remembers across modules: the real worker."""
    body = "import jax\n\n\ndef f(x):\n    return jax.vmap(lambda r: r)(x)\n"
    root = write(tmp_path, {"pyproject.toml": PYPROJECT, "a.py": body, "b.py": body, "c.py": body,
                            "tests/jaxlint_examples.py": """\
        import os

        import jax.numpy as jnp
        import jaxlint
        from b import f

        with open(os.path.join(os.path.dirname(__file__), "runs.txt"), "a") as log:
            log.write("run\\n")
        jaxlint.example(f, jnp.ones((2, 3)))
        """})
    result = run(root)
    # The examples file gives b.py's f its arguments; a.py's and c.py's are guessed (inference is on).
    assert {fa.source.path.rsplit("/", 1)[1]: [t.source for t in fa.result.traced] for fa in result.files
            if fa.job} == {"a.py": ["inferred"], "b.py": ["examples"], "c.py": ["inferred"]}
    # One worker: the run for a.py (the first module) learns that only b.py is registered in;
    # b.py runs it again to bind its own objects; c.py skips it.
    assert (root / "tests" / "runs.txt").read_text().count("run") == 2


def test_missing_examples_file_is_a_usage_error(tmp_path):
    write(tmp_path, {"pyproject.toml": PYPROJECT, "mod.py": "import jax\n"})
    run = subprocess.run([sys.executable, "-m", "jaxlint", "check", "."], cwd=tmp_path,
                         capture_output=True, text=True, timeout=300)
    assert run.returncode == 2
    assert "examples file not found" in run.stderr and "jaxlint_examples.py" in run.stderr


def test_example_outside_jaxlint_is_harmless_and_import_stays_jax_free():
    code = ("import sys, jaxlint; from jaxlint.worker.examples_api import REGISTRY; "
            "jaxlint.example(len, [1, 2]); assert len(REGISTRY) == 1 and REGISTRY[0].line == 1; "
            "assert 'jax' not in sys.modules")
    run = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=300)
    assert run.returncode == 0, run.stderr


FLAX_MODEL = """\
import flax.linen as nn
import jax


def blackbox(x, y):
    return x + 1, y * 2


class MLP(nn.Module):
    features: int = 4

    @nn.compact
    def __call__(self, x, y):
        h = nn.Dense(self.features)(x)
        h, y = jax.vmap(blackbox, in_axes=(None, 0))(h, y)
        return h[0], y

    def encode(self, x, y):
        h, y = jax.vmap(blackbox, in_axes=(None, 0))(x, y)
        return h[0], y
"""


def test_flax_linen_module_through_apply(tmp_path):
    pytest.importorskip("flax")
    root = write(tmp_path, {"pyproject.toml": PYPROJECT, "model.py": FLAX_MODEL,
                            "tests/jaxlint_examples.py": """\
        import jax
        import jax.numpy as jnp
        import jaxlint
        from model import MLP

        x, y = jnp.ones(3), jnp.ones((7, 4))
        model = MLP()
        variables = model.init(jax.random.PRNGKey(0), x, y)  # real parameters
        jaxlint.example(model.apply, variables, x, y)  # traces MLP.__call__
        jaxlint.example(model, x, y)  # variables from model.init, as shapes
        jaxlint.example(model.apply, {}, x, y, method=MLP.encode)  # another method
        jaxlint.example(model, x)  # y is missing: init fails, a finding; the rest is used
        """})
    result = run_in_process(root)
    [failure] = [f for f in result.findings if f.code.startswith("JX9")]
    assert (failure.code, failure.span.start_line) == ("JX901", 1)
    assert failure.message.startswith("the example at tests/jaxlint_examples.py:12 cannot be used: TypeError")
    call = traced(result)["MLP.__call__"]
    assert call["source"] == "examples" and len(call["signatures"]) == 2
    assert call["signatures"][0].startswith("{'params': {'Dense_0': {'bias': f32[4], 'kernel': f32[3,4]}}}")
    assert traced(result)["MLP.encode"]["source"] == "examples"
    lines = {f.span.start_line for f in in_file(result, root, "model.py", "JX101")}
    assert lines == {line_of(root, "model.py", "vmap(blackbox, in_axes=(None, 0))(h, y)"),
                     line_of(root, "model.py", "vmap(blackbox, in_axes=(None, 0))(x, y)")}


def test_equinox_module_instance(tmp_path):
    pytest.importorskip("equinox")
    root = write(tmp_path, {"pyproject.toml": PYPROJECT, "model.py": """\
        import equinox as eqx
        import jax


        def blackbox(x, y):
            return x + 1, y * 2


        class Linear(eqx.Module):
            w: jax.Array

            def __call__(self, x, y):
                h, y = jax.vmap(blackbox, in_axes=(None, 0))(x @ self.w, y)
                return h[0], y
        """, "tests/jaxlint_examples.py": """\
        import jax.numpy as jnp
        import jaxlint
        from model import Linear

        model = Linear(jnp.ones((3, 4)))
        jaxlint.example(model, jnp.ones(3), jnp.ones((7, 4)))  # its __call__
        jaxlint.example(model.__call__, jnp.ones(3), jnp.ones((7, 4)))  # the same signature
        """})
    result = run_in_process(root)
    call = traced(result)["Linear.__call__"]
    assert call["source"] == "examples"
    # The module is a pytree: its array is a traced input, not a constant.
    assert call["signatures"] == ["Linear(f32[3,4]), f32[3], f32[7,4]"] * 2
    [finding] = in_file(result, root, "model.py", "JX101")
    assert finding.span.start_line == line_of(root, "model.py", "jax.vmap(blackbox")


def test_plain_functions_closures_and_methods_are_traced_as_registered(tmp_path):
    """No target in the file: the examples file alone names what to trace."""
    root = write(tmp_path, {"pyproject.toml": PYPROJECT, "numerics.py": """\
        import jax
        import jax.numpy as jnp


        def safe_log(x):
            return jnp.where(x > 0, jnp.log(x), 0.0)


        def make_step(dt):
            def step(state, key):
                noise = jax.random.normal(key, state.shape)
                return state + dt * noise * jnp.where(state > 0, jnp.sqrt(state), 0.0)
            return step


        class Loss:
            def __init__(self, scale):
                self.scale = scale

            def __call__(self, x):
                return self.scale * jnp.where(x > 0, jnp.log1p(x) / jnp.sqrt(x), 0.0)
        """, "tests/jaxlint_examples.py": """\
        import jax
        import jax.numpy as jnp
        import jaxlint
        from numerics import Loss, make_step, safe_log

        jaxlint.example(safe_log, jnp.ones(8))
        jaxlint.example(make_step(0.1), jnp.ones(3), jax.random.key(0))  # a closure
        jaxlint.example(Loss(2.0), jnp.ones(4))  # an instance: its __call__
        """})
    result = run_in_process(root)
    assert {name: t["source"] for name, t in traced(result).items()} == {
        "safe_log": "examples", "make_step.<locals>.step": "examples", "Loss.__call__": "examples"}
    assert sorted((f.code, f.span.start_line) for f in result.findings) == [
        ("JX501", 6), ("JX501", 12), ("JX501", 21)]
    assert result.linted == result.jax_functions == 3
