import jax
import jax.numpy as jnp
from jax import lax
from jax.numpy import exp, log
from jax.scipy.special import logsumexp


@jax.jit
def lse(x):
    return jnp.log(jnp.sum(jnp.exp(x), axis=-1))  # expect: JX701


@jax.jit
def lse_aliases(x):
    return log(exp(x).sum())  # expect: JX701


@jax.jit
def in_vmap(x):
    return jax.vmap(lambda r: jnp.log(jnp.sum(jnp.exp(r))))(x)  # expect: JX701


# Quiet: the max shifted out (or its stop_gradient), a bounded or constant exponent, the library.


@jax.jit
def shifted_lse(x):
    m = jnp.max(x, axis=-1, keepdims=True)
    return jnp.log(jnp.sum(jnp.exp(x - m), axis=-1)) + m[..., 0]


@jax.jit
def shifted_stop(x):
    m = lax.stop_gradient(x.max())
    return jnp.log(jnp.sum(jnp.exp(x - m))) + m


@jax.jit
def log_softmax_hand_shifted(x):
    z = x - lax.stop_gradient(x.max(axis=-1, keepdims=True))
    return z - jnp.log(jnp.sum(jnp.exp(z), axis=-1, keepdims=True))


@jax.jit
def bounded_exp(x):
    return jnp.log(jnp.sum(jnp.exp(jnp.tanh(x))))


@jax.jit
def constant_exp(x):
    c = jnp.arange(4.0)
    return x + jnp.log(jnp.sum(jnp.exp(c)))


@jax.jit
def library(x):
    return jax.nn.logsumexp(x) + logsumexp(x, axis=0).sum()


x = jnp.linspace(-3.0, 3.0, 12).reshape(3, 4)
for fn in (lse, lse_aliases, in_vmap, shifted_lse, shifted_stop, log_softmax_hand_shifted, bounded_exp,
           constant_exp, library):
    fn(x)
