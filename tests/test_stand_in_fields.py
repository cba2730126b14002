"""Fields and method parameters that hold a function: the factories' stand-in (worker/standins.py)
is their value, shown in the signature, so a method of a class that keeps a function is traced.
One check per module, in the test process."""
from __future__ import annotations

import textwrap
from pathlib import Path

import pytest
from helpers import check_in_process, write

from jaxlint.config import load_config
from jaxlint.rules import all_rules

MODULE = textwrap.dedent('''\
    import dataclasses
    from typing import Callable

    import jax
    import jax.numpy as jnp


    def blackbox(x, y):
        x = x + 1
        return x, x * y


    @dataclasses.dataclass
    class Term:
        vector_field: Callable
        scale: jax.Array

        def apply(self, x, y):
            x, y = jax.vmap(blackbox, in_axes=(None, 0))(self.vector_field(x) * self.scale, y)
            return x[0], y

        def guarded(self, x):
            # The stand-in's value is not x itself: a guard on x is no guard on vector_field(x).
            return jnp.where(x > 0, jnp.log(self.vector_field(x)), 0.0)


    @dataclasses.dataclass
    class Solver:
        rtol: float

        def step(self, fn: Callable, y):
            return jnp.tanh(fn(y)) * self.rtol


    @dataclasses.dataclass
    class Layers:
        layers: tuple

        def __call__(self, x):
            return jnp.tanh(self.layers[0](x))
''')


def _checked(tmp_path: Path, text: str):
    path = write(tmp_path, "terms", text)
    (tmp_path / "pyproject.toml").write_text("[tool.jaxlint]\n")
    return check_in_process([str(path)], all_rules(), config=load_config([str(path)]))


def test_a_callable_field_gets_a_stand_in(tmp_path: Path) -> None:
    result = _checked(tmp_path, MODULE)
    signatures = {t.target: t.signature for fa in result.files for t in fa.result.traced}
    # x and y at rank 1 (x[0], vmap's in_axes) beside rank-0 fields
    field = "self=Term(vector_field=<stand-in: its first argument>, scale=f32[])"
    assert signatures["Term.apply"] == f"{field}, x=f32[n], y=f32[n]"
    assert signatures["Term.guarded"].startswith("self=Term(vector_field=<stand-in: its first argument>, ")
    assert signatures["Solver.step"] == "self=Solver(rtol=f32[]), fn=<stand-in: its first argument>, y=f32[]"
    vmap_line = next(n for n, line in enumerate(MODULE.splitlines(), 1) if "jax.vmap" in line)
    assert [(f.code, f.target, f.span.start_line) for f in result.findings] == [("JX101", "Term.apply", vmap_line)]
    assert f"(seen with arguments jaxlint inferred: {field}" in result.findings[0].message


def test_a_field_no_stand_in_fits_stays_untraced(tmp_path: Path) -> None:
    result = _checked(tmp_path, MODULE)
    skipped = {s.target: s.reason for _, s in result.skipped}
    assert skipped == {"Layers.__call__": "arguments not inferred: no Layers instance: self.layers: tuple (its item [0] is called)"}


def test_a_static_callable_field_of_an_equinox_module_gets_one(tmp_path: Path) -> None:
    pytest.importorskip("equinox")
    result = _checked(tmp_path, textwrap.dedent('''\
        from typing import Callable

        import equinox as eqx
        import jax
        import jax.numpy as jnp


        class Activation(eqx.Module):
            activation: Callable = eqx.field(static=True)
            weight: jax.Array

            def __call__(self, x):
                return self.activation(jnp.dot(x, self.weight))
    '''))
    signatures = {t.target: t.signature for fa in result.files for t in fa.result.traced}
    assert signatures == {"Activation.__call__": "self=Activation(activation=<stand-in: its first argument>, "
                                                 "weight=f32[]), x=f32[]"}  # jnp.dot takes scalars


UNIONS = textwrap.dedent('''\
    from typing import Callable, Union

    import jax
    import jax.numpy as jnp

    Array = jax.Array
    DisplacementOrMetricFn = Union[Callable[[Array, Array], Array], Callable[[Array, Array], float]]


    def pair_distances(metric: DisplacementOrMetricFn, R: Array):  # jax_md's map_product
        d = jax.vmap(jax.vmap(metric, (0, None)), (None, 0))(R, R)
        return jnp.where(d > 0, jnp.log(d), 0.0)  # expect JX501


    def scaled(value: Union[float, Array, Callable[[int], float]], x: Array):  # a constant or a schedule
        return jnp.tanh(x) * value
    ''')


def test_a_union_of_function_types_gets_a_stand_in_and_one_with_numbers_an_array(tmp_path: Path) -> None:
    """``Array`` in a ``Callable``'s text made the union an array: the vmap over it failed."""
    result = _checked(tmp_path, UNIONS)
    signatures = {t.target: t.signature for fa in result.files for t in fa.result.traced}
    assert signatures == {"pair_distances": "metric=<stand-in: its first argument>, R=f32[n]",
                          "scaled": "value=f32[n], x=f32[]"}
    assert [(f.code, f.target) for f in result.findings] == [("JX501", "pair_distances")]
