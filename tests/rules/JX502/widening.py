import jax
import jax.numpy as jnp
import numpy as np

W = np.ones(8, np.float32)


@jax.jit
def plus_ones(x):
    return x + np.ones(8)  # expect: JX502


@jax.jit
def times_numpy_scalar(h):
    return h * np.float32(2)  # expect: JX502


@jax.jit
def constant_first(x):
    return np.float32(2) * x  # expect: JX502


@jax.jit
def mapped(m):
    return jax.vmap(lambda r: r - np.ones(8, np.float32))(m)  # expect: JX502


@jax.jit
def global_weight(x):
    y = x * W  # expect: JX502
    return y


# Quiet: weakly typed Python scalars, an explicit cast, the same dtype, arguments, a jnp array (the
# user's own choice), a comparison, f32 constants without x64, integers.


@jax.jit
def python_scalar(x):
    return x * 2.0 + 1


@jax.jit
def explicit_cast(x):
    return x.astype(jnp.float32) + np.ones(8, np.float32)


@jax.jit
def same_dtype(x):
    return x + np.ones(8, jnp.bfloat16) + np.ones(8).astype(x.dtype)


@jax.jit
def argument(x, y):
    return x + y


@jax.jit
def jnp_array(x):
    return x + jnp.ones(8, jnp.float32)


@jax.jit
def comparison(x):
    return x > np.float32(0)


@jax.jit
def f32_without_x64(y):
    return y * np.float64(2) + np.ones(8)


@jax.jit
def integer(i):
    return i + np.int32(3)


b = jnp.ones(8, jnp.bfloat16)
for fn in (plus_ones, constant_first, global_weight, python_scalar, explicit_cast, same_dtype,
           jnp_array, comparison):
    fn(b)
times_numpy_scalar(jnp.ones(8, jnp.float16))
mapped(jnp.ones((3, 8), jnp.bfloat16))
argument(b, jnp.ones(8, jnp.float32))
f32_without_x64(jnp.ones(8, jnp.float32))
integer(jnp.ones(8, jnp.int8))
