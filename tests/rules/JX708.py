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


@jax.jit
def softplus_by_hand(x):
    return x + jnp.log1p(jnp.exp(-x))  # expect: JX708


@jax.jit
def log1p_of_exp(x):
    return jnp.log1p(jnp.exp(x))  # expect: JX708


@jax.jit
def log_sigmoid_by_hand_named(x):
    e = jnp.exp(-x)
    return -jnp.log1p(e)  # expect: JX708


# Quiet: an epsilon guard, the library call, the stable softplus (exp of -|x| is at most 1), an exp
# of a bounded or max-shifted value.


@jax.jit
def eps_guard(x):
    return jnp.log(jax.nn.sigmoid(x) + 1e-7).sum()


@jax.jit
def library(x):
    return jax.nn.log_sigmoid(x).sum() + jax.nn.softplus(x).sum()


@jax.jit
def stable_softplus(x):
    return jnp.maximum(x, 0.0) + jnp.log1p(jnp.exp(-jnp.abs(x)))


@jax.jit
def bounded_exp(x):
    return jnp.log1p(jnp.exp(jnp.tanh(x))) + jnp.log1p(jnp.exp(x - jnp.max(x)))


x = jnp.linspace(-3.0, 3.0, 12).reshape(3, 4)
for fn in (log_sigmoid_call, eps_guard, library, softplus_by_hand, log1p_of_exp, log_sigmoid_by_hand_named,
           stable_softplus, bounded_exp):
    fn(x)
bce(x, (x > 0).astype(jnp.float32))
