"""The remaining rules' triggers on a program sharded over a (4, 2) mesh of Explicit axes (JAX
0.10's default for `jax.make_mesh`): the shardings travel in the jaxpr's types (`f32[8@data,16]`),
`jax.sharding.reshard` moves a value between them. Every line a rule must report ends in
`# expect: JXnnn`; every other function must stay quiet."""
import functools

import jax
import jax.numpy as jnp
import numpy as np
from jax import lax
from jax.experimental import io_callback
from jax.sharding import NamedSharding
from jax.sharding import PartitionSpec as P

mesh = jax.make_mesh((4, 2), ("data", "model"))
jax.sharding.set_mesh(mesh)
TABLE = np.ones((512, 1024), np.float32)  # 2 MiB
SMALL = np.ones((64, 64), np.float32)


def sharded(shape, spec, dtype=jnp.float32):
    return jax.ShapeDtypeStruct(shape, dtype, sharding=NamedSharding(mesh, spec))


def by_rows(x):
    return jax.sharding.reshard(x, P("data", *[None] * (x.ndim - 1)))


def heavy(x):
    return jnp.tanh(x @ x)


def count(n, x):
    return lax.while_loop(lambda c: c[0] < n, lambda c: (c[0] + 1, heavy(c[1])), (0, x))[1]  # expect: JX103


@jax.jit
def batched_while(ns, xs):
    return jax.vmap(count)(ns, xs)


@jax.jit
def unbatched_while(n, xs):  # one trip count for the whole batch: quiet
    return jax.vmap(count, in_axes=(None, 0))(n, xs)


# The batch axis itself stays whole: JAX 0.10.2's vmap of a while loop rejects a batch split over
# an Explicit axis ("Resource axis: data ... is not found in mesh: ()"); the rows are split instead.
batched_while.trace(sharded((8,), P(), jnp.int32), sharded((8, 16, 16), P(None, "model", None)))
unbatched_while.trace(sharded((), P(), jnp.int32), sharded((8, 16, 16), P(None, "model", None)))


@jax.jit
def unrolled(x):
    for _ in range(300):
        x = x * 2.0 + 1.0  # expect: JX202
    return by_rows(x)


@jax.jit
def rolled(x):
    return by_rows(lax.fori_loop(0, 300, lambda _, x: x * 2.0 + 1.0, x))


unrolled.trace(sharded((8, 16), P("data", "model")))
rolled.trace(sharded((8, 16), P("data", "model")))


def add_one(v):
    return by_rows(v + 1.0)


# jaxlint: args x=f32[8@data, 16]
def train(x):
    for _ in range(3):
        x = jax.jit(add_one)(x)  # expect: JX203
    return x


# jaxlint: args x=f32[8@data, 16]
def train_hoisted(x):
    step = jax.jit(add_one)
    for _ in range(3):
        x = step(x)
    return x


@functools.partial(jax.jit, static_argnums=1)
def resize(x, shape):
    return jnp.broadcast_to(x.sum(), shape)


resize.trace(sharded((8, 16), P("data", None)), (2, 3))


def bad_static(x):
    return resize(x, [2, 3])  # expect: JX204


def good_static(x):
    return resize(x, (2, 3))


@jax.jit
def decay(total, x):
    return total * 0.9 + jnp.sum(x)


@jax.jit
def decay_cast(total, x):
    return total * 0.9 + jnp.sum(x)


batches = jax.device_put(jnp.ones((3, 8)), NamedSharding(mesh, P(None, "data")))
total = 0.0
for x in batches:
    total = decay(total, x)  # expect: JX206
cast_total = jnp.float32(0.0)
for x in batches:
    cast_total = decay_cast(cast_total, x)


@jax.jit
def numpy_constant(x):
    return by_rows(x) @ TABLE  # expect: JX301


@jax.jit
def small_constant(x):
    return by_rows(x) @ SMALL


numpy_constant.trace(sharded((8, 512), P("data", None)))
small_constant.trace(sharded((8, 64), P("data", None)))


def record(c):
    return np.asarray(c)


@jax.jit
def print_in_scan(xs):
    def body(c, x):
        jax.debug.print("c={c}", c=c)  # expect: JX305
        return c + x, None
    return lax.scan(body, jnp.zeros(16), xs)[0]


@jax.jit
def print_outside_loop(xs):
    jax.debug.print("xs={xs}", xs=xs)
    total = lax.scan(lambda c, x: (c + x, None), jnp.zeros(16), xs)[0]
    return io_callback(record, jax.ShapeDtypeStruct((16,), jnp.float32), total)


print_in_scan.trace(sharded((8, 16), P(None, None)))
print_outside_loop.trace(sharded((8, 16), P(None, None)))


@jax.jit
def plus_ones(x):
    return by_rows(x) + np.ones(16, np.float32)  # expect: JX502


@jax.jit
def python_scalar(x):
    return by_rows(x) * 2.0 + 1


plus_ones.trace(sharded((8, 16), P("data", None), jnp.bfloat16))
python_scalar.trace(sharded((8, 16), P("data", None), jnp.bfloat16))


@jax.jit
def mse(pred, y):
    return jnp.mean((pred - y) ** 2)  # expect: JX506


@jax.jit
def matching(pred, y):
    return jnp.mean((pred[:, 0] - y) ** 2)


mse.trace(sharded((8, 1), P("data", None)), sharded((8,), P()))
matching.trace(sharded((8, 1), P("data", None)), sharded((8,), P()))


@jax.jit
def scaled_positions():
    return by_rows(jnp.arange(100_000).reshape(1000, 100)) * 100_000  # expect: JX507


@jax.jit
def fits():
    return by_rows(jnp.arange(10_000).reshape(100, 100)) * 100_000


scaled_positions.trace()
fits.trace()


@jax.jit
def as_counts(x):
    return jnp.array(by_rows(x), dtype="int64")  # expect: JX508


@jax.jit
def as_int32(x):
    return jnp.array(by_rows(x), dtype="int32")


as_counts.trace(sharded((8, 16), P("data", "model")))
as_int32.trace(sharded((8, 16), P("data", "model")))


@jax.jit
def branches(x):
    if x.sum() > 0:  # expect: JX601
        return x
    return -x


@jax.jit
def where_branches(x):
    return jnp.where(x.sum() > 0, x, -x)


try:
    branches.trace(sharded((8, 16), P("data", None)))
except Exception:
    pass
where_branches.trace(sharded((8, 16), P("data", None)))


@jax.jit
def prints(x):
    print(x)  # expect: JX602
    return by_rows(x * 2)


@jax.jit
def prints_shape(x):
    print(x.shape)
    return by_rows(x * 2)


prints.trace(sharded((8, 16), P("data", "model")))
prints_shape.trace(sharded((8, 16), P("data", "model")))
