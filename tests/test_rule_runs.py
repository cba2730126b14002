"""The user's differentiation rules run through differentiation (worker/rule_runs.py): a traced
target whose program holds a custom_jvp or custom_vjp call is traced once more through
``jax.jvp`` or ``jax.vjp``'s backward function, so the JVP rule, ``fwd`` and ``bwd`` are linted;
only findings on lines the primal trace did not run are kept.
"""
from __future__ import annotations

import textwrap
from pathlib import Path

import jax
import jax.numpy as jnp
import pytest
from helpers import check_in_process, expected_markers, write

from jaxlint.config import load_config
from jaxlint.jaxapi.version import JAX_VERSION
from jaxlint.rules import all_rules
from jaxlint.worker.argsources import ArgumentSet
from jaxlint.worker.rule_runs import rule_traces
from jaxlint.worker.trace import trace_function

ANY_FILE = lambda path: True  # noqa: E731

# The rules take tuples (primals and tangents, residuals): guessed arguments never trace them.
RULES = textwrap.dedent('''\
    import jax
    import jax.numpy as jnp


    @jax.custom_jvp
    def safe_sqrt(x):
        return jnp.sqrt(jnp.maximum(x, 0.0))


    @safe_sqrt.defjvp
    def safe_sqrt_jvp(primals, tangents):
        (x,), (t,) = primals, tangents
        return safe_sqrt(x), jnp.where(x > 0, t / jnp.sqrt(x), 0.0)  # expect JX501


    @jax.custom_vjp
    def scaled_log(x, scale):
        return scale * jnp.log(jnp.maximum(x, 1e-30))


    def scaled_log_fwd(x, scale):
        return scaled_log(x, scale), (x, scale)


    def scaled_log_bwd(residuals, g):
        x, scale = residuals
        return jnp.where(x > 0, g * scale / x, 0.0), jnp.sum(g * jnp.log(jnp.maximum(x, 1e-30)))  # expect JX501


    scaled_log.defvjp(scaled_log_fwd, scaled_log_bwd)


    # jaxlint: args x=f32[3]
    @jax.jit
    def norm(x):
        return safe_sqrt(jnp.sum(x))


    # jaxlint: args x=f32[3], scale=f32[]
    @jax.jit
    def entropy(x, scale):
        return jnp.sum(x * scaled_log(x, scale))
    ''')


def _check(tmp_path: Path, name: str, text: str):
    path = write(tmp_path, name, text)
    (tmp_path / "pyproject.toml").write_text("[tool.jaxlint]\n")
    return check_in_process([str(path)], all_rules(), config=load_config([str(path)]))


def test_findings_in_a_jvp_rule_and_a_bwd_are_reported_at_their_lines(tmp_path: Path) -> None:
    result = _check(tmp_path, "rules", RULES)
    assert {(f.code, f.span.start_line) for f in result.findings} == expected_markers(RULES)
    # Seen with real arguments (the hints', through the jitted callers), not with guessed ones.
    assert all(f.arguments is None for f in result.findings)


def test_the_rules_count_linted(tmp_path: Path) -> None:
    result = _check(tmp_path, "rules", RULES)
    [checked] = result.files
    # The JVP rule and bwd too, whose guessed arguments never trace (a tuple each).
    assert len(checked.linted) == len(checked.functions) == 6


# A primitive of the project's own with its JVP rule (as equinox and jax_md register theirs).
PRIMITIVE = textwrap.dedent('''\
    import jax
    import jax.numpy as jnp
    from jax.extend.core import Primitive
    from jax.interpreters import ad

    safe_sqrt_p = Primitive("safe_sqrt")
    safe_sqrt_p.def_impl(lambda x: jnp.sqrt(jnp.maximum(x, 0.0)))
    safe_sqrt_p.def_abstract_eval(lambda x: x)


    def _safe_sqrt_jvp(primals, tangents):
        (x,), (t,) = primals, tangents
        return safe_sqrt_p.bind(x), jnp.where(x > 0, t / jnp.sqrt(x), 0.0)  # expect JX501


    ad.primitive_jvps[safe_sqrt_p] = _safe_sqrt_jvp


    # jaxlint: args x=f32[3]
    @jax.jit
    def norm(x):
        return safe_sqrt_p.bind(jnp.sum(x))
    ''')


def test_a_primitive_s_own_jvp_rule_is_linted(tmp_path: Path) -> None:
    result = _check(tmp_path, "primitive", PRIMITIVE)
    assert {(f.code, f.span.start_line) for f in result.findings} == expected_markers(PRIMITIVE)
    [checked] = result.files
    assert len(checked.linted) == len(checked.functions) == 2


