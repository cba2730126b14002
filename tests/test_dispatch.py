"""Defs registered with ``functools.singledispatch`` under a name later defs rebind (lineax's
``@materialise.register(AddLinearOperator) def _(operator)``): each is found in its dispatcher's
registry and traced with its first parameter of the registered class (worker/dispatch.py); a
rebound def no registry holds is not found, never traced as the def that rebound its name."""
from __future__ import annotations

import textwrap
from pathlib import Path

import pytest
from helpers import check_in_process, expected_markers, write

from jaxlint.config import load_config
from jaxlint.report.coverage import coverage
from jaxlint.rules import all_rules

DISPATCHED = textwrap.dedent('''\
    import dataclasses
    import functools

    import jax
    import jax.numpy as jnp


    @dataclasses.dataclass
    class Scaled:
        value: jax.Array


    @dataclasses.dataclass
    class Shifted:
        value: jax.Array


    @functools.singledispatch
    def logged(operator):  # the base def, registered for object: a plain function's guesses
        return jnp.log(1 + operator)  # expect JX703


    @logged.register(Scaled)
    def _(operator):
        return jnp.log(1 + operator.value)  # expect JX703


    @logged.register(Shifted)
    def _(operator):
        return jnp.exp(operator.value) - 1  # expect JX703


    def helper(x):
        return jnp.log(1 + x)


    def helper(x):  # rebinds the name: the first def is no longer on the module
        return jnp.sin(x)
    ''')


def test_each_registered_def_is_traced_with_its_class_and_a_rebound_one_is_not_found(tmp_path: Path) -> None:
    path = write(tmp_path, "dispatched", DISPATCHED)
    result = check_in_process([str(path)], all_rules(), config=load_config([str(path)]))
    assert {(f.code, f.span.start_line) for f in result.findings} == expected_markers(DISPATCHED)
    signatures = sorted(t.signature for fa in result.files for t in fa.result.traced if t.target == "_")
    assert signatures == ["operator=Scaled(value=f32[])", "operator=Shifted(value=f32[])"]
    [rebound] = [u for u in coverage(result).untraced if u.target == "helper"]
    assert (rebound.kind, rebound.line) == ("not-found", 33)
    assert [t.signature for fa in result.files for t in fa.result.traced if t.target == "logged"] == ["operator=f32[]"]


REBOUND_BY_JIT = textwrap.dedent('''\
    import jax
    import jax.numpy as jnp


    def step(x):
        return jnp.log(1 + x)  # expect JX703


    step = jax.jit(step)


    def plain(x):
        return jnp.exp(x) - 1  # expect JX703


    jitted = jax.jit(plain)
    ''')


def test_a_name_an_assignment_binds_to_a_jitted_def_is_no_rebound_def(tmp_path: Path) -> None:
    path = write(tmp_path, "rebound", REBOUND_BY_JIT)
    result = check_in_process([str(path)], all_rules(), config=load_config([str(path)]))
    assert {(f.code, f.span.start_line) for f in result.findings} == expected_markers(REBOUND_BY_JIT)
    assert result.skipped == []


MULTIPLE = textwrap.dedent('''\
    import dataclasses

    import jax
    import jax.numpy as jnp
    from multipledispatch import dispatch


    @dataclasses.dataclass
    class Normal:
        loc: jax.Array
        scale: jax.Array


    @dataclasses.dataclass
    class Laplace:
        loc: jax.Array
        scale: jax.Array


    def divergence(p, q):
        raise NotImplementedError


    @dispatch(Normal, Normal)
    def divergence(p, q):
        return jnp.log(q.scale / p.scale) + (p.scale ** 2 + (p.loc - q.loc) ** 2) / (2 * q.scale ** 2) - 0.5


    @dispatch(Laplace, Normal)
    def divergence(p, q):
        return jnp.log(1 + jnp.abs(p.loc - q.loc))  # expect JX703
    ''')


def test_multipledispatch_defs_get_each_parameter_its_registered_class(tmp_path: Path) -> None:
    pytest.importorskip("multipledispatch")
    path = write(tmp_path, "divergences", MULTIPLE)
    result = check_in_process([str(path)], all_rules(), config=load_config([str(path)]))
    assert {(f.code, f.span.start_line) for f in result.findings} == expected_markers(MULTIPLE)
    signatures = sorted(t.signature for fa in result.files for t in fa.result.traced if t.target == "divergence")
    assert signatures == ["p=Laplace(loc=f32[], scale=f32[]), q=Normal(loc=f32[], scale=f32[])",
                          "p=Normal(loc=f32[], scale=f32[]), q=Normal(loc=f32[], scale=f32[])"]
