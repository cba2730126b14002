import jax
import jax.numpy as jnp
from jax import lax


@jax.jit
def logsoftmax(x):
    return jnp.log(jax.nn.softmax(x, axis=-1))  # expect: JX702


# Quiet: an epsilon guard, the library call, log-softmax by hand with the max shifted out.


@jax.jit
def eps_guard(x):
    return jnp.log(jax.nn.softmax(x) + 1e-8).sum()


@jax.jit
def library(x):
    return jax.nn.log_softmax(x).sum() + jax.nn.softmax(x).sum()


@jax.jit
def log_softmax_hand_shifted(x):
    z = x - lax.stop_gradient(x.max(axis=-1, keepdims=True))
    return z - jnp.log(jnp.sum(jnp.exp(z), axis=-1, keepdims=True))


x = jnp.linspace(-3.0, 3.0, 12).reshape(3, 4)
for fn in (logsoftmax, eps_guard, library, log_softmax_hand_shifted):
    fn(x)
