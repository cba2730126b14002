"""Parameters the body never reads (argsources/unused.py), a class whose call hides its
``__init__``'s parameters (class_kinds.init_signature), a nested def's own annotations resolved in
its module (nested_code.py), and the retry of a rung whose error names one value
(argsources/named_retry.py), on real jaxprs: one project, one check, in the test process.
"""
from __future__ import annotations

import textwrap

import pytest
from helpers import check_project, expected_markers, skip_reasons, traced_signatures

MODULE = textwrap.dedent('''\
    import abc
    from typing import Callable, NamedTuple, TypeVar, Union

    import jax
    import jax.numpy as jnp

    Event = TypeVar("Event", bound=jax.Array)


    class Base(abc.ABC):
        @abc.abstractmethod
        def scale(self):
            ...


    @jax.tree_util.register_pytree_node_class
    class Affine(Base):
        def __new__(cls, *args, **kwargs):  # inspect.signature(Affine) says (*args, **kwargs)
            return super().__new__(cls)

        def __init__(self, loc: jax.Array, width: jax.Array):
            self.loc, self.width = loc, width

        def scale(self):
            return self.width

        def tree_flatten(self):
            return (self.loc, self.width), None

        @classmethod
        def tree_unflatten(cls, aux, children):
            return cls(*children)


    BaseT = TypeVar("BaseT", bound=Union[Base, list])
    BaseLike = Union[Base, Callable[[jax.Array], jax.Array]]  # a function of arrays is no array


    def wrapped(base: Base):
        class Wrapper:
            def log_scale(self):  # self unused: <unused>; base built through Affine's __init__
                y = base.scale() - 1.0
                return jnp.where(y > 0, jnp.log(y), 0.0)  # expect JX501

            def log_prob(self, value: Event):  # Event: a type variable bound to an array
                y = value - base.loc
                return jnp.where(y > 0, jnp.log(y), 0.0)  # expect JX501

            def reads_self(self):  # reads self: not guessed, as before
                y = self.offset + base.loc
                return jnp.where(y > 0, jnp.log(y), 0.0)

            def calls_super(self):  # super() reads self: not guessed
                y = super().__hash__() + base.loc
                return jnp.where(y > 0, jnp.log(y), 0.0)

        return Wrapper()


    def loss(model, x):  # model never read: <unused>
        return jnp.where(x > 0, jnp.log(x), 0.0)  # expect JX501


    def noisy(seed, x):  # named seed: a typed key, as a key's name
        y = x + jax.random.normal(seed, x.shape)
        return jnp.where(y > 0, jnp.log(y), 0.0)  # expect JX501


    class Steps(NamedTuple):
        sizes: jax.Array


    class Walker:
        def __init__(self, origin: jax.Array, steps: Steps):
            if steps.sizes.ndim != origin.ndim + 1:
                raise ValueError(f"steps should hold sizes of rank {origin.ndim + 1}, got {steps.sizes.ndim}")
            self.origin, self.steps = origin, steps

        def walk(self):
            y = self.origin + jnp.sum(self.steps.sizes)
            return jnp.where(y > 0, jnp.log(y), 0.0)  # expect JX501


    class Chain:
        def __init__(self, start: jax.Array, moves: jax.Array):
            if moves.ndim != start.ndim + 1:
                raise ValueError(f"moves should have rank {start.ndim + 1}, got {moves.ndim}")
            self.start, self.moves = start, moves

        def walk(self):
            y = self.start + jnp.sum(self.moves)
            return jnp.where(y > 0, jnp.log(y), 0.0)  # expect JX501


    class Holder:
        def __init__(self, inner: BaseT):  # a type variable: by its bound, a union of an abstract base
            self.inner = inner

        def shifted(self):
            y = self.inner.loc - 1.0
            return jnp.where(y > 0, jnp.log(y), 0.0)  # expect JX501


    class Scaled:
        def __init__(self, base: BaseLike, factor: jax.Array):
            self.base, self.factor = base, factor

        def shifted(self):
            y = self.base.loc * self.factor - 1.0
            return jnp.where(y > 0, jnp.log(y), 0.0)  # expect JX501


    class Pair:
        def __init__(self, a: jax.Array, b: jax.Array):
            if b.ndim != a.ndim + 1:
                raise ValueError(f"a and b disagree: b has rank {b.ndim}")  # names both: no retry
            self.a, self.b = a, b

        def total(self):
            y = self.a + jnp.sum(self.b)
            return jnp.where(y > 0, jnp.log(y), 0.0)
    ''')


@pytest.fixture(scope="module")
def checked(tmp_path_factory: pytest.TempPathFactory):
    return check_project(tmp_path_factory.mktemp("unused"), {"wrappers": MODULE})

signatures, skipped = traced_signatures, skip_reasons


def test_the_findings_are_the_marked_ones(checked) -> None:
    assert {(f.code, f.span.start_line) for f in checked.findings} == expected_markers(MODULE)


def test_an_unread_self_is_unused_and_the_abstract_base_built_by_its_init(checked) -> None:
    assert signatures(checked)["wrapped.<locals>.Wrapper.log_scale"] == \
        "self=<unused> with its outer's base=Affine(loc=f32[], width=f32[])"


def test_a_nested_defs_type_variable_annotation_is_read_by_its_bound(checked) -> None:
    assert signatures(checked)["wrapped.<locals>.Wrapper.log_prob"] == \
        "self=<unused>, value=f32[] with its outer's base=Affine(loc=f32[], width=f32[])"


def test_an_unread_parameter_of_a_function_is_unused(checked) -> None:
    assert signatures(checked)["loss"] == "model=<unused>, x=f32[]"


def test_a_seed_is_a_typed_key(checked) -> None:
    assert signatures(checked)["noisy"] == "seed=key<fry>[], x=f32[]"


def test_a_read_self_is_still_not_guessed(checked) -> None:
    reasons = skipped(checked)
    assert "parameter self (a function, pytree or object, by its name)" in \
        reasons["wrapped.<locals>.Wrapper.reads_self"]
    assert "wrapped.<locals>.Wrapper.calls_super" in reasons


def test_a_check_naming_one_field_raises_its_rank(checked) -> None:
    assert signatures(checked)["Chain.walk"] == "self=Chain(start=f32[], moves=f32[n])"


def test_a_check_naming_one_instance_field_raises_its_arrays(checked) -> None:
    assert signatures(checked)["Walker.walk"] == "self=Walker(origin=f32[], steps=Steps(sizes=f32[n]))"


def test_a_field_annotated_with_a_type_variable_is_built_by_its_bound(checked) -> None:
    assert signatures(checked)["Holder.shifted"] == "self=Holder(inner=Affine(f32[], f32[]))"


def test_a_union_of_a_class_and_a_function_of_arrays_is_an_instance(checked) -> None:
    assert signatures(checked)["Scaled.shifted"] == "self=Scaled(base=Affine(f32[], f32[]), factor=f32[])"


def test_a_check_naming_two_fields_is_not_retried(checked) -> None:
    assert "a and b disagree" in skipped(checked)["Pair.total"]
