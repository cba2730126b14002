import jax
import jax.numpy as jnp
from jax.nn import sigmoid as sg


@jax.jit
def bce(logits, labels):
    p = sg(logits)
    return -(labels * jnp.log(p) + (1 - labels) * jnp.log(1 - p))  # expect: JX708, JX708


@jax.jit
def log_sigmoid_call(x):
    return jnp.log(jax.nn.sigmoid(x))  # expect: JX708


# Quiet: an epsilon guard, the library call.


@jax.jit
def eps_guard(x):
    return jnp.log(jax.nn.sigmoid(x) + 1e-7).sum()


@jax.jit
def library(x):
    return jax.nn.log_sigmoid(x).sum()


x = jnp.linspace(-3.0, 3.0, 12).reshape(3, 4)
for fn in (log_sigmoid_call, eps_guard, library):
    fn(x)
bce(x, (x > 0).astype(jnp.float32))
