import jax
import jax.numpy as jnp
import numpy as np

# The analysis puts JAX's configuration back after this module, as the worker does between modules.
jax.config.update("jax_enable_x64", True)


@jax.jit
def double(y):
    return y * np.float64(2)  # expect: JX502


@jax.jit
def shift(y):
    return y + np.ones(8)  # expect: JX502


@jax.jit
def bf16_to_f64(x):
    return x + np.ones(8)  # expect: JX502


# Quiet: weak scalars, matched dtypes.


@jax.jit
def weak(y):
    return y * 2.0 - 1


@jax.jit
def matched(y):
    return y + np.ones(8, np.float32) + np.ones(8).astype(y.dtype)


y = jnp.ones(8, jnp.float32)
for fn in (double, shift, weak, matched):
    fn(y)
bf16_to_f64(jnp.ones(8, jnp.bfloat16))
