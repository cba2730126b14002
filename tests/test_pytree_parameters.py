"""Parameters that take a pytree by their name or annotation (issue 48: ``tree``, ``params``,
``x: Any``, ``x: PyTree``): traced with a one-leaf pytree, an f32 array of the rung's rank, shown
in the signature (worker/argsources/pytrees.py); a body that needs the pytree's structure leaves
the function counted as not linted, with why; a function's or object's name is no pytree.
One project, one check, in the test process.
"""
from __future__ import annotations

import textwrap
from pathlib import Path

import pytest
from helpers import check_in_process, expected_markers, write

from jaxlint.config import load_config
from jaxlint.report.coverage import coverage
from jaxlint.rules import all_rules

MODULE = textwrap.dedent('''\
    import dataclasses
    import functools
    from typing import Any

    import jax
    import jax.numpy as jnp
    import numpy as np


    def safe_sqrt_tree(tree):
        return jax.tree_util.tree_map(lambda x: jnp.where(x > 0, jnp.sqrt(x), 0.0), tree)  # expect JX501


    def project(params: Any, x):
        y = params @ x
        return jnp.where(y > 0, jnp.log(y), 0.0)  # expect JX501


    def kinetic(state):  # a dict's method: needs a structure, not guessed (an attribute read is made up: made_up.py)
        return 0.5 * sum(jnp.sum(v ** 2) for v in state.values())


    def first_moment(opt_state):
        return jnp.log(opt_state[0])  # a tuple's item: not guessed


    def smooth(kernel, x):  # a kernel is no pytree: not guessed
        return jnp.convolve(x, kernel)


    def apply(fn, x):  # a function: its stand-in, no array
        return jnp.tanh(fn(x))


    def sgd(updates, params):
        rate = 0.1

        def unused(g):  # never called, and over a local: its lines never run in a trace
            return jnp.exp(g) * rate

        return jax.tree_util.tree_map(lambda p, u: p - 0.1 * u, params, updates)


    class Scaler:
        def __init__(self, scale: float):
            self.scale = scale

        def update(self, grads):
            return jax.tree_util.tree_map(lambda g: jnp.log(g) * self.scale, grads)


    @dataclasses.dataclass
    class Solver:  # a field holding a NumPy scalar type, shown by its name (jaxopt's ScipyWrapper)
        dtype: Any = np.float64

        def run(self, init_params: Any):
            return jnp.tanh(init_params)


    def running_sum(tree):  # fails with the symbol n: traced again with n = 8
        return jax.tree_util.tree_map(lambda x: jax.lax.associative_scan(jnp.add, x), tree)


    def positional(f):  # a wrapper that passes its arguments on by position
        @functools.wraps(f)
        def call(*args):
            return f(*args)

        return call


    def make_decay(rate: float):
        @positional
        def decay(tree):
            return jax.tree_util.tree_map(lambda x: x * rate, tree)

        return decay
    ''')


@pytest.fixture(scope="module")
def checked(tmp_path_factory: pytest.TempPathFactory):
    root: Path = tmp_path_factory.mktemp("pytrees")
    path = write(root, "trees", MODULE)
    (root / "pyproject.toml").write_text("[tool.jaxlint]\n")
    return check_in_process([str(path)], all_rules(), config=load_config([str(path)]))


def signatures(result) -> dict[str, str]:
    return {t.target: t.signature for fa in result.files for t in fa.result.traced}


def skipped(result) -> dict[str, str]:
    return {s.target: s.reason for _, s in result.skipped}


def test_a_tree_map_over_a_tree_is_linted_with_a_one_leaf_pytree(checked) -> None:
    assert signatures(checked)["safe_sqrt_tree"] == "tree=f32[] (a one-leaf pytree)"
    finding = next(f for f in checked.findings if f.target == "safe_sqrt_tree")
    assert "seen with arguments jaxlint inferred: tree=f32[] (a one-leaf pytree)" in finding.message


def test_a_parameter_annotated_any_used_as_an_array_is_linted(checked) -> None:
    assert signatures(checked)["project"] == "params=f32[n] (a one-leaf pytree), x=f32[n]"


def test_the_findings_are_the_marked_ones(checked) -> None:
    assert {(f.code, f.span.start_line) for f in checked.findings} == expected_markers(MODULE)


def test_a_body_that_needs_the_structure_is_not_linted_and_says_why(checked) -> None:
    reasons = skipped(checked)
    assert reasons["kinetic"] == ("arguments not inferred: parameter state (a pytree: its code reads "
                                  "state.values, which a one-leaf pytree has not)")
    assert reasons["first_moment"] == ("arguments not inferred: parameter opt_state (a pytree: its code indexes "
                                       "opt_state[0], which a one-leaf pytree has not)")


def test_a_function_or_kernel_is_not_given_an_array(checked) -> None:
    assert skipped(checked)["smooth"] == ("arguments not inferred: parameter kernel "
                                          "(a function, pytree or object, by its name)")
    assert signatures(checked)["apply"] == "fn=<stand-in: its first argument>, x=f32[]"


def test_a_method_gets_one_leaf_pytrees_too(checked) -> None:
    assert signatures(checked)["Scaler.update"] == "self=Scaler(scale=f32[]), grads=f32[] (a one-leaf pytree)"


def test_a_retry_with_sizes_still_shows_the_one_leaf_pytree(checked) -> None:
    assert signatures(checked)["running_sum"] == "tree=f32[8] (a one-leaf pytree)"


def test_a_field_holding_a_numpy_type_is_shown(checked) -> None:
    assert signatures(checked)["Solver.run"] == ("self=Solver(dtype=<class 'numpy.float64'>), "
                                                 "init_params=f32[] (a one-leaf pytree)")


def test_a_wrapper_that_takes_its_arguments_by_position_is_not_linted_with_one_leaf_pytrees(checked) -> None:
    """By position the signature could not show the guess (worker/closures.py): counted, with why."""
    assert skipped(checked)["make_decay.<locals>.decay"] == (
        "arguments not inferred: a wrapper takes its one-leaf pytrees by position")


def test_a_nested_function_counts_as_linted_only_where_it_ran(checked) -> None:
    linted = {f.function: f.linted for f in coverage(checked).functions}
    assert linted["sgd"] and not linted["sgd.<locals>.unused"]
    assert signatures(checked)["sgd"] == "updates=f32[] (a one-leaf pytree), params=f32[] (a one-leaf pytree)"
