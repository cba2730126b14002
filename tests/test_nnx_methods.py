"""Methods and constructors of flax nnx modules: ``self`` made by the module's ``__init__`` from
guessed sizes and ``nnx.Rngs(0)``, its variables the trace's inputs, abstract
(worker/argsources/nnx_instances.py). One check per module, in the test process."""
from __future__ import annotations

import textwrap

import pytest
from helpers import check_in_process, write

from jaxlint.config import load_config
from jaxlint.report.coverage import coverage
from jaxlint.rules import all_rules

MODULE = textwrap.dedent('''\
    import jax
    import jax.numpy as jnp
    from flax import nnx


    def blackbox(x, y):
        x = x + 1
        return x, x * y


    class Dense(nnx.Module):
        def __init__(self, in_features: int, out_features: int, *, rngs: nnx.Rngs):
            self.kernel = nnx.Param(jax.random.normal(rngs.params(), (in_features, out_features)))
            self.bias = nnx.Param(jnp.zeros((out_features,)))

        def __call__(self, x):
            a, _ = jax.vmap(blackbox, in_axes=(None, 0))(jnp.sum(self.kernel[...]), x)
            return x @ self.kernel[...] + self.bias[...] + a[0]


    class Positive(nnx.Module):
        def __init__(self, features: int, *, rngs: nnx.Rngs):
            self.scale = nnx.Param(jax.random.uniform(rngs.params(), (features,)))

        def __call__(self, x):
            return jnp.tanh(x * self.scale[...])

        def pull(self, x):
            return jax.grad(lambda y: jnp.linalg.norm(y - self.scale[...]))(x)


    class Stacked(nnx.Module):
        def __init__(self, inner: nnx.Module):
            self.inner = inner

        def __call__(self, x):
            return jnp.tanh(self.inner(x))


    class Window(nnx.Module):
        def __init__(self, features: int, *, rngs: nnx.Rngs):
            self.low = nnx.Param(jnp.zeros((features,)))
            self.high = nnx.Param(jnp.ones((features,)))

        def __call__(self, x):  # high == low: a point of the variables alone, left out
            return jnp.clip((x - self.low[...]) / (self.high[...] - self.low[...]), 0.0, 1.0)

        def scaled(self, x, width):  # the point is the argument's: reported
            return jnp.clip((x - self.low[...]) / width, 0.0, 1.0)


    class Lookup(nnx.Module):
        def __init__(self, size: int, *, rngs: nnx.Rngs):
            self.table = nnx.Param(jnp.zeros((size,)))

        def __call__(self, x):  # index 5 is past the end at the guessed size 2, not at the user's
            return jnp.tanh(x * self.table[...][5])


    class Checked(nnx.Module):
        def __init__(self, features: int, *, rngs: nnx.Rngs):
            scale = jnp.ones((features,))
            if not bool(jnp.all(scale > 0)):  # reads a value: made in fact, not abstractly
                raise ValueError("scale must be positive")
            self.scale = nnx.Param(scale)

        def __call__(self, x):
            return jnp.tanh(x * self.scale[...])


    class Residual(nnx.Module):
        def __init__(self, inner: Dense):
            self.inner = inner

        def __call__(self, x):
            return x + jnp.tanh(self.inner(x))


    class Running(nnx.Pytree):
        def __init__(self, decay: float = 0.9):
            self.decay = decay
            self.total = nnx.Variable(jnp.log1p(jnp.full((), decay)))

        def smoothed(self):
            return jnp.exp(self.decay * self.total[...])


    class Settings(nnx.Pytree):
        def __init__(self, name: str = "a"):
            self.name = name

        def describe(self):
            return jnp.zeros(3)


    class Table:
        def __init__(self, scale):
            self.scale = scale


    class Holder:
        def __init__(self, table: Table):
            self.table = table

        def __call__(self, x):
            return jnp.tanh(x * self.table.scale)
''')


@pytest.fixture(scope="module")
def result(tmp_path_factory):
    pytest.importorskip("flax.nnx")
    folder = tmp_path_factory.mktemp("nnx")
    path = write(folder, "layers", MODULE)
    (folder / "pyproject.toml").write_text("[tool.jaxlint]\n")
    return check_in_process([str(path)], all_rules(), config=load_config([str(path)]))


def _signatures(result) -> dict[str, str]:
    return {t.target: t.signature for fa in result.files for t in fa.result.traced}


