from functools import partial

import jax
import jax.numpy as jnp
import numpy as np


@jax.jit
def branches(x):
    if x.sum() > 0:  # bool  # expect: JX601
        return x
    return -x


@jax.jit
def to_int(x):
    return jnp.zeros(3)[: int(x.sum())]  # int  # expect: JX601


@jax.jit
def to_numpy(x):
    return np.asarray(x) + 1  # numpy  # expect: JX601


@jax.jit
def boolean_index(x):
    return x[x > 0]  # mask  # expect: JX601


@jax.jit
def traced_shape(x, n):
    return jnp.ones(n) + x.sum()  # shape  # expect: JX601


# A list where a static argument is expected: tracing fails as calling it would.
# jaxlint: args x=f32[3], sizes=[1, 2]
@partial(jax.jit, static_argnums=1)
def static_list(x, sizes):  # expect: JX601
    return x * len(sizes)


# Quiet: traceable.


@jax.jit
def fine(x):
    return jnp.where(x > 0, x, -x)


x = jnp.ones(3)
for f in (branches, to_int, to_numpy, boolean_index, fine):
    try:
        f.trace(x)
    except Exception:
        pass
try:
    traced_shape.trace(x, 3)
except Exception:
    pass
