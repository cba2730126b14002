import jax
import jax.numpy as jnp
import numpy as np
from counts import as_counts, cast


@jax.jit
def zeros_f64(x):
    return x + jnp.zeros(3, dtype=jnp.float64)  # expect: JX508


@jax.jit
def astype_f64(x):
    return x.astype(jnp.float64) * 2  # expect: JX508


@jax.jit
def counted(x):
    return as_counts(x) + 1  # the request is in counts.py: reported there, at its line


@jax.jit
def forwarded(x):
    return cast(x, jnp.float64)  # expect: JX508


@jax.jit
def mapped(m):
    return jax.vmap(lambda row: row.astype(jnp.complex128))(m)  # expect: JX508


@jax.jit
def scanned(xs):
    def body(carry, row):
        return carry + jnp.ones_like(row, dtype=jnp.float64), None  # expect: JX508

    return jax.lax.scan(body, jnp.zeros(3), xs)[0]


@jax.jit
def labelled(x):
    return {"größe": x.astype(jnp.int64)}  # expect: JX508


# Quiet: float32 asked for, float64 named only to read its limits, default dtypes, a NumPy float64
# constant (JAX converts it without being asked for a dtype).


@jax.jit
def zeros_f32(x):
    return x + jnp.zeros(3, dtype=jnp.float32)


@jax.jit
def finfo_only(x):
    return x + float(jnp.finfo(jnp.float64).eps)


@jax.jit
def default_dtypes(x):
    return x * jnp.arange(3) + jnp.ones(3)


@jax.jit
def numpy_constant(x):
    return x * np.ones(3)


x = jnp.ones(3)
for fn in (zeros_f64, astype_f64, counted, forwarded, labelled, zeros_f32, finfo_only, default_dtypes, numpy_constant):
    fn(x)
mapped(jnp.ones((2, 3)))
scanned(jnp.ones((4, 3)))
