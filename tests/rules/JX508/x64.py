import jax
import jax.numpy as jnp

# The analysis puts JAX's configuration back after this module, as the worker does between modules.
jax.config.update("jax_enable_x64", True)


# Quiet: with x64 on, float64 is what the function gets.
@jax.jit
def zeros_f64_with_x64(x):
    return x + jnp.zeros(3, dtype=jnp.float64)


@jax.jit
def astype_f64_with_x64(x):
    return x.astype(jnp.float64) * 2


zeros_f64_with_x64(jnp.ones(3))
astype_f64_with_x64(jnp.ones(3))
