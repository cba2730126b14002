"""Locations of the equations inside JAX's own jitted helpers (jax.random.normal, jnp.piecewise).

Before JAX 0.7 such a helper's jaxpr is cached with the traceback of the call that first traced it,
so a second call (in another function, or on another line) used to point at the first one. The IR
gives them the location of the call they belong to, on every supported version, and keeps the
location of user code the helper calls back.
"""
from __future__ import annotations

import importlib.util

import pytest
from helpers import write

MODULE = '''\
import jax
import jax.numpy as jnp


def first(key):
    return jax.random.normal(key, (3,))


def second(key):
    return jax.random.normal(key, (3,)) * 2.0


def twice(key):
    a = jax.random.normal(key, (4,))
    b = jax.random.normal(key, (4,))
    return a + b


def branch(x):
    return jnp.sin(x) * 3.0


def piecewise(x):
    return jnp.piecewise(x, [x > 0], [branch, 0.0])
'''


def line_of(text: str) -> int:
    return next(n for n, line in enumerate(MODULE.splitlines(), 1) if text in line)


@pytest.fixture(scope="module")
def module(tmp_path_factory: pytest.TempPathFactory):
    path = write(tmp_path_factory.mktemp("library_locations"), "library_calls", MODULE)
    spec = importlib.util.spec_from_file_location("library_calls", path)
    loaded = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(loaded)
    return loaded


def program_of(function, *args):
    import jax

    from jaxlint.ir.build import build_program

    return build_program(jax.make_jaxpr(function)(*args))


def lines(program, primitive: str) -> list[int]:
    return [op.location.span.start_line for op in program.walk() if op.primitive == primitive]


def test_a_cached_helper_points_at_its_own_call(module) -> None:
    import jax

    key = jax.random.PRNGKey(0)
    program_of(module.first, key)  # traces (and caches) jax.random.normal's inner jits here
    program = program_of(module.second, key)
    assert {op.location.span.start_line for op in program.walk()} == {line_of("* 2.0")}
    assert {op.location.path for op in program.walk()} == {module.__file__}


def test_two_calls_on_two_lines(module) -> None:
    import jax

    program = program_of(module.twice, jax.random.PRNGKey(0))
    first, second = line_of("a = jax.random"), line_of("b = jax.random")
    assert sorted(lines(program, "random_bits")) == [first, second]
    assert sorted(lines(program, "erf_inv")) == [first, second]


def test_user_code_called_back_keeps_its_location(module) -> None:
    import jax.numpy as jnp

    program = program_of(module.piecewise, jnp.ones(3))
    assert lines(program, "sin") == [line_of("jnp.sin(x)")]
    assert set(lines(program, "cumsum")) == {line_of("jnp.piecewise(")}
