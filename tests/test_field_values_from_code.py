"""Values of fields the class's own code gives (issue 48, reachstatic2): a static field the
``__init__`` sets through a function of the library's own package (``self.mode =
_mode_init(mode)``) takes that function's result for the default; a field no role fits that the
``__init__`` sets unchanged takes the ``__init__``'s default (lineax's ``args=None``); a
configuration object held in a static field keeps its own defaults, a float's included; a field or
parameter annotated with jax's ``Initializer``, or named ``kernel_init`` without an annotation,
gets ``jax.nn.initializers.lecun_normal()``; a linen module's field typed with a module class (an
abstract one in fact: its concrete subclass with the fewest fields without a default) gets one made
from its configuration. Near misses stay not linted, with why. One check per
module, in the test process; equinox and flax are absent from the JAX 0.4.35 venv: skipped there."""
from __future__ import annotations

import os
import textwrap

import pytest
from helpers import check_in_process, write

from jaxlint.config import load_config
from jaxlint.rules import all_rules

MODULE = textwrap.dedent('''\
    import dataclasses
    import os
    from typing import Any

    import equinox as eqx
    import jax
    import jax.numpy as jnp


    def _mode_init(mode: str) -> str:
        os.environ["JAXLINT_TEST_MODE_INIT"] = mode  # a side effect the safeguards put back
        mode = mode.upper()
        if mode not in ("ZEROS", "REFLECT"):
            raise ValueError(mode)
        return mode


    def _strict(mode: str) -> str:
        raise ValueError("no default mode")


    class Padded(eqx.Module):
        weight: jax.Array
        mode: str = eqx.field(static=True)

        def __init__(self, weight, mode: str = "zeros"):
            self.weight = weight
            self.mode = _mode_init(mode)

        def __call__(self, x):
            return jnp.tanh(self.weight * x) if self.mode == "ZEROS" else x


    class Refused(eqx.Module):  # the function refuses its own default: no value
        weight: jax.Array
        mode: str = eqx.field(static=True)

        def __init__(self, weight, mode: str = "zeros"):
            self.weight = weight
            self.mode = _strict(mode)

        def __call__(self, x):
            return jnp.tanh(self.weight * x)


    class Builtin(eqx.Module):  # str() is no function of this package: no value
        weight: jax.Array
        mode: str = eqx.field(static=True)

        def __init__(self, weight, mode: str = "zeros"):
            self.weight = weight
            self.mode = str(mode)

        def __call__(self, x):
            return jnp.tanh(self.weight * x)


    class Jacobian(eqx.Module):
        x: jax.Array
        args: Any

        def __init__(self, x, args: Any = None):
            self.x = x
            self.args = args

        def mv(self, v):
            return jnp.tanh(self.x * v) if self.args is None else v


    class Changed(eqx.Module):  # the __init__ changes it: its default is not the field's value
        x: jax.Array
        args: Any

        def __init__(self, x, args: Any = None):
            self.x = x
            self.args = () if args is None else args

        def mv(self, v):
            return jnp.tanh(self.x * v)


    @dataclasses.dataclass(frozen=True)
    class Config:
        layers: int = 2
        cutoff: float = 5.0


    class Backbone(eqx.Module):
        weight: jax.Array
        config: Config = eqx.field(static=True)

        def __call__(self, x):
            return jnp.tanh(self.weight * x) * self.config.cutoff


    @dataclasses.dataclass(frozen=True)
    class Table:
        radii: jax.Array
        cutoff: float = 5.0
        masses: jax.Array = None
        charges: Any = dataclasses.field(default=None)
        bonds: jax.Array = dataclasses.field(default_factory=lambda: jnp.zeros(2))


    class Lookup(eqx.Module):  # its table has an array without a default: not static
        weight: jax.Array
        table: Table = eqx.field(static=True)

        def __call__(self, x):
            return jnp.tanh(self.weight * x)
''')

