import jax.numpy as jnp


def as_counts(x):
    return jnp.array(x, dtype="int64")  # expect: JX508
