"""Parameters read by the conventions of JAX code (issue 48: library reach, flax's shapes): an axis
annotated ``Union[int, Sequence[int]]`` is the last axis; ``dimension_numbers``, ``precision`` and
``preferred_element_type`` get lax's values; arrays named like lengths are i32; a ``key`` beside a
``query`` is an attention's keys; an array-annotated ``*args`` gets two arrays; positional-only
parameters are passed by position; a class whose metaclass ``__call__`` hides its ``__init__`` is
built by its ``__init__``; ``x.shape[k]`` past x's rank raises x's rank (rank_retry.py); a union with an unbound type variable is read by the parameter's name; ``tp.Any`` is ``Any``.
Near misses stay not linted, or keep their old values. One project, one check, in the test process.
"""
from __future__ import annotations

import textwrap
from pathlib import Path

import pytest
from helpers import check_in_process, check_project, expected_markers, skip_reasons, traced_signatures, write

from jaxlint.config import load_config
from jaxlint.rules import all_rules

MODULE = textwrap.dedent('''\
    import typing as tp
    from typing import Generic, Optional, Sequence, TypeVar, Union

    import jax
    import jax.numpy as jnp
    from jax import lax

    A = TypeVar("A")


    def mean_over(x, axes: Union[int, Sequence[int]]):  # an axis: the last one
        y = jnp.mean(x, axis=axes)
        return jnp.where(y > 0, jnp.log(y), 0.0)  # expect JX501


    def past_a_constant(x, axis: Union[int, Sequence[int]]):  # an axis is no size jaxlint chose: JX503 stays
        return jnp.sum(x, axis=axis) + jnp.ones(3)[5]  # expect JX503


    def sum_over(x, reduce_axis: int | tuple[int, ...]):
        y = jnp.sum(x, axis=reduce_axis)
        return jnp.where(y > 0, jnp.log(y), 0.0)  # expect JX501


    def widened(x, features: Union[int, Sequence[int]]):  # not named like an axis: not guessed
        y = jnp.broadcast_to(x, features)
        return jnp.where(y > 0, jnp.log(y), 0.0)


    def dot(lhs, rhs, dimension_numbers, precision, preferred_element_type):
        y = lax.dot_general(lhs, rhs, dimension_numbers, precision=precision,
                            preferred_element_type=preferred_element_type)
        return jnp.where(y > 0, jnp.log(y), 0.0)  # expect JX501


    def conv_numbers(x, dimension_numbers: str):  # annotated as no dot's options: not guessed
        y = x * len(dimension_numbers)
        return jnp.where(y > 0, jnp.log(y), 0.0)


    def _items(x, i):
        return x[i]


    def last_items(sequence, seq_lengths):  # lengths count: an i32 array, which indexes (in a callee)
        y = _items(sequence, seq_lengths - 1)
        return jnp.where(y > 0, jnp.log(y), 0.0)  # expect JX501


    def lookup(table, ids):  # its dtype read, and an index: an index (a dtype or shape read is neutral)
        if not jnp.issubdtype(ids.dtype, jnp.integer):
            raise ValueError("ids must be integers")
        y = jnp.take(table, ids, axis=0)
        return jnp.where(y > 0, jnp.log(y), 0.0)  # expect JX501


    def lookup_shifted(table, ids):  # an index and an array: keeps its f32 array (the trace fails)
        if not jnp.issubdtype(ids.dtype, jnp.integer):
            raise ValueError("ids must be integers")
        return jnp.take(table, ids, axis=0) + ids


    def looped(xs, scale):  # iterated and its shape read: an array's (a tuple has no shape)
        total = 0.0
        for x in xs:
            total = total + x
        y = total * xs.shape[0] * scale
        return jnp.where(y > 0, jnp.log(y), 0.0)  # expect JX501


    def attention(query, key):  # a key beside a query: the attention's keys, an array
        y = jnp.sum(query * key)
        return jnp.where(y > 0, jnp.log(y), 0.0)  # expect JX501


    def noisy(x, key):  # no query beside it: a PRNG key, as before
        y = x + jax.random.normal(key, x.shape)
        return jnp.where(y > 0, jnp.log(y), 0.0)  # expect JX501


    def combined(*masks: Optional[jax.Array]):  # an array-annotated *args: two arrays
        mask = masks[0]
        for other in masks[1:]:
            mask = jnp.logical_and(mask, other)
        y = masks[-1] * mask
        return jnp.where(y > 0, jnp.log(y), 0.0)  # expect JX501


    def scaled_all(scale, *arrays: jax.Array):  # the parameters before it by position
        y = sum(arrays) * scale
        return jnp.where(y > 0, jnp.log(y), 0.0)  # expect JX501


    def unannotated(*arrays):  # nothing says what *args takes: passes nothing, no array
        return jnp.log(jnp.stack(arrays))


    def time_steps(inputs, batch_dims: int):  # x.shape[k] past its rank: its rank raised, retried
        y = jnp.sum(inputs) * inputs.shape[batch_dims]
        return jnp.where(y > 0, jnp.log(y), 0.0)  # expect JX501


    def summed_steps(a, b, batch_dims: int):  # the shape of a value of two parameters: no retry
        c = a + b
        y = jnp.sum(c) * c.shape[batch_dims]
        return jnp.where(y > 0, jnp.log(y), 0.0)


    def leaf_total(node: "tp.Any"):  # ``Any`` through a module alias: a one-leaf pytree
        y = jnp.sum(node)
        return jnp.where(y > 0, jnp.log(y), 0.0)  # expect JX501


    def by_position(tree, /, scale=2.0):  # positional-only: passed by position
        y = tree * scale
        return jnp.where(y > 0, jnp.log(y), 0.0)  # expect JX501


    class Checked(type):  # a metaclass whose __call__ hides the class's __init__
        def __call__(cls, *args, **kwargs):
            return super().__call__(*args, **kwargs)


    @jax.tree_util.register_pytree_node_class
    class Box(Generic[A], metaclass=Checked):
        def __init__(self, value: Union[A, Sequence[A]], *, label: str = "box"):
            self.value = value
            self.label = label

        def tree_flatten(self):
            return (self.value,), self.label

        @classmethod
        def tree_unflatten(cls, label, children):
            return cls(*children, label=label)


    def unbox(box: Box):  # built by Box's __init__, its value (A or a sequence of A) an array
        y = box.value
        return jnp.where(y > 0, jnp.log(y), 0.0)  # expect JX501


    def pick(value: Union[A, Sequence[A]]):  # a union with an unbound type variable: read by its name
        y = value * 2.0
        return jnp.where(y > 0, jnp.log(y), 0.0)  # expect JX501


    def call_it(fn: Union[A, Sequence[A]], x):  # the name says a function: not guessed, as before
        y = fn(x)
        return jnp.where(y > 0, jnp.log(y), 0.0)
    ''')


