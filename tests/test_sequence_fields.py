"""Fields that hold a tuple or list of instances jaxlint builds (equinox's ``MLP.layers:
tuple[Linear, ...]``): two of them (one of each for ``tuple[A, B]``), each built by the same
rules, shown by their fields. A bare ``tuple`` says nothing of its items: counted with why.
One check, in the test process."""
from __future__ import annotations

import textwrap

import pytest
from helpers import check_in_process, write

from jaxlint.config import load_config
from jaxlint.rules import all_rules

MODULE = textwrap.dedent('''\
    import dataclasses

    import equinox as eqx
    import jax
    import jax.numpy as jnp


    def blackbox(x, y):
        x = x + 1
        return x, x * y


    class Linear(eqx.Module):
        weight: jax.Array

        def __call__(self, x):
            return jnp.dot(self.weight, x)


    class MLP(eqx.Module):
        layers: tuple[Linear, ...]

        def __call__(self, x, y):
            for layer in self.layers:
                x = jax.nn.relu(layer(x))
            x, y = jax.vmap(blackbox, in_axes=(None, 0))(x, y)
            return x[0], y


    @dataclasses.dataclass
    class Scale:  # not a pytree: made inside the trace
        w: jax.Array


    @dataclasses.dataclass
    class Chain:
        steps: list[Scale]

        def __call__(self, x):
            return jnp.tanh(self.steps[0].w * self.steps[1].w * x)


    class Bare(eqx.Module):
        layers: tuple

        def __call__(self, x):
            return jnp.tanh(self.layers[0](x))
''')


@pytest.fixture(scope="module")
def result(tmp_path_factory):
    pytest.importorskip("equinox")
    folder = tmp_path_factory.mktemp("sequences")
    path = write(folder, "layers", MODULE)
    (folder / "pyproject.toml").write_text("[tool.jaxlint]\n")
    return check_in_process([str(path)], all_rules(), config=load_config([str(path)]))


def test_a_tuple_of_modules_holds_two_built_ones(result) -> None:
    signatures = {t.target: t.signature for fa in result.files for t in fa.result.traced}
    linear = "Linear(weight=f32[])"  # x and y at rank 1 (x[0], vmap's in_axes): rank 0's fields
    assert signatures["MLP.__call__"] == f"self=MLP(layers=({linear}, {linear})), x=f32[n], y=f32[n]"
    assert signatures["Chain.__call__"] == "self=Chain(steps=[Scale(w=f32[]), Scale(w=f32[])]), x=f32[]"


def test_a_finding_in_its_method_is_reported_at_its_line(result) -> None:
    vmap_line = next(n for n, line in enumerate(MODULE.splitlines(), 1) if "jax.vmap" in line)
    [finding] = result.findings
    assert (finding.code, finding.target, finding.span.start_line) == ("JX101", "MLP.__call__", vmap_line)
    assert "self=MLP(layers=(Linear(weight=f32[]), Linear(weight=f32[])))" in finding.message


def test_a_bare_tuple_stays_untraced_with_why(result) -> None:
    skipped = {s.target: s.reason for _, s in result.skipped}
    assert skipped == {"Bare.__call__": "arguments not inferred: no Bare instance: self.layers: tuple (its item [0] is called)"}
