"""Inferred arguments by a parameter's name and annotation (issue 48, argsources/sizes.py): a
function of sizes alone is traced with concrete sizes and counts as linted only where its own
lines made operations; index-named arrays are i32, shape-named parameters a concrete shape,
count-named ones a static int. One project, one check, in the test process.
"""
from __future__ import annotations

import textwrap
from pathlib import Path

import pytest
from helpers import check_in_process, write

from jaxlint.config import load_config
from jaxlint.report.coverage import coverage
from jaxlint.rules import all_rules

MODULE = textwrap.dedent('''\
    from typing import NamedTuple

    import jax
    import jax.numpy as jnp


    def eig_state_init(num_dim: int, normalized: bool = True):
        v0 = jnp.ones((num_dim,)) / jnp.sqrt(num_dim)
        return v0, jnp.ones(())


    def basis_row(num_dim: int):
        return jnp.eye(num_dim)[10]  # out of bounds at jaxlint's 8, not at the user's 16: left out


    def build_schedule(num_steps: int, window: int = 25):  # Python values only: no operation
        schedule = [(step, step < window) for step in range(num_steps)]
        return schedule, jax.device_count()


    def by_flags(enable: bool):  # flags alone: nothing to size
        return jnp.zeros(3) if enable else jnp.ones(3)


    def by_name(platform: str):
        return jnp.zeros(len(platform))


    def make_adaptation(diagonal=True):
        def init(n_dims: int):
            return jnp.ones(n_dims), jnp.zeros(n_dims)

        def update(mm_state, position):
            return mm_state[0] + jnp.mean(position), mm_state[1]

        return init, update


    class NeighborList(NamedTuple):
        idx: jax.Array
        position: jax.Array

        def neighbor_sum(self):
            return jnp.sum(self.position[self.idx], axis=0)


    def gather_rows(x, row_indices):
        return jnp.take(x, row_indices, axis=0) * 2.0


    def filled(shape):
        return jnp.full(shape, 0.5) * 2.0


    def initialize_carry(key, input_shape: tuple[int, ...]):
        return jax.random.normal(key, input_shape[:-1] + (4,))


    def halve(x, num_steps):
        return jax.lax.fori_loop(0, num_steps, lambda i, c: c * 0.5, x)
    ''')


@pytest.fixture(scope="module")
def checked(tmp_path_factory: pytest.TempPathFactory):
    root: Path = tmp_path_factory.mktemp("sizes")
    path = write(root, "sizes", MODULE)
    (root / "pyproject.toml").write_text("[tool.jaxlint]\n")
    return check_in_process([str(path)], all_rules(), config=load_config([str(path)]))


def signatures(result) -> dict[str, str]:
    return {t.target: t.signature for fa in result.files for t in fa.result.traced}


def linted(result) -> dict[str, bool]:
    return {f.function: f.linted for f in coverage(result).functions}


def test_a_size_only_function_is_linted_with_the_sizes_shown(checked) -> None:
    assert signatures(checked)["eig_state_init"] == "num_dim=8"
    assert linted(checked)["eig_state_init"]


def test_a_size_only_closure_of_a_factory_is_linted_with_the_sizes(checked) -> None:
    assert signatures(checked)["make_adaptation.<locals>.init"] == "n_dims=8"
    assert linted(checked)["make_adaptation.<locals>.init"]


def test_a_size_only_function_that_returns_python_values_stays_not_linted(checked) -> None:
    assert signatures(checked)["build_schedule"] == "num_steps=8"
    assert not linted(checked)["build_schedule"]
    [entry] = [u for u in coverage(checked).untraced if u.target == "build_schedule"]
    assert (entry.kind, entry.reason) == ("no-operations", "traced, but none of its own lines made an operation")


def test_flags_or_strings_alone_are_not_guessed(checked) -> None:
    skipped = {s.target: s.reason for _, s in checked.skipped}
    assert skipped["by_flags"] == "arguments not inferred: no parameter takes an array"
    assert skipped["by_name"] == "arguments not inferred: parameter platform: str"


def test_an_index_field_is_an_integer_array_that_indexes_another(checked) -> None:
    assert signatures(checked)["NeighborList.neighbor_sum"] == "self=NeighborList(idx=i32[n], position=f32[n])"
    assert linted(checked)["NeighborList.neighbor_sum"]


def test_an_index_parameter_is_an_integer_array(checked) -> None:
    assert signatures(checked)["gather_rows"] == "x=f32[n], row_indices=i32[n]"


def test_a_shape_parameter_is_a_concrete_shape(checked) -> None:
    assert signatures(checked)["filled"] == "shape=(8,)"
    assert signatures(checked)["initialize_carry"].endswith("input_shape=(8,)")


def test_a_count_parameter_is_a_static_int(checked) -> None:
    assert signatures(checked)["halve"] == "x=f32[], num_steps=2"


def test_a_finding_about_the_sizes_jaxlint_chose_is_left_out(checked) -> None:
    assert signatures(checked)["basis_row"] == "num_dim=8"
    [left] = coverage(checked).left_out
    assert (left.target, left.code) == ("basis_row", "JX503")
    assert "out of bounds for axis 0 of length 8" in left.message and "num_dim=8" in left.message


def test_nothing_is_reported_and_every_failure_is_quiet(checked) -> None:
    assert checked.findings == []