@pytest.fixture(scope="module")
def checked(tmp_path_factory: pytest.TempPathFactory):
    return check_project(tmp_path_factory.mktemp("conventions"), {"conventions": MODULE})

signatures, skipped = traced_signatures, skip_reasons


def test_the_findings_are_the_marked_ones(checked) -> None:
    assert {(f.code, f.span.start_line) for f in checked.findings} == expected_markers(MODULE)
    assert all("seen with arguments jaxlint inferred" in f.message for f in checked.findings)


def test_an_axis_union_is_the_last_axis(checked) -> None:
    assert signatures(checked)["mean_over"] == "x=f32[n], axes=-1"
    assert signatures(checked)["sum_over"] == "x=f32[n], reduce_axis=-1"
    assert "parameter features: typing.Union[int, typing.Sequence[int]]" in skipped(checked)["widened"]


def test_dot_options_get_lax_values(checked) -> None:
    assert signatures(checked)["dot"] == ("lhs=f32[], rhs=f32[], dimension_numbers=(((), ()), ((), ())), "
                                          "precision=None, preferred_element_type=None")
    assert "parameter dimension_numbers: str" in skipped(checked)["conv_numbers"]


def test_lengths_are_integers(checked) -> None:
    assert signatures(checked)["last_items"] == "sequence=f32[n], seq_lengths=i32[n]"


def test_a_dtype_read_leaves_an_index_an_index(checked) -> None:
    assert signatures(checked)["lookup"] == "table=f32[n], ids=i32[n]"
    assert "ValueError: ids must be integers" in skipped(checked)["lookup_shifted"]
    assert signatures(checked)["looped"] == "xs=f32[8], scale=f32[]"


LINEN = textwrap.dedent('''\
    import jax.numpy as jnp
    from flax import linen as nn


    class Lookup(nn.Module):
        size: int

        @nn.compact
        def __call__(self, ids):
            if not jnp.issubdtype(ids.dtype, jnp.integer):
                raise ValueError("ids must be integers")
            table = self.param("table", nn.initializers.normal(), (self.size, 3))
            return jnp.take(table, ids, axis=0)
    ''')


def test_a_linen_methods_index_parameter_is_read_by_its_uses(tmp_path: Path) -> None:
    pytest.importorskip("flax.linen")
    path = write(tmp_path, "lookup", LINEN)
    (tmp_path / "pyproject.toml").write_text("[tool.jaxlint]\n")
    result = check_in_process([str(path)], all_rules(), config=load_config([str(path)]))
    assert signatures(result)["Lookup.__call__"] == (
        "self=Lookup(size=2, variables={'params': {'table': f32[2,3]}}), ids=i32[]")


def test_a_key_beside_a_query_is_an_array(checked) -> None:
    assert signatures(checked)["attention"] == "query=f32[], key=f32[]"
    assert signatures(checked)["noisy"] == "x=f32[], key=key<fry>[]"


def test_array_star_args_get_two_arrays(checked) -> None:
    assert signatures(checked)["combined"] == "f32[], f32[]"
    assert signatures(checked)["scaled_all"] == "f32[], f32[], f32[]"
    assert "no parameter takes an array" in skipped(checked)["unannotated"]


def test_a_shape_read_past_the_rank_raises_it(checked) -> None:
    assert signatures(checked)["time_steps"] == "inputs=f32[n,n,n], batch_dims=2"
    assert "IndexError: tuple index out of range" in skipped(checked)["summed_steps"]


def test_any_through_a_module_alias_is_a_pytree(checked) -> None:
    assert signatures(checked)["leaf_total"] == "node=f32[] (a one-leaf pytree)"


def test_positional_only_parameters_are_passed_by_position(checked) -> None:
    assert signatures(checked)["by_position"] == "tree=f32[] (a one-leaf pytree)"


def test_a_class_behind_a_metaclass_call_is_built_by_its_init(checked) -> None:
    assert signatures(checked)["unbox"] == "box=Box(value=f32[], label='box')"


def test_a_union_with_an_unbound_type_variable_reads_the_name(checked) -> None:
    assert signatures(checked)["pick"] == "value=f32[]"
    assert "parameter fn (a function, pytree or object, by its name)" in skipped(checked)["call_it"]
