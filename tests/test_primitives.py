"""The primitive trait table (jaxlint.ir.primitives) against the installed JAX: its rows name real
primitives, the ones JAX emits for common code get the expected traits, and an unknown primitive
gets the generic fallback row."""
from __future__ import annotations

import gc
import inspect
from pathlib import Path

import jax
import jax.numpy as jnp
from jax import lax
from jax.experimental import io_callback  # noqa: F401  (registers its primitive)

from jaxlint.ir import primitives
from jaxlint.ir.build import build_program
from jaxlint.ir.primitives import GENERIC, KeyUse, traits
from jaxlint.rules import jx305_host_callback_in_loop, jx401_prng_key_reuse

# Rows for names that are not primitives of every supported JAX: what they are.
NOT_EVERYWHERE = {
    "pjit": "jit before JAX 0.7.0",
    "jit": "pjit before JAX 0.7.0",
    "debug_print": "jax.debug.print from JAX 0.8.0 (debug_callback before)",
    "reshard": "newer JAX only",
    "layout_constraint": "newer JAX only",
    "infeed": "removed in newer JAX",
    "outfeed": "removed in newer JAX",
    "custom_vjp_call_jaxpr": "older JAX only",
    "copy_p": "an older name of copy",
    "expand_dims": "never emitted (lax.expand_dims is a broadcast_in_dim or reshape)",
    "outside_call": "the removed host_callback module",
    "core_call": "older call primitive",
    "remat": "older name of remat2",
    "checkpoint": "older name of remat2",
}
ROOT = Path(__file__).resolve().parents[1]


def installed_primitives() -> set[str]:
    from jax._src import core

    return {o.name for o in gc.get_objects() if isinstance(o, core.Primitive)}


def primitives_of(fun, *args) -> dict[str, list]:
    """Primitive name -> the IR ops of that primitive in ``fun``'s program."""
    found: dict[str, list] = {}
    for op in build_program(jax.make_jaxpr(fun)(*args)).walk():
        found.setdefault(op.primitive, []).append(op)
    return found


def test_every_row_names_a_primitive_of_the_installed_jax_or_a_known_other_spelling() -> None:
    unknown = set(primitives._TABLE) - installed_primitives()
    assert unknown <= set(NOT_EVERYWHERE), sorted(unknown - set(NOT_EVERYWHERE))


def test_an_unknown_primitive_gets_the_generic_row() -> None:
    row = traits("a_primitive_of_a_future_jax")
    assert row is GENERIC
    assert row.cost == "elementwise" and row.layout is None and not row.gradient_free
    assert row.key == KeyUse(sinks=None, forward=None)  # consumes every key operand, forwards nothing
    assert "a_primitive_of_a_future_jax" not in primitives.TRANSCENDENTAL | primitives.SAME_NUMBERS


def test_rows_of_what_jax_emits() -> None:
    x = jnp.ones((3, 4), jnp.float32)
    found = primitives_of(lambda x: (jnp.exp(x), jnp.sum(x), x.T, x @ x.T, jnp.broadcast_to(x, (2, 3, 4)),
                                     lax.stop_gradient(x), jnp.floor(x), x > 0, jnp.tanh(x),
                                     x.reshape(12), x * 2.0, x[:, 0]), x)
    assert traits("exp").cost == "transcendental" and "exp" in found
    assert traits("reduce_sum").cost == "reduction" and "reduce_sum" in found
    assert traits("dot_general").cost == "contraction" and traits("dot_general").linear == "one"
    assert traits("transpose").cost == "data" and traits("transpose").layout is None
    assert {"broadcast_in_dim", "reshape", "squeeze"} <= set(found) and \
        {"broadcast_in_dim", "reshape", "squeeze"} <= primitives.SHAPE_ONLY <= primitives.SAME_NUMBERS
    assert {"stop_gradient", "floor", "gt"} <= set(found) and \
        {"stop_gradient", "floor", "gt"} <= primitives.GRADIENT_FREE
    assert traits("tanh").bounded and traits("mul").elementwise == "binary" and traits("gt").elementwise == "compare"


