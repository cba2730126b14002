"""Existing rules' triggers on a program sharded over a (4, 2) mesh of Auto axes (the form JAX
0.4.35 has): a `Mesh` of the devices, NamedSharding in_shardings, with_sharding_constraint.
Every line a rule must report ends in `# expect: JXnnn`; every other function must stay quiet."""
import functools

import jax
import jax.numpy as jnp
import numpy as np
from jax import lax
from jax.sharding import Mesh, NamedSharding
from jax.sharding import PartitionSpec as P

mesh = Mesh(np.array(jax.devices()).reshape(4, 2), ("data", "model"))
rows = NamedSharding(mesh, P("data", None))
blocks = NamedSharding(mesh, P("data", "model"))
replicated = NamedSharding(mesh, P())


def f32(*shape):
    return jax.ShapeDtypeStruct(shape, jnp.float32)


def pair(x, y):
    return x + 1, x * y


def vmap_first(x, y):
    a, b = jax.vmap(pair, in_axes=(None, 0))(x, y)  # expect: JX101
    return a[0], b


jax.jit(vmap_first, in_shardings=(replicated, rows)).trace(f32(16), f32(8, 16))


def grad_scan(w, xs):
    def loss(w):
        def body(c, x):
            a = jnp.tanh(w @ w)  # expect: JX201
            return jnp.tanh(a @ c + x), None
        return lax.scan(body, jnp.zeros(w.shape[0]), xs)[0].sum()
    return jax.grad(loss)(w)


jax.jit(grad_scan, in_shardings=(blocks, rows)).trace(f32(64, 64), f32(8, 64))


def sgd_step(params, batch):
    grads = jax.grad(lambda p: jnp.mean((batch @ p) ** 2))(params)
    return params - 0.1 * grads


sgd = jax.jit(sgd_step, in_shardings=(replicated, rows), out_shardings=replicated)  # expect: JX302
sgd.trace(f32(512, 512), f32(64, 512))


def sgd_step_donated(params, batch):
    grads = jax.grad(lambda p: jnp.mean((batch @ p) ** 2))(params)
    return params - 0.1 * grads


sgd_donated = jax.jit(sgd_step_donated, in_shardings=(replicated, rows), out_shardings=replicated,
                      donate_argnums=0)
sgd_donated.trace(f32(512, 512), f32(64, 512))


def max_copies(v):
    wide = lax.with_sharding_constraint(jnp.broadcast_to(v, (64, 32)), rows)
    return jnp.max(wide, axis=0)  # expect: JX304


def max_of_data(x):
    return jnp.max(lax.with_sharding_constraint(x * 2.0, rows), axis=0)


jax.jit(max_copies, in_shardings=replicated).trace(f32(32))
jax.jit(max_of_data, in_shardings=rows).trace(f32(64, 32))


def draws(key, x):
    a = jax.random.normal(key, x.shape)
    b = jax.random.normal(key, x.shape)  # expect: JX401
    return lax.with_sharding_constraint(a + b + x, rows)


def split_draws(key, x):
    k1, k2 = jax.random.split(key)
    a = jax.random.normal(k1, x.shape)
    return lax.with_sharding_constraint(a + jax.random.normal(k2, x.shape) + x, rows)


jax.jit(draws, in_shardings=(replicated, rows)).trace(jax.random.key(0), f32(8, 16))
jax.jit(split_draws, in_shardings=(replicated, rows)).trace(jax.random.key(0), f32(8, 16))


def safe_log(x):
    return jnp.where(x > 0, jnp.log(x), 0.0)  # expect: JX501


def guarded_log(x):
    return jnp.where(x > 0, jnp.log(jnp.where(x > 0, x, 1.0)), 0.0)


jax.jit(safe_log, in_shardings=rows).trace(f32(8, 16))
jax.jit(guarded_log, in_shardings=rows).trace(f32(8, 16))


