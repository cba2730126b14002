"""Parameters that describe rather than hold arrays, and functions that return more than one
value (issue 48): a parameter annotated ``jax.ShapeDtypeStruct`` gets one f32 scalar's
description and a ``frozenset`` an empty one, static, as a static field does; a ``Callable``
annotation whose return is a fixed tuple (a value and an auxiliary output) gets a stand-in that
returns such a tuple; a dataclass whose ``__post_init__`` refuses abstract floats gets their
float defaults; a union's ``Callable`` members make no array of a field with a default
(``jac_fun: Optional[Callable[..., Array]] = None`` keeps None); a method's parameter annotated
with an abstract base tries the next concrete subclasses when the first's rungs all fail. One
project, one check, in the test process; near misses stay as before."""
from __future__ import annotations

import textwrap

import pytest
from helpers import check_project, expected_markers, skip_reasons, traced_signatures

MODULE = textwrap.dedent('''\
    import abc
    import dataclasses
    from collections.abc import Callable
    from typing import Any, Optional

    import jax
    import jax.numpy as jnp


    def fill(y, f_struct: jax.ShapeDtypeStruct, tags: frozenset):
        f = jnp.zeros(f_struct.shape, f_struct.dtype)
        return jnp.where(y > 0, jnp.log(y), f)  # expect JX501


    def scatter_past(y, f_struct: jax.ShapeDtypeStruct):  # its shape is jaxlint's: a size finding is left out
        z = jnp.zeros(f_struct.shape + (3,), f_struct.dtype)
        return z.at[5].set(1.0) + y


    def only_struct(f_struct: jax.ShapeDtypeStruct):  # no array at all: not traced
        return jnp.zeros(f_struct.shape, f_struct.dtype)


    @dataclasses.dataclass(frozen=True)
    class Solver:
        rtol: float

        def init(self, y, f_struct: jax.ShapeDtypeStruct, tags: frozenset[object]):
            f = jnp.zeros(f_struct.shape, f_struct.dtype)
            return jnp.where(y > self.rtol, y, f)


    def with_aux(fn: Callable[[jax.Array, Any], tuple[float, Any]], y, extra: Any):
        f, aux = fn(y, extra)
        return jnp.where(f > 0, jnp.log(f), 0.0) + jnp.sum(aux)  # expect JX501


    def open_tuple(fn: Callable[[jax.Array], tuple[jax.Array, ...]], y):  # no fixed length: its first argument
        a, b = fn(y)
        return jnp.multiply(a, b)


    @dataclasses.dataclass(frozen=True)
    class Fitter:
        scale: float
        jac_fun: Optional[Callable[..., jax.Array]] = None

        def residual(self, x):
            if self.jac_fun:
                return self.jac_fun(x)
            return jnp.sqrt(x * self.scale)


    @dataclasses.dataclass
    class LineSearch:
        max_stepsize: float

        def __post_init__(self):
            if not self.max_stepsize:  # a concrete number wanted
                raise ValueError("max_stepsize must be positive")


    @dataclasses.dataclass
    class Descent:
        fun: Callable
        max_stepsize: float = 1.0

        def __post_init__(self):
            self.search = LineSearch(self.max_stepsize)

        def update(self, params):
            return jnp.tanh(self.fun(params)) * self.search.max_stepsize


    @dataclasses.dataclass
    class Strict:  # refuses whatever it is given: no default makes it, the method stays not linted
        scale: float = 1.0

        def __post_init__(self):
            raise ValueError("never")

        def apply(self, x):
            return jnp.tanh(x) * self.factor


    class Kernel(abc.ABC):
        @abc.abstractmethod
        def __call__(self, x, y):
            ...


    @dataclasses.dataclass(frozen=True)
    class AFeatures(Kernel):  # the first concrete subclass: it refuses to be called
        frequencies: jax.Array

        def __call__(self, x, y):
            raise RuntimeError("features have no kernel function")


    @dataclasses.dataclass(frozen=True)
    class RBF(Kernel):
        lengthscale: jax.Array

        def __call__(self, x, y):
            return jnp.exp(-jnp.sum((x - y) ** 2) / self.lengthscale)


    @dataclasses.dataclass(frozen=True)
    class Computation:
        jitter: float

        def diagonal(self, kernel: Kernel, x):
            return jax.vmap(lambda a: kernel(a, a))(x) + self.jitter


    def diagonal_of(kernel: Kernel, x):
        return jax.vmap(lambda a: kernel(a, a))(x)
    ''')


# The same parameters under string annotations: read by their text, or evaluated in the module.
POSTPONED = textwrap.dedent('''\
    from __future__ import annotations

    from collections.abc import Callable
    from typing import Any

    import jax
    import jax.numpy as jnp


    def fill_later(y, f_struct: jax.ShapeDtypeStruct, tags: frozenset[object]):
        f = jnp.zeros(f_struct.shape, f_struct.dtype)
        return jnp.where(y > 0, jnp.tanh(y), f)


    def with_aux_later(fn: Callable[[jax.Array, Any], tuple[float, Any]], y, extra: Any):
        f, aux = fn(y, extra)
        return jnp.tanh(f) + jnp.sum(aux)
    ''')


@pytest.fixture(scope="module")
def checked(tmp_path_factory: pytest.TempPathFactory):
    return check_project(tmp_path_factory.mktemp("described"), {"described": MODULE, "postponed": POSTPONED})

signatures, skipped = traced_signatures, skip_reasons


def test_the_findings_are_the_marked_ones(checked) -> None:
    assert {(f.code, f.span.start_line) for f in checked.findings} == expected_markers(MODULE)


def test_a_described_parameter_is_a_static_description(checked) -> None:
    assert signatures(checked)["fill"] == "y=f32[], f_struct=ShapeDtypeStruct(shape=(), dtype=float32), tags=frozenset()"
    assert "Solver.init" in signatures(checked)
    assert "f_struct=ShapeDtypeStruct(shape=(), dtype=float32), tags=frozenset()" in signatures(checked)["Solver.init"]


def test_a_size_finding_on_a_described_shape_is_left_out(checked) -> None:
    assert "scatter_past" in signatures(checked)
    left = {(f.code, f.target) for fa in checked.files for f in fa.result.left_out}
    assert ("JX503", "scatter_past") in left


def test_string_annotations_are_read_too(checked) -> None:
    assert signatures(checked)["fill_later"] == (
        "y=f32[], f_struct=ShapeDtypeStruct(shape=(), dtype=float32), tags=frozenset()")
    assert signatures(checked)["with_aux_later"].startswith("fn=<stand-in: (-0.5*sum(x**2), its first argument)>")


def test_a_description_alone_is_not_enough(checked) -> None:
    assert "no parameter takes an array" in skipped(checked)["only_struct"]


def test_a_callable_returning_a_pair_gets_a_pair(checked) -> None:
    assert signatures(checked)["with_aux"].startswith("fn=<stand-in: (-0.5*sum(x**2), its first argument)>")
    assert "open_tuple" in skipped(checked)


def test_a_callable_in_a_union_is_no_array(checked) -> None:
    assert "jac_fun=None" in signatures(checked)["Fitter.residual"]


def test_a_refusing_post_init_gets_the_float_defaults(checked) -> None:
    assert "max_stepsize=1.0" in signatures(checked)["Descent.update"]
    assert "Strict.apply" in skipped(checked)


def test_an_abstract_parameter_tries_the_next_subclass(checked) -> None:
    assert "kernel=RBF(lengthscale=f32[])" in signatures(checked)["Computation.diagonal"]
    assert signatures(checked)["diagonal_of"].startswith("kernel=RBF(lengthscale=f32[])")
