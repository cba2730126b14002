"""Static fields without a default (equinox's ``eqx.field(static=True)``): a ``float`` gets 0.1, a
``tuple[int, ...]`` two items, a field typed with a class (an abstract one: its first concrete
subclass) an instance made from its own defaults, shown by its attributes, a ``jax.ShapeDtypeStruct``
an f32 scalar's (never an input), a ``frozenset`` an empty one; a field the class's
``__init__`` sets unchanged from a parameter takes that parameter's default. A field with a
default keeps it; one the ``__init__`` changes first does not take the parameter's default; an
annotation with no value (``str``, a bare ``dict``) leaves the method not linted, with why. One
check, in the test process; equinox is absent from the JAX 0.4.35 venv: skipped there."""
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


    class Integrator:  # abstract in fact: its subclasses integrate
        def __call__(self, x):
            raise NotImplementedError


    class Quadrature(Integrator):
        def __init__(self, points: int = 5):
            self.points = points

        def __call__(self, x):
            return x * self.points


    class Smoother(eqx.Module):
        weight: jax.Array
        eps: float = eqx.field(static=True)
        window: tuple[int, ...] = eqx.field(static=True)
        integrator: Integrator = eqx.field(static=True)

        def __call__(self, x, y):
            x = self.integrator(x) / (self.weight + self.eps) + len(self.window)
            x, y = jax.vmap(blackbox, in_axes=(None, 0))(x, y)
            return x[0], y


    class Threshold(eqx.Module):
        weight: jax.Array
        threshold: float = eqx.field(static=True)
        scale: float = eqx.field(static=True, default=3.0)

        def __init__(self, weight, threshold: float = 0.5):
            self.weight = weight
            self.threshold = threshold

        def __call__(self, x):
            return jnp.where(x < self.threshold, self.weight, x) * self.scale


    class Tight(Threshold):
        def __init__(self, weight, threshold: float = 0.25):
            super().__init__(weight, threshold)

        def __call__(self, x):
            return jnp.where(x > self.threshold, self.weight, x)


    class Rounded(eqx.Module):
        weight: jax.Array
        threshold: float = eqx.field(static=True)

        def __init__(self, weight, threshold: float = 0.5):
            threshold = round(threshold)
            self.weight = weight
            self.threshold = threshold

        def __call__(self, x):
            return jnp.where(x < self.threshold, self.weight, x)


    class Noise(eqx.Module):
        key: jax.Array
        shape: jax.ShapeDtypeStruct = eqx.field(static=True)
        tags: frozenset[object] = eqx.field(static=True)

        def sample(self, scale):
            return scale * jax.random.normal(self.key, self.shape.shape, self.shape.dtype)


    class Flat(eqx.Module):  # lineax's operators keep their structures flattened
        weight: jax.Array
        structure: tuple[list[jax.ShapeDtypeStruct], jax.tree_util.PyTreeDef] = eqx.field(static=True)

        def apply(self, x):
            leaves, treedef = self.structure
            return jax.tree_util.tree_unflatten(treedef, [jnp.reshape(self.weight * x, leaves[0].shape)])


    @dataclasses.dataclass
    class Draw:  # not a pytree: made inside the trace, its static shape never an input
        key: jax.Array
        shape: jax.ShapeDtypeStruct = dataclasses.field(metadata={"static": True})

        def sample(self, scale):
            return scale * jax.random.uniform(self.key, self.shape.shape, self.shape.dtype)


    class Named(eqx.Module):
        weight: jax.Array
        name: str = eqx.field(static=True)

        def __call__(self, x):
            return jnp.tanh(self.weight * x)


    class Lookup(eqx.Module):
        weight: jax.Array
        index: dict = eqx.field(static=True)

        def __call__(self, x):
            return jnp.tanh(self.weight * x)
''')


@pytest.fixture(scope="module")
def result(tmp_path_factory):
    pytest.importorskip("equinox")
    folder = tmp_path_factory.mktemp("statics")
    path = write(folder, "statics", MODULE)
    (folder / "pyproject.toml").write_text("[tool.jaxlint]\n")
    return check_in_process([str(path)], all_rules(), config=load_config([str(path)]))


def _signatures(result) -> dict[str, str]:
    return {t.target: t.signature for fa in result.files for t in fa.result.traced}


def test_a_float_a_tuple_of_ints_and_a_class_get_static_values(result) -> None:
    assert _signatures(result)["Smoother.__call__"] == (
        "self=Smoother(weight=f32[], eps=0.1, window=(2, 2), integrator=Quadrature(points=5)), x=f32[n], y=f32[n]")


def test_a_finding_in_its_method_is_reported_at_its_line(result) -> None:
    vmap_line = next(n for n, line in enumerate(MODULE.splitlines(), 1) if "jax.vmap" in line)
    [finding] = result.findings
    assert (finding.code, finding.target, finding.span.start_line) == ("JX101", "Smoother.__call__", vmap_line)
    assert "integrator=Quadrature(points=5)" in finding.message


def test_a_shape_field_gets_a_scalar_description_and_a_set_field_an_empty_one(result) -> None:
    signatures = _signatures(result)
    scalar = "ShapeDtypeStruct(shape=(), dtype=float32)"
    assert signatures["Noise.sample"] == f"self=Noise(key=key<fry>[], shape={scalar}, tags=frozenset()), scale=f32[]"
    assert signatures["Draw.sample"] == f"self=Draw(key=key<fry>[], shape={scalar}), scale=f32[]"
    assert signatures["Flat.apply"] == f"self=Flat(weight=f32[], structure=([{scalar}], PyTreeDef(*))), x=f32[]"


def test_the_init_default_of_a_field_it_sets_unchanged(result) -> None:
    signatures = _signatures(result)
    assert signatures["Threshold.__call__"] == "self=Threshold(weight=f32[], threshold=0.5, scale=3.0), x=f32[]"
    assert signatures["Tight.__call__"] == "self=Tight(weight=f32[], threshold=0.25, scale=3.0), x=f32[]"


def test_an_init_that_changes_the_parameter_gives_no_default(result) -> None:
    assert _signatures(result)["Rounded.__call__"] == "self=Rounded(weight=f32[], threshold=0.1), x=f32[]"


def test_an_annotation_without_a_value_stays_not_linted_with_why(result) -> None:
    skipped = {s.target: s.reason for _, s in result.skipped}
    assert skipped == {
        "Named.__call__": "arguments not inferred: no Named instance: self.name: a static field with no default",
        "Lookup.__call__": "arguments not inferred: no Lookup instance: self.index: a static field with no default",
    }
