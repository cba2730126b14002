import jax
import jax.numpy as jnp


@jax.jit
def softmax_variable(x):
    e = jnp.exp(x)
    return e / e.sum(axis=0)  # expect: JX706


@jax.jit
def softmax_hand(x):
    return jnp.exp(x) / jnp.sum(jnp.exp(x), axis=-1, keepdims=True)  # expect: JX706


# Quiet: the max shifted out, a bounded exponent, the library call.


@jax.jit
def softmax_shifted(x):
    e = jnp.exp(x - x.max(axis=-1, keepdims=True))
    return e / e.sum(axis=-1, keepdims=True)


@jax.jit
def bounded_exp(x):
    return (jnp.exp(jnp.sin(x)) / jnp.exp(jnp.sin(x)).sum()).sum()


@jax.jit
def library(x):
    return jax.nn.softmax(x).sum()


x = jnp.linspace(-3.0, 3.0, 12).reshape(3, 4)
for fn in (softmax_variable, softmax_hand, softmax_shifted, bounded_exp, library):
    fn(x)