def test_an_nnx_method_runs_on_the_module_its_init_makes_from_guessed_sizes(result) -> None:
    signatures = _signatures(result)
    assert signatures["Dense.__call__"] == ("self=Dense(in_features=2, out_features=2, rngs=Rngs(0), "
                                            "variables={'bias': f32[2], 'kernel': f32[2,2]}), x=f32[2]")
    assert signatures["Positive.__call__"].startswith("self=Positive(features=2, rngs=Rngs(0), "
                                                      "variables={'scale': f32[2]}), x=")
    linted = {f.function: f.linted for f in coverage(result).functions}
    assert linted["Dense.__call__"] and linted["Positive.__call__"]


def test_a_finding_in_an_nnx_method_is_reported_at_its_line(result) -> None:
    vmap_line = next(n for n, line in enumerate(MODULE.splitlines(), 1) if "jax.vmap" in line)
    found = [(f.code, f.target, f.span.start_line) for f in result.findings]
    assert ("JX101", "Dense.__call__", vmap_line) in found
    [finding] = [f for f in result.findings if f.target == "Dense.__call__"]
    assert "self=Dense(in_features=2, out_features=2, rngs=Rngs(0), variables=" in finding.message


def test_an_nnx_constructor_is_traced_with_a_traced_rngs_key(result) -> None:
    signatures = _signatures(result)
    assert signatures["Dense.__init__"] == "in_features=2, out_features=2, rngs=key<fry>[]"
    assert signatures["Positive.__init__"] == "features=2, rngs=key<fry>[]"


def test_a_finding_on_the_method_argument_and_the_variables_is_kept(result) -> None:
    pull_line = next(n for n, line in enumerate(MODULE.splitlines(), 1) if "def pull" in line) + 1
    assert ("JX704", "Positive.pull", pull_line) in [(f.code, f.target, f.span.start_line) for f in result.findings]


def test_a_bad_point_among_the_variables_alone_is_left_out(result) -> None:
    window_line = next(n for n, line in enumerate(MODULE.splitlines(), 1) if "self.high[...] - self.low" in line)
    scaled_line = next(n for n, line in enumerate(MODULE.splitlines(), 1) if ") / width" in line)
    [left] = [f for fa in result.files for f in fa.result.left_out if f.target == "Window.__call__"]
    assert (left.code, left.target, left.span.start_line) == ("JX501", "Window.__call__", window_line)
    found = [(f.code, f.target, f.span.start_line) for f in result.findings]
    assert ("JX501", "Window.scaled", scaled_line) in found


def test_a_finding_that_judges_the_guessed_sizes_is_left_out(result) -> None:
    assert "Lookup.__call__" in _signatures(result)
    assert [f.code for f in result.findings if f.target == "Lookup.__call__"] == []
    assert "JX503" in [f.code for fa in result.files for f in fa.result.left_out if f.target == "Lookup.__call__"]


def test_an_nnx_module_whose_init_takes_another_module_is_counted_with_why(result) -> None:
    skipped = {s.target: s.reason for _, s in result.skipped}
    assert skipped["Stacked.__call__"].startswith("arguments not inferred: no Stacked instance: ")


def test_a_plain_class_whose_init_needs_an_object_stays_as_it_was(result) -> None:
    skipped = {s.target: s.reason for _, s in result.skipped}
    assert "Holder.__call__" not in _signatures(result)
    assert "variables=" not in skipped["Holder.__call__"] and "Rngs" not in skipped["Holder.__call__"]


def test_an_nnx_pytree_method_with_no_array_parameter_runs_on_its_variables(result) -> None:
    assert _signatures(result)["Running.smoothed"] == "self=Running(variables={'total': f32[]})"


def test_an_nnx_constructor_without_rngs_runs_on_constants(result) -> None:
    assert _signatures(result)["Running.__init__"] == ""
    linted = {f.function: f.linted for f in coverage(result).functions}
    assert linted["Running.__init__"]


def test_an_nnx_pytree_with_no_variable_and_no_array_parameter_is_counted_with_why(result) -> None:
    skipped = {s.target: s.reason for _, s in result.skipped}
    assert skipped["Settings.describe"] == ("arguments not inferred: no Settings instance: neither its variables nor "
                                            "the method's parameters take an array")


def test_an_nnx_module_that_takes_a_module_of_a_named_class_gets_one(result) -> None:
    assert _signatures(result)["Residual.__call__"] == (
        "self=Residual(inner=Dense(in_features=2, out_features=2, rngs=Rngs(0)), "
        "variables={'inner': {'bias': f32[2], 'kernel': f32[2,2]}}), x=f32[2]")


def test_an_nnx_module_whose_init_reads_a_value_is_made_in_fact(result) -> None:
    assert _signatures(result)["Checked.__call__"] == (
        "self=Checked(features=2, rngs=Rngs(0), variables={'scale': f32[2]}), x=f32[]")