CLEAN = textwrap.dedent('''\
    import jax
    import jax.numpy as jnp


    @jax.custom_jvp
    def safe_sqrt(x):
        return jnp.sqrt(jnp.maximum(x, 0.0))


    @safe_sqrt.defjvp
    def safe_sqrt_jvp(primals, tangents):
        (x,), (t,) = primals, tangents
        safe = jnp.where(x > 0, x, 1.0)
        return safe_sqrt(x), jnp.where(x > 0, t / jnp.sqrt(safe), 0.0)


    # jaxlint: args x=f32[3]
    @jax.jit
    def norm(x):
        return safe_sqrt(jnp.sum(x))
    ''')


def test_a_clean_rule_stays_quiet(tmp_path: Path) -> None:
    result = _check(tmp_path, "clean", CLEAN)
    assert result.findings == []
    [checked] = result.files
    assert len(checked.linted) == 3


# jaxopt's perturbed optimizers: the JVP rule draws the forward's samples again from its key, as
# the derivative of the Monte-Carlo estimate needs. Its lines are linted; the reuse is no finding.
REDRAWN = textwrap.dedent('''\
    import jax
    import jax.numpy as jnp


    def make_perturbed(fun, num_samples: int = 16, sigma: float = 0.1):
        @jax.custom_jvp
        def forward(inputs, rng):
            samples = jax.random.gumbel(rng, (num_samples,) + inputs.shape)
            return jnp.mean(jax.vmap(fun)(inputs + sigma * samples), axis=0)

        def forward_jvp(tangent, _, inputs, rng):
            samples = jax.random.gumbel(rng, (num_samples,) + inputs.shape)  # the forward's samples, by design
            out = jax.vmap(fun)(inputs + sigma * samples)
            return jnp.mean(out * jnp.sum(samples * tangent, axis=-1, keepdims=True), axis=0)

        forward.defjvps(forward_jvp, None)
        return forward
    ''')


def test_a_rule_that_redraws_the_forwards_samples_is_no_key_reuse(tmp_path: Path) -> None:
    result = _check(tmp_path, "redrawn", REDRAWN)
    assert result.findings == []
    [checked] = result.files
    assert "make_perturbed.<locals>.forward_jvp" in {function.qualname for function in checked.linted}


# Ordinary code next to a custom rule: differentiating it adds no finding (autodiff's own 1 / x
# is not the user's) and no second copy of its own.
ORDINARY = textwrap.dedent('''\
    import jax
    import jax.numpy as jnp


    @jax.custom_jvp
    def clipped(x):
        return jnp.clip(x, -1.0, 1.0)


    clipped.defjvp(lambda primals, tangents: (clipped(primals[0]), tangents[0]))


    # jaxlint: args x=f32[3]
    @jax.jit
    def loss(x):
        y = jnp.where(x > 0, jnp.log(x), 0.0)  # expect JX501
        return jnp.sum(jnp.sqrt(jnp.exp(clipped(y))) / x)
    ''')


def test_differentiated_user_code_adds_no_finding(tmp_path: Path) -> None:
    result = _check(tmp_path, "ordinary", ORDINARY)
    assert [(f.code, f.span.start_line) for f in result.findings] == sorted(expected_markers(ORDINARY))


def test_an_ordinary_function_gets_no_second_trace() -> None:
    def plain(x):
        return jnp.where(x > 0, jnp.log(x), 0.0)

    arguments = ArgumentSet(args=(jax.ShapeDtypeStruct((3,), jnp.float32),), kwargs={}, source="hint")
    assert rule_traces(plain, arguments, trace_function(plain, arguments), ANY_FILE) == []


@pytest.mark.skipif(JAX_VERSION < (0, 5, 0), reason="JAX 0.4.x does not say where a custom function is defined")
def test_a_custom_function_of_jax_gets_no_second_trace() -> None:
    def layer(x):
        return jax.nn.relu(x)  # a custom_jvp whose rule is JAX's

    arguments = ArgumentSet(args=(jax.ShapeDtypeStruct((3,), jnp.float32),), kwargs={}, source="hint")
    closed = trace_function(layer, arguments)
    assert rule_traces(layer, arguments, closed, lambda path: path == __file__) == []
    assert len(rule_traces(layer, arguments, closed, ANY_FILE)) == 1  # were JAX's rules the project's


def test_integer_inputs_get_no_tangent() -> None:
    @jax.custom_jvp
    def scaled(x, n):
        return x * n

    scaled.defjvp(lambda primals, tangents: (scaled(*primals), tangents[0] * primals[1]))

    def step(x, n):
        return scaled(x, n)

    arguments = ArgumentSet(args=(jax.ShapeDtypeStruct((3,), jnp.float32), jax.ShapeDtypeStruct((), jnp.int32)),
                            kwargs={}, source="hint")
    [traced] = rule_traces(step, arguments, trace_function(step, arguments), ANY_FILE)
    # The primal inputs in their order, then one tangent: x's.
    assert [(aval.shape, str(aval.dtype)) for aval in traced.in_avals] == [
        ((3,), "float32"), ((), "int32"), ((3,), "float32")]