def numerics(x, labels):
    lse = jnp.log(jnp.sum(jnp.exp(x), axis=-1))  # expect: JX701
    logp = jnp.log(jax.nn.softmax(x, axis=-1))  # expect: JX702
    e = jnp.exp(x)
    soft = e / e.sum(axis=-1, keepdims=True)  # expect: JX706
    p = 1.0 / (1.0 + jnp.exp(-x))  # expect: JX707
    bce = -(labels * jnp.log(jax.nn.sigmoid(x)))  # expect: JX708
    return lse, logp, soft, p, bce, jnp.log(1.0 + x)  # expect: JX703


def stable(x, labels):
    logp = jax.nn.log_softmax(x, axis=-1)
    return jax.nn.logsumexp(x, axis=-1), logp, jax.nn.softmax(x), jax.nn.sigmoid(x), labels * jax.nn.log_sigmoid(x)


jax.jit(numerics, in_shardings=(rows, rows)).trace(f32(8, 16), f32(8, 16))
jax.jit(stable, in_shardings=(rows, rows)).trace(f32(8, 16), f32(8, 16))


def norm_loss(a, b):
    return jnp.linalg.norm(a - b)  # expect: JX704


jax.jit(jax.grad(norm_loss), in_shardings=(rows, rows)).trace(f32(8, 16), f32(8, 16))


def solve_by_inverse(m, b):
    return jnp.linalg.inv(m) @ b  # expect: JX705


jax.jit(solve_by_inverse, in_shardings=(replicated, rows)).trace(f32(16, 16), f32(16, 8))


@functools.partial(jax.jit, in_shardings=(replicated, rows), out_shardings=(replicated, replicated),
                   donate_argnums=0)
def data_parallel_step(params, batch):
    """A plain data-parallel step: the batch split over `data`, the parameters replicated and
    donated, the gradient's mean an all-reduce. Nothing to report."""
    loss, grads = jax.value_and_grad(lambda p: jnp.mean(jnp.tanh(batch @ p) ** 2))(params)
    return params - 0.1 * grads, loss


data_parallel_step.trace(f32(512, 512), f32(64, 512))


def shifted(p):
    def body(p, i):
        p = p.at[i].set(jnp.sin(p[i - 1]))
        return p, None

    p, _ = lax.scan(body, p, jnp.arange(1, p.shape[0]))  # expect: JX307
    return p.sum()


def shifted_forward(p):
    def body(p, i):
        return p.at[i].set(jnp.sin(p[i - 1])), None

    return lax.scan(body, p, jnp.arange(1, p.shape[0]))[0]


# The carry split over `model` along a dimension the loop does not index.
carry_blocks = NamedSharding(mesh, P(None, "model", None))
grad_shifted = jax.jit(jax.grad(shifted), in_shardings=carry_blocks)
grad_shifted.trace(f32(1000, 10, 10))
jax.jit(shifted_forward, in_shardings=carry_blocks).trace(f32(1000, 10, 10))


@functools.partial(jax.jit, in_shardings=rows, donate_argnums=0)  # expect: JX308
def to_bf16(x):
    return (x * 2).astype(jnp.bfloat16)


@functools.partial(jax.jit, in_shardings=rows, donate_argnums=0)
def doubled(x):
    return x * 2


to_bf16.trace(f32(1024, 1024))
doubled.trace(f32(1024, 1024))


def residual(h, w):
    def body(h, _):
        a = jnp.tanh(h @ w)
        return h + jnp.tanh(a @ w), None

    h, _ = lax.scan(body, h, None, length=200)  # expect: JX306
    return h.sum()


# The batch split over `data`: each device stacks its rows' residuals. Unsharded, JX307 reports the
# 64 KiB carry copied every iteration (tests/rules/JX306.py); each device copies its 16 KiB share,
# below min-bytes.
grad_residual = jax.jit(jax.grad(residual, argnums=(0, 1)), in_shardings=(rows, replicated))
grad_residual.trace(f32(64, 256), f32(256, 256))


if __name__ == "__main__":  # the training loop rebinds the parameters each step (JX302 reads it)
    params, donated = jnp.zeros((512, 512)), jnp.zeros((512, 512))
    for batch in jnp.ones((3, 64, 512)):
        params = sgd(params, batch)
        donated = sgd_donated(donated, batch)
        params, loss = data_parallel_step(params, batch)
