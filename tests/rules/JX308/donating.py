from functools import partial

import jax
import jax.numpy as jnp

X = jax.ShapeDtypeStruct((1024, 1024), jnp.float32)


@partial(jax.jit, donate_argnums=0)  # expect: JX308
def to_bf16(x):
    return (x * 2).astype(jnp.bfloat16)


@partial(jax.jit, donate_argnums=(0, 1))  # expect: JX308
def summed(a, b):  # two donated inputs, one output: one of them is left over
    return a + b


@partial(jax.jit, donate_argnums=0)  # expect: JX308
def unused_donation(x, y):  # x is never read: jit prunes it
    return y * 2


def _advance(pos, vel):
    return pos + vel, jnp.linalg.norm(vel)


advance = jax.jit(_advance, donate_argnums=(0, 1))  # expect: JX308


# Quiet: an output of the same shape and dtype, a donation by name, no donation at all, and (on JAX
# 0.10) outputs of the same byte size in another shape or dtype, which XLA aliases too. JAX 0.4.35
# matches donations by shape and dtype itself, so there they are not aliased.


@partial(jax.jit, donate_argnums=0)
def scaled(x):
    return x * 2


@partial(jax.jit, donate_argnums=0)  # expect(jax<0.5): JX308
def reshaped(x):
    return (x * 2).reshape(512, 2048)


@partial(jax.jit, donate_argnums=0)  # expect(jax<0.5): JX308
def as_int(x):
    return (x * 2).astype(jnp.int32)


@partial(jax.jit, donate_argnames="state")
def by_name(state, x):
    return state + x


@jax.jit
def not_donated(x):
    return (x * 2).astype(jnp.bfloat16)


for function in (to_bf16, scaled, reshaped, as_int, not_donated):
    function.lower(X)
summed.lower(X, X)
unused_donation.lower(X, X)
by_name.lower(X, X)
advance.lower(X, X)
