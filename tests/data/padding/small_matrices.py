"""JX312's cases: `jaxlint check --target tpu-v5e --select JX312` (tests/test_jx312.py); the
`# expect:` markers follow tests/rules/README.md. Sizes: 262144 matrices of 3 x 3 (9 MiB). The
inverse of small matrices is small_inverses.py's (its compile for a TPU takes longer than all of
these together: its test is marked slow)."""
import jax
import jax.numpy as jnp

N = 262144


@jax.jit
def chained_small_products(a, b):
    c = jnp.tanh(a @ b)  # expect: JX312
    return c @ b  # expect: JX312


# Quiet: the same contraction written elementwise (no padded buffer), too few matrices to cost
# 64 MiB, matrices large enough to fill the tiles (2x, not 8x), points whose entry layout XLA
# chooses without padding (f32[1048576, 3] is stored as 16 MiB for 12 MiB).


@jax.jit
def elementwise_products(a, b):
    c = jnp.tanh((a[..., :, :, None] * b[..., None, :, :]).sum(-2))
    return (c[..., :, :, None] * b[..., None, :, :]).sum(-2)


@jax.jit
def few_small_products(a, b):
    return jnp.tanh(a @ b)


@jax.jit
def tile_sized_products(a, b):
    return jnp.tanh(a @ b)


@jax.jit
def points(p):
    return jnp.sin(p) * 2.0


small = jax.ShapeDtypeStruct((N, 3, 3), jnp.float32)
chained_small_products.lower(small, small)
elementwise_products.lower(small, small)
few_small_products.lower(jax.ShapeDtypeStruct((4096, 3, 3), jnp.float32), jax.ShapeDtypeStruct((4096, 3, 3), jnp.float32))
tile_sized_products.lower(jax.ShapeDtypeStruct((16384, 64, 64), jnp.float32),
                          jax.ShapeDtypeStruct((16384, 64, 64), jnp.float32))
points.lower(jax.ShapeDtypeStruct((1048576, 3), jnp.float32))
