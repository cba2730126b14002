import jax
import jax.numpy as jnp
from jax import lax
from jax.scipy.special import expit


@jax.jit
def sigmoid_hand(x):
    return 1.0 / (1.0 + jnp.exp(-x))  # expect: JX707


@jax.jit
def sigmoid_scaled_exp(x, c):
    e = jnp.exp(-75.0 * x)
    return 1.0 / (1.0 + e) + 1.0 / (1.0 + c * jnp.exp(x))  # expect: JX707, JX707


@jax.jit
def in_scan(x):
    def body(c, r):
        return c + 1.0 / (1.0 + jnp.exp(-r)), None  # expect: JX707
    return lax.scan(body, jnp.zeros(x.shape[1:]), x)[0]


# Quiet: a numerator other than 1, the library calls.


@jax.jit
def sigmoid_scaled(x):
    return 2.0 / (1.0 + jnp.exp(-x))


@jax.jit
def library(x):
    return jax.nn.sigmoid(x).sum() + expit(x).sum()


x = jnp.linspace(-3.0, 3.0, 12).reshape(3, 4)
for fn in (sigmoid_hand, in_scan, sigmoid_scaled, library):
    fn(x)
sigmoid_scaled_exp(x, 25.0)
