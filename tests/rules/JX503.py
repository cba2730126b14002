import jax
import jax.numpy as jnp
import numpy as np
from jax import lax


@jax.jit
def past_end(x):
    return x[7]  # expect: JX503


@jax.jit
def before_start(x):
    return x[-7]  # expect: JX503


@jax.jit
def numpy_int(x):
    return x[np.int32(7)]  # expect: JX503


@jax.jit
def jnp_array(x):
    return x[jnp.array(7)]  # expect: JX503


@jax.jit
def set_dropped(x):
    return x.at[9].set(1.0)  # expect: JX503


@jax.jit
def add_dropped(x):
    return x.at[9].add(1.0)  # expect: JX503


@jax.jit
def set_negative(x):
    return x.at[-7].set(1.0)  # expect: JX503


@jax.jit
def window(x):
    return lax.dynamic_slice(x, (4,), (3,))  # expect: JX503


@jax.jit
def update(x):
    return lax.dynamic_update_slice(x, jnp.ones(2), (4,))  # expect: JX503


@jax.jit
def matrix(m):
    return m[1, 7]  # expect: JX503


@jax.jit
def get_default(x):
    return x.at[9].get()  # expect: JX503


@jax.jit
def differentiated(x):
    return jax.grad(lambda v: v[7] * 2.0)(x)  # expect: JX503



# Quiet: in bounds, traced indices, take's fill, an explicit mode, an empty slice, an index array
# closed over.


@jax.jit
def in_bounds(x, m):
    return (x[4] + x[-5] + x.at[4].set(1.0).sum() + x.at[-5].set(2.0).sum() + m[4, 2]
            + lax.dynamic_slice(x, (2,), (3,)).sum() + x[np.int32(3)] + x.at[4].get())


@jax.jit
def traced(x, i):
    return x[i] + x.at[i].set(1.0).sum()


@jax.jit
def take_fill(x):
    return jnp.take(x, 7)


@jax.jit
def explicit_mode(x):
    return x.at[9].set(1.0, mode="drop").sum() + x.at[9].get(mode="clip")


@jax.jit
def empty_slice(x):
    return x[7:9]


@jax.jit
def closed_over_indices(x):
    return x[np.array([1, 7])]



x = jnp.ones(5)
for fn in (past_end, before_start, numpy_int, jnp_array, set_dropped, add_dropped, set_negative,
           window, update, get_default, differentiated):
    fn(x)
matrix(jnp.ones((5, 3)))
in_bounds(x, jnp.ones((5, 3)))
traced(x, 2)
for fn in (take_fill, explicit_mode, empty_slice, closed_over_indices):
    fn(x)
