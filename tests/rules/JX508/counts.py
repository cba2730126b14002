import jax.numpy as jnp


def as_counts(x):
    return jnp.array(x, dtype="int64")  # expect: JX508


def cast(x, dtype):
    return x.astype(dtype)  # forwards its caller's dtype: the caller asked, and is reported
