"""Methods of flax linen modules: the module made from its configuration fields is bound, inside
the trace, to the variables ``model.init`` makes for the method's guessed arguments
(worker/argsources/linen_instances.py). One check per module, in the test process."""
from __future__ import annotations

import textwrap
from pathlib import Path

import pytest
from helpers import check_in_process, write

from jaxlint.config import load_config
from jaxlint.report.coverage import coverage
from jaxlint.rules import all_rules

MODULE = textwrap.dedent('''\
    import jax
    import jax.numpy as jnp
    from flax import linen as nn


    def blackbox(x, y):
        x = x + 1
        return x, x * y


    class Dense(nn.Module):
        features: int
        use_bias: bool = True

        @nn.compact
        def __call__(self, x):
            kernel = self.param("kernel", nn.initializers.lecun_normal(), (x.shape[-1], self.features))
            a, _ = jax.vmap(blackbox, in_axes=(None, 0))(jnp.sum(kernel), x)
            return x @ kernel + a[0]


    class MLP(nn.Module):
        hidden: int

        def setup(self):
            self.dense = Dense(self.hidden)

        def __call__(self, x):
            return jnp.tanh(self.dense(x))


    class Picky(nn.Module):
        @nn.compact
        def __call__(self, x):
            if x.shape != (5, 3):  # no guess has this shape: init fails on each
                raise ValueError("takes a batch of five")
            return jnp.tanh(nn.Dense(2)(x))
''')


@pytest.fixture(scope="module")
def result(tmp_path_factory):
    pytest.importorskip("flax.linen")
    folder = tmp_path_factory.mktemp("linen")
    path = write(folder, "layers", MODULE)
    (folder / "pyproject.toml").write_text("[tool.jaxlint]\n")
    return check_in_process([str(path)], all_rules(), config=load_config([str(path)]))


def test_a_linen_method_runs_on_the_module_bound_to_its_variables(result) -> None:
    signatures = {t.target: t.signature for fa in result.files for t in fa.result.traced}
    assert signatures == {
        "Dense.__call__": "self=Dense(features=2, variables={'params': {'kernel': f32[n,2]}}), x=f32[n]",
        "MLP.__call__": "self=MLP(hidden=2, variables={'params': {'dense': {'kernel': f32[n,2]}}}), x=f32[n]"}
    linted = {f.function: f.linted for f in coverage(result).functions}
    assert linted["Dense.__call__"] and linted["MLP.__call__"]


def test_a_finding_in_a_linen_method_is_reported_at_its_line(result) -> None:
    vmap_line = next(n for n, line in enumerate(MODULE.splitlines(), 1) if "jax.vmap" in line)
    [finding] = result.findings
    assert (finding.code, finding.target, finding.span.start_line) == ("JX101", "Dense.__call__", vmap_line)
    assert "(seen with arguments jaxlint inferred: self=Dense(features=2, variables=" in finding.message


def test_a_module_whose_init_fails_on_every_guess_is_counted_with_why(result) -> None:
    skipped = {s.target: s.reason for _, s in result.skipped}
    assert list(skipped) == ["Picky.__call__"]
    assert skipped["Picky.__call__"].startswith("arguments not inferred: no Picky instance: model.init failed on "
                                                "every guess: ValueError: takes a batch of five")


GUESSED_SIZES = textwrap.dedent('''\
    import jax.numpy as jnp
    from flax import linen as nn


    class Heads(nn.Module):
        heads: int  # no default: jaxlint guesses 2

        @nn.compact
        def __call__(self, x):
            table = self.param("table", nn.initializers.zeros, (self.heads,))
            return jnp.tanh(x * table[3])  # out of bounds only at the guessed 2 heads
    ''')


def test_a_finding_that_judges_guessed_configuration_sizes_is_left_out(tmp_path: Path) -> None:
    pytest.importorskip("flax.linen")
    path = write(tmp_path, "heads", GUESSED_SIZES)
    (tmp_path / "pyproject.toml").write_text("[tool.jaxlint]\n")
    result = check_in_process([str(path)], all_rules(), config=load_config([str(path)]))
    assert [t.target for fa in result.files if fa.result for t in fa.result.traced] == ["Heads.__call__"]
    assert [f.code for f in result.findings] == []
    assert [f.code for fa in result.files if fa.result for f in fa.result.left_out] == ["JX503"]
