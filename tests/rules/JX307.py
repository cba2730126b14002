import jax
import jax.numpy as jnp
from jax import lax

P = jax.ShapeDtypeStruct((1000, 10, 10), jnp.float32)
SMALL = jax.ShapeDtypeStruct((100, 10, 10), jnp.float32)


def shifted(P):
    def body(P, i):
        P = P.at[i].set(P[i - 1] * 1.01)
        return P, None

    P, _ = lax.scan(body, P, jnp.arange(1, P.shape[0]))  # expect: JX307
    return P.sum()


grad_shifted = jax.jit(jax.grad(shifted))
grad_shifted.lower(P)


# Quiet: the same loop forward only (XLA updates the carry in place), and its gradient on a carry
# of 40 KB, below min-bytes (64 KiB).


def shifted_forward(P):
    def body(P, i):
        P = P.at[i].set(P[i - 1] * 1.01)
        return P, None

    P, _ = lax.scan(body, P, jnp.arange(1, P.shape[0]))
    return P.sum()


forward = jax.jit(shifted_forward)
forward.lower(P)


def shifted_small(P):
    def body(P, i):
        P = P.at[i].set(P[i - 1] * 1.01)
        return P, None

    P, _ = lax.scan(body, P, jnp.arange(1, P.shape[0]))
    return P.sum()


grad_small = jax.jit(jax.grad(shifted_small))
grad_small.lower(SMALL)


def accumulate(P):
    def body(carry, row):  # a carry updated in place by an add: no copy
        return carry + row, None

    total, _ = lax.scan(body, jnp.zeros(P.shape[1:]), P)
    return total.sum()


grad_accumulate = jax.jit(jax.grad(accumulate))
grad_accumulate.lower(P)
