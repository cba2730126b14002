"""JX311's triggers and near misses on a TPU v5e (15.75 GiB of HBM per chip): tests/test_jx311.py
checks them with `jaxlint check --target tpu-v5e`. The marks follow tests/rules/README.md."""
import jax
import jax.numpy as jnp


# jaxlint traces the loss alone with the first call's arguments (huge_step's): 32 GiB, the weights
# and the batch themselves.
def mlp(ws, x):  # expect: JX311
    h = x
    for w in ws:
        h = jnp.tanh(h @ w)
    return h.sum()


def layers(n):
    return [jax.ShapeDtypeStruct((n, n), jnp.float32)] * 4


def batch(b, n):
    return jax.ShapeDtypeStruct((b, n), jnp.float32)


# XLA refuses it (RESOURCE_EXHAUSTED): 56 GiB, 32 GiB of it the weights and their gradients, so no
# smaller batch, donation or batch sharding fits.
def huge_step(ws, x):  # expect: JX311
    return jax.grad(mlp)(ws, x)


jax.jit(huge_step).lower(layers(32768), batch(65536, 32768))


# 16.5 GiB: fits with half the batch, or with the batch sharded over a 2x2 slice.
def slice_step(ws, x):  # expect: JX311
    return jax.grad(mlp)(ws, x)


jax.jit(slice_step).lower(layers(4096), batch(262144, 4096))


# Quiet: 5.5 GiB.
def small_step(ws, x):
    return jax.grad(mlp)(ws, x)


jax.jit(small_step).lower(layers(4096), batch(65536, 4096))


# Quiet: 15.0 GiB, 95% of the chip's HBM (explain says so; check does not report it).
def full_step(ws, x):
    return jax.grad(mlp)(ws, x)


jax.jit(full_step).lower(layers(4096), batch(237568, 4096))


# 16.5 GiB: the parameter, its gradient and the new parameter. Donating `w` fits (11.00 GiB), and
# so does sharding both over a 2x2 slice.
def sgd(w, g):  # expect: JX311
    return w - 0.1 * g


update = jax.jit(sgd)
update.lower(batch(45056, 32768), batch(45056, 32768))
