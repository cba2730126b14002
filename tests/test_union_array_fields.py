"""A field annotated with a union whose first jaxtyping array member gives its shape (dynamax's
``mean: Union[Float[Array, " state_dim"], ParameterProperties]``): the instance jaxlint builds gets
that member's dims (a named dim the symbolic size or the rung's, 8), not the ladder's rank, and so does a
function's required parameter (the annotations source, its dims symbolic and shared by name); a union
that also allows an array of no stated shape (``jax.Array``) keeps the ladder (issue 48).
"""
from __future__ import annotations

import textwrap
from pathlib import Path

import pytest
from helpers import check_in_process, write

from jaxlint.config import load_config
from jaxlint.rules import all_rules

pytest.importorskip("jaxtyping")  # only to check that it is installed: the user's module imports it

MODULE = textwrap.dedent('''\
    from typing import NamedTuple, Optional, Union

    import jax
    import jax.numpy as jnp
    from jaxtyping import Array, Float


    class Properties:  # dynamax's ParameterProperties: a class the field may hold instead
        pass


    class Initial(NamedTuple):
        mean: Union[Float[Array, " state_dim"], Properties]
        cov: Union[Properties, Float[Array, "state_dim state_dim"], Float[Array, "ntime state_dim state_dim"]]


    class Loose(NamedTuple):
        mean: Union[Float[Array, " state_dim"], jax.Array]  # an array of any shape allowed: no shape


    class Maybe(NamedTuple):
        mean: Optional[Float[Array, " state_dim"]]


    def initial_log_prob(initial: Initial, x):
        return jnp.sum(initial.mean * x) + jnp.linalg.slogdet(initial.cov)[1]


    def loose_mean(loose: Loose):
        return jnp.sin(loose.mean)


    def maybe_mean(maybe: Maybe):
        return jnp.sin(maybe.mean)


    def smooth(initial: Float[Array, " k"], transition: Optional[Union[Float[Array, "k k"], Float[Array, "t k k"]]]):
        return transition @ initial


    def loose_argument(x: Union[Float[Array, "k k"], jax.Array]):
        return jnp.sin(x)
    ''')


@pytest.fixture(scope="module")
def signatures(tmp_path_factory: pytest.TempPathFactory) -> dict[str, str]:
    root: Path = tmp_path_factory.mktemp("unions")
    path = write(root, "params", MODULE)
    (root / "pyproject.toml").write_text("[tool.jaxlint]\n")
    result = check_in_process([str(path)], all_rules(), config=load_config([str(path)]))
    return {t.target: f"{t.source}: {t.signature}" for fa in result.files for t in fa.result.traced}


def test_a_union_field_takes_its_first_jaxtyping_member_shape(signatures) -> None:
    assert signatures["initial_log_prob"] == "inferred: initial=Initial(mean=f32[n], cov=f32[n,n]), x=f32[]"


def test_an_optional_jaxtyping_field_takes_its_shape(signatures) -> None:
    assert signatures["maybe_mean"] == "inferred: maybe=Maybe(mean=f32[n])"


def test_a_union_with_an_unshaped_array_keeps_the_ladder(signatures) -> None:
    assert signatures["loose_mean"] == "inferred: loose=Loose(mean=f32[])"


def test_a_required_union_parameter_takes_its_first_jaxtyping_member(signatures) -> None:
    """The annotations source: its dims symbolic and shared by name across the signature."""
    assert signatures["smooth"] == "annotations: initial=f32[k], transition=f32[k,k]"


def test_a_union_parameter_with_an_unshaped_array_is_left_to_the_ladder(signatures) -> None:
    assert signatures["loose_argument"] == "inferred: x=f32[]"
