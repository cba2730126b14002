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


# A jit of a vmap whose body fails on the rows the module passed: the module caught the error at
# import, the trace with the same batch raises it again.
@jax.jit
@jax.vmap
def rows_mismatch(row):
    return row @ jnp.ones(5)  # expect: JX601


# Quiet: traceable.


# A jit of a vmap the module calls with the batch: traced with i32[8], not with one row (i32[]).
@jax.jit
@jax.vmap
def row_indices(i):
    return jnp.nonzero(jnp.arange(8) > i, size=4, fill_value=-1)[0]


ROW_INDICES = row_indices(jnp.arange(8))


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
try:
    rows_mismatch(jnp.ones((4, 3)))
except TypeError:
    pass