LINEN = textwrap.dedent('''\
    import jax
    import jax.numpy as jnp
    from flax import linen as nn


    class Policy(nn.Module):
        size: int
        kernel_init: jax.nn.initializers.Initializer

        @nn.compact
        def __call__(self, obs):
            return jnp.tanh(nn.Dense(self.size, kernel_init=self.kernel_init)(obs))


    class Stateful(nn.Module):  # named like a function's state, not an initializer
        size: int
        state_init: object

        @nn.compact
        def __call__(self, obs):
            return jnp.tanh(nn.Dense(self.size)(obs))


    class Cell(nn.Module):  # abstract in fact (flax's RNNCellBase): its subclasses fill initialize_carry
        @nn.nowrap
        def initialize_carry(self, rng, shape):
            raise NotImplementedError


    class ConvCell(Cell):  # first by name, but it wants more configuration: the plainer cell first
        features: int
        kernel_size: tuple[int, ...]

        @nn.compact
        def __call__(self, carry, x):
            raise ValueError("takes images")

        @nn.nowrap
        def initialize_carry(self, rng, shape):
            return jnp.zeros(shape)


    class TanhCell(Cell):
        features: int

        @nn.compact
        def __call__(self, carry, x):
            h = jnp.tanh(nn.Dense(x.shape[-1])(x) + carry)
            return h, h

        @nn.nowrap
        def initialize_carry(self, rng, shape):
            return jnp.zeros(shape)


    class Recurrent(nn.Module):
        cell: Cell

        def __call__(self, x):
            carry, y = self.cell(jnp.zeros_like(x), x)
            return carry + y


    class Wrapped(nn.Module):  # any module at all: no guess at which
        layer: nn.Module

        def __call__(self, x):
            return jnp.tanh(self.layer(x))


    def make_layer(size: int, kernel_init):
        def apply(key, x):
            kernel = kernel_init(key, (x.shape[-1], size))
            return jnp.tanh(x @ kernel)
        return apply
''')


def _check(folder, name, source):
    path = write(folder, name, source)
    (folder / "pyproject.toml").write_text("[tool.jaxlint]\n")
    return check_in_process([str(path)], all_rules(), config=load_config([str(path)]))


@pytest.fixture(scope="module")
def result(tmp_path_factory):
    pytest.importorskip("equinox")
    return _check(tmp_path_factory.mktemp("fromcode"), "fromcode", MODULE)


@pytest.fixture(scope="module")
def linen(tmp_path_factory):
    pytest.importorskip("flax.linen")
    return _check(tmp_path_factory.mktemp("initializers"), "initializers", LINEN)


def _signatures(result) -> dict[str, str]:
    return {t.target: t.signature for fa in result.files for t in fa.result.traced}


def _skipped(result) -> dict[str, str]:
    return {s.target: s.reason for _, s in result.skipped}


def test_a_field_set_through_a_function_of_the_package_takes_its_result(result) -> None:
    assert _signatures(result)["Padded.__call__"] == "self=Padded(weight=f32[], mode='ZEROS'), x=f32[]"
    assert "JAXLINT_TEST_MODE_INIT" not in os.environ  # the call ran under the factories' safeguards


def test_a_function_that_refuses_the_default_or_a_builtin_gives_no_value(result) -> None:
    skipped = _skipped(result)
    for name in ("Refused", "Builtin"):
        assert skipped[f"{name}.__call__"] == (
            f"arguments not inferred: no {name} instance: self.mode: a static field with no default")


def test_a_field_no_role_fits_takes_the_init_default_it_is_set_to(result) -> None:
    assert _signatures(result)["Jacobian.mv"] == "self=Jacobian(x=f32[], args=None), v=f32[]"
    # Not Changed's None (its __init__ changes it): an Any field its method never reads is an array
    # (containers.py).
    assert _signatures(result)["Changed.mv"] == "self=Changed(x=f32[], args=f32[]), v=f32[]"


def test_a_static_configuration_keeps_its_own_defaults(result) -> None:
    assert _signatures(result)["Backbone.__call__"] == (
        "self=Backbone(weight=f32[], config=Config(layers=2, cutoff=5.0)), x=f32[]")


def test_a_static_instance_with_an_array_without_default_is_not_made(result) -> None:
    assert _skipped(result)["Lookup.__call__"].startswith("arguments not inferred: no Lookup instance: self.table")


def test_an_initializer_field_gets_lecun_normal(linen) -> None:
    signature = _signatures(linen)["Policy.__call__"]
    assert signature.startswith("self=Policy(size=2, kernel_init=jax.nn.initializers.lecun_normal(), variables=")


def test_a_factory_parameter_named_kernel_init_gets_it_too(linen) -> None:
    assert "make_layer.<locals>.apply" in _signatures(linen)


def test_a_field_named_like_state_init_gets_none(linen) -> None:
    assert "Stateful.__call__" in _skipped(linen)


def test_a_module_field_gets_the_plainest_concrete_subclass_made_from_its_configuration(linen) -> None:
    signature = _signatures(linen)["Recurrent.__call__"]
    assert signature.startswith("self=Recurrent(cell=TanhCell(features=2), variables=")


def test_a_field_typed_with_any_module_gets_none(linen) -> None:
    assert _skipped(linen)["Wrapped.__call__"] == (
        "arguments not inferred: no Wrapped instance: self.layer: a static field with no default")
