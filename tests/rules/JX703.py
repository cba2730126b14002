import jax
import jax.numpy as jnp
from jax import lax
from jax.numpy import exp, log


@jax.jit
def log1p_hand(x):
    return jnp.log(1.0 + x) + (jnp.exp(x) - 1)  # expect: JX703, JX703


@jax.jit
def softplus_hand(x):
    return log(1 + exp(x))  # expect: JX703


def helper(v):
    return jnp.exp(v) - 1  # expect: JX703


@jax.jit
def through_helper(x):
    return helper(x) * 2.0


@jax.jit
def in_cond(x):
    return lax.cond(x.sum() > 0, lambda v: jnp.log(1 + v), lambda v: v, x)  # expect: JX703


# Quiet: other constants than 1, the library calls.


@jax.jit
def other_constants(x):
    return jnp.log(x + 2.0) + jnp.log(1.0 + 1.0) + (jnp.exp(x) - 2.0) + jnp.log(1.0 - x)


@jax.jit
def library(x):
    return jnp.log1p(x).sum() + jnp.expm1(x).sum() + jax.nn.softplus(x).sum()


x = jnp.linspace(-3.0, 3.0, 12).reshape(3, 4)
for fn in (log1p_hand, softplus_hand, through_helper, in_cond, other_constants, library):
    fn(x)