def test_nested_jaxprs() -> None:
    def f(x):
        y = lax.scan(lambda c, _: (c + 1.0, None), x, None, length=3)[0]
        z = lax.cond(x.sum() > 0, jnp.sin, jnp.cos, y)
        return lax.while_loop(lambda c: c.sum() < 10.0, lambda c: c + 1.0, z)

    closed = jax.make_jaxpr(jax.jit(f))(jnp.ones(3))
    names = {eqn.primitive.name for eqn in closed.jaxpr.eqns}
    assert names <= primitives.JITS  # the outer jit, inlined by ir.build
    found = primitives_of(f, jnp.ones(3))
    assert {traits(name).nested for name in ("scan", "while", "cond")} == {"loop", "branch"}
    assert {"scan", "while", "cond"} <= set(found) and primitives.LOOPS == {"scan", "while"}
    assert all(op.regions for name in ("scan", "while", "cond") for op in found[name])


def test_prng_key_rows_follow_a_draw() -> None:
    key = jax.random.PRNGKey(0)
    found = primitives_of(lambda k: jax.random.normal(k, (2,)), key)
    assert "random_bits" in found and traits("random_bits").key.sinks == (0,)
    assert "random_wrap" in found and traits("random_wrap").key == KeyUse((), "same", traits("random_wrap").key.jax)
    assert traits("random_fold_in").key.sinks == () and traits("random_fold_in").key.forward is None
    assert traits("device_put").key.forward == "each"


def test_jx401_documents_every_row_that_differs_from_jax() -> None:
    differing = primitives.named(lambda t: bool(t.key.jax))
    assert {"dynamic_update_slice", "scatter", "random_wrap", "slice"} <= differing
    page = (ROOT / "rules" / "JX401.md").read_text(encoding="utf-8")
    docstring = inspect.getdoc(jx401_prng_key_reuse) or ""
    assert [name for name in sorted(differing) if f"`{name}`" not in page] == []
    assert [name for name in sorted(differing) if f"``{name}``" not in docstring] == []


def test_expand_dims_is_never_emitted() -> None:
    # JX501 once looked through broadcast/reshape/squeeze/copy only, the other helpers through
    # expand_dims too: adding it changes no finding, as no jaxpr has such an equation.
    assert "expand_dims" not in installed_primitives()
    x = jnp.ones(3)
    found = primitives_of(lambda x: (jnp.expand_dims(x, 0), x[None], lax.expand_dims(x, (0,))), x)
    assert set(found) <= {"broadcast_in_dim", "reshape"}


def test_jx305_names_every_callback() -> None:
    assert set(jx305_host_callback_in_loop.WRITTEN) == primitives.CALLBACKS


def test_jx401_maps_the_positions_of_every_view() -> None:
    assert set(jx401_prng_key_reuse.VIEWS) == primitives.named(lambda t: t.key.forward == "view")


def test_wrapping_and_prng_rows_cover_what_jax_emits() -> None:
    # JX507 reports integer overflow at the WRAPPING ops and stays quiet beside the PRNG ones.
    found = primitives_of(lambda n: (jnp.arange(4) * n + n - n, jnp.sum(jnp.arange(4))), jnp.int32(3))
    assert {"mul", "add", "sub", "reduce_sum"} <= set(found) and primitives.WRAPPING == {"add", "sub", "mul",
                                                                                        "reduce_sum"}
    drawn = primitives_of(lambda k: (jax.random.bits(k, (2,)), jax.random.split(k)), jax.random.PRNGKey(0))
    prng_ops = {name for name in drawn if name in primitives.PRNG}
    assert {"random_bits", "random_split", "random_wrap"} <= prng_ops
    assert not (primitives.PRNG & {"add", "mul", "shift_right_logical", "convert_element_type"})
