"""Existing rules' triggers on a program sharded over a (4, 2) mesh of Explicit axes (JAX 0.10's
default for `jax.make_mesh`): the shardings travel in the jaxpr's types (`f32[64@data,32]`),
`jax.sharding.reshard` moves a value between them. Every line a rule must report ends in
`# expect: JXnnn`; every other function must stay quiet."""
import functools

import jax
import jax.numpy as jnp
from jax import lax
from jax.sharding import NamedSharding
from jax.sharding import PartitionSpec as P

mesh = jax.make_mesh((4, 2), ("data", "model"))
jax.sharding.set_mesh(mesh)


def sharded(shape, spec):
    return jax.ShapeDtypeStruct(shape, jnp.float32, sharding=NamedSharding(mesh, spec))


def pair(x, y):
    return x + 1, x * y


@jax.jit
def vmap_first(x, y):
    a, b = jax.vmap(pair, in_axes=(None, 0))(x, y)  # expect: JX101
    return a[0], b


# Called on arrays placed on the mesh: their shardings are the traced types.
vmap_first(jax.device_put(jnp.ones(32), NamedSharding(mesh, P())),
           jax.device_put(jnp.ones((8, 32)), NamedSharding(mesh, P(None, "model"))))


@jax.jit
def grad_scan(w, xs):
    def loss(w):
        def body(c, x):
            a = jnp.tanh(w @ w)  # expect: JX201
            return jnp.tanh(a @ c + x), None
        return lax.scan(body, jnp.zeros(w.shape[0]), xs)[0].sum()
    return jax.grad(loss)(w)


grad_scan.trace(sharded((64, 64), P(None, None)), sharded((8, 64), P(None, None)))


@jax.jit
def max_copies(v):
    wide = jax.sharding.reshard(jnp.broadcast_to(v, (64, 32)), P("data", None))
    return jnp.max(wide, axis=0)  # expect: JX304


@jax.jit
def max_of_data(x):
    return jnp.max(jax.sharding.reshard(x * 2.0, P("data", None)), axis=0)


max_copies.trace(sharded((32,), P()))
max_of_data.trace(sharded((64, 32), P("data", None)))


@jax.jit
def draws(key, x):
    a = jax.random.normal(key, x.shape, out_sharding=P("data", None))
    b = jax.random.normal(key, x.shape, out_sharding=P("data", None))  # expect: JX401
    return a + b + x


@jax.jit
def split_draws(key, x):
    k1, k2 = jax.random.split(key)
    return jax.random.normal(k1, x.shape, out_sharding=P("data", None)) + x


draws.trace(jax.random.key(0), sharded((8, 16), P("data", None)))
split_draws.trace(jax.random.key(0), sharded((8, 16), P("data", None)))


@jax.jit
def safe_log(x):
    return jnp.where(x > 0, jnp.log(x), 0.0)  # expect: JX501


@jax.jit
def guarded_log(x):
    return jnp.where(x > 0, jnp.log(jnp.where(x > 0, x, 1.0)), 0.0)


safe_log.trace(sharded((8, 16), P("data", "model")))
guarded_log.trace(sharded((8, 16), P("data", "model")))


@jax.jit
def numerics(x, labels):
    lse = jnp.log(jnp.sum(jnp.exp(x), axis=-1))  # expect: JX701
    logp = jnp.log(jax.nn.softmax(x, axis=-1))  # expect: JX702
    e = jnp.exp(x)
    soft = e / e.sum(axis=-1, keepdims=True)  # expect: JX706
    p = 1.0 / (1.0 + jnp.exp(-x))  # expect: JX707
    bce = -(labels * jnp.log(jax.nn.sigmoid(x)))  # expect: JX708
    return lse, logp, soft, p, bce, jnp.log(1.0 + x)  # expect: JX703


@jax.jit
def stable(x, labels):
    logp = jax.nn.log_softmax(x, axis=-1)
    return jax.nn.logsumexp(x, axis=-1), logp, jax.nn.softmax(x), jax.nn.sigmoid(x), labels * jax.nn.log_sigmoid(x)


numerics.trace(sharded((8, 16), P("data", None)), sharded((8, 16), P("data", None)))
stable.trace(sharded((8, 16), P("data", None)), sharded((8, 16), P("data", None)))


def norm_loss(a, b):
    return jnp.linalg.norm(a - b)  # expect: JX704


norm_grad = jax.jit(jax.grad(norm_loss))
norm_grad.trace(sharded((8, 16), P("data", None)), sharded((8, 16), P("data", None)))


@jax.jit
def solve_by_inverse(m, b):
    return jnp.linalg.inv(m) @ b  # expect: JX705


solve_by_inverse.trace(sharded((16, 16), P()), sharded((16, 8), P()))


@jax.jit
def sgd(params, batch):  # expect: JX302
    grads = jax.grad(lambda p: jnp.mean((batch @ p) ** 2))(params)
    return params - 0.1 * grads


@functools.partial(jax.jit, donate_argnums=0)
def data_parallel_step(params, batch):
    """A plain data-parallel step: the batch split over `data`, the parameters replicated and
    donated, the gradient's mean an all-reduce. Nothing to report."""
    loss, grads = jax.value_and_grad(lambda p: jnp.mean(jnp.tanh(batch @ p) ** 2))(params)
    return params - 0.1 * grads, loss


sgd.trace(sharded((512, 512), P(None, "model")), sharded((64, 512), P("data", None)))
data_parallel_step.trace(sharded((512, 512), P()), sharded((64, 512), P("data", None)))


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
grad_shifted = jax.jit(jax.grad(shifted))
grad_shifted.trace(sharded((1000, 10, 10), P(None, "model", None)))
jax.jit(shifted_forward).trace(sharded((1000, 10, 10), P(None, "model", None)))


@functools.partial(jax.jit, donate_argnums=0)  # expect: JX308
def to_bf16(x):
    return (x * 2).astype(jnp.bfloat16)


@functools.partial(jax.jit, donate_argnums=0)
def doubled(x):
    return x * 2


to_bf16.trace(sharded((1024, 1024), P("data", None)))
doubled.trace(sharded((1024, 1024), P("data", None)))


def residual(h, w):
    def body(h, _):
        a = jnp.tanh(h @ w)
        return h + jnp.tanh(a @ w), None

    h, _ = lax.scan(body, h, None, length=200)  # expect: JX306
    return h.sum()


# The batch split over `data`: each device stacks its rows' residuals. Unsharded, JX307 reports the
# 64 KiB carry copied every iteration (tests/rules/JX306.py); each device copies its 16 KiB share,
# below min-bytes.
grad_residual = jax.jit(jax.grad(residual, argnums=(0, 1)))
grad_residual.trace(sharded((64, 256), P("data", None)), sharded((256, 256), P()))


if __name__ == "__main__":  # the training loop rebinds the parameters each step (JX302 reads it)
    params = jnp.zeros((512, 512))
    for batch in jnp.ones((3, 64, 512)):
        params = sgd(params, batch)
        params, loss = data_parallel_step(params, batch)
