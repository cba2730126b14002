from functools import partial

import jax
import jax.numpy as jnp


# jaxlint: args x=f99[3]  # expect: JX905
@jax.jit
def unknown_dtype(x):
    return jnp.sin(x)


# jaxlint: args x=f32[3, ]]  # expect: JX905
@jax.jit
def malformed_shape(x):
    return jnp.sin(x)


# jaxlint: args y=f32[3]  # expect: JX905
@jax.jit
def no_such_parameter(x):
    return jnp.sin(x)


def helper(x):
    # jaxlint: args x=f32[8]  # expect: JX905
    return x


# Quiet: hints that match their function, one with a static value.


# jaxlint: args x=f32[3]
@jax.jit
def hinted(x):
    return jnp.sin(x)


# jaxlint: args x=f32[2, 3], n=4
@partial(jax.jit, static_argnums=1)
def with_a_static_value(x, n):
    return jnp.tile(x, n)
