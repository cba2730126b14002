import jax
import jax.numpy as jnp
import numpy as np


@jax.jit
def columns(x):
    return x[:, np.arange(0, 4)]  # expect: JX303


@jax.jit
def strided_list(v):
    return v[jnp.array([0, 2, 4])]  # expect: JX303


@jax.jit
def jnp_arange_step(v):
    return v[jnp.arange(1, 9, 3)] + 1.0  # expect: JX303


@jax.jit
def rows_first(x):
    return x[np.array([1, 2]), :]  # expect: JX303


@jax.jit
def from_end(v):
    return v[np.array([-3, -2, -1])]  # expect: JX303


# Reported without a fix: indices of both signs.
@jax.jit
def mixed_signs(v):
    return v[np.array([-10, 1])]  # expect: JX303


# Quiet: not a strided range (a permutation, repeated, decreasing, out of bounds, one index), a
# traced index, a slice already, indices held in a variable.


@jax.jit
def permutation(v):
    return v[np.array([3, 1, 2])]


@jax.jit
def traced_index(v, i):
    return v[i]


@jax.jit
def plain_slice(v):
    return v[2:8]


@jax.jit
def repeated(v):
    return v[np.array([2, 2, 2])]


@jax.jit
def decreasing(v):
    return v[np.array([4, 3, 2])]


@jax.jit
def out_of_bounds(v):
    return v[np.array([8, 9, 10])]


@jax.jit
def single(v):
    return v[np.array([3])]


@jax.jit
def index_in_variable(v):
    idx = np.arange(0, 4)
    return v[idx]


x = jnp.ones((3, 10))
v = jnp.arange(10.0)
columns(x)
rows_first(x)
traced_index(v, jnp.arange(3))
for fn in (strided_list, jnp_arange_step, from_end, mixed_signs, permutation, plain_slice, repeated, decreasing,
           out_of_bounds, single, index_in_variable):
    fn(v)
