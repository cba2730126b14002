"""The remaining rules' triggers on a program sharded over a (4, 2) mesh of Auto axes (every
supported JAX): a `Mesh` of the devices, NamedSharding in_shardings, with_sharding_constraint.
Every line a rule must report ends in `# expect: JXnnn`; every other function must stay quiet."""
import functools

import jax
import jax.numpy as jnp
import numpy as np
from jax import lax
from jax.experimental import io_callback
from jax.sharding import Mesh, NamedSharding
from jax.sharding import PartitionSpec as P

mesh = Mesh(np.array(jax.devices()).reshape(4, 2), ("data", "model"))
rows = NamedSharding(mesh, P("data", None))
blocks = NamedSharding(mesh, P("data", "model"))
replicated = NamedSharding(mesh, P())
TABLE = np.ones((512, 1024), np.float32)  # 2 MiB
SMALL = np.ones((64, 64), np.float32)


def f32(*shape):
    return jax.ShapeDtypeStruct(shape, jnp.float32)


def i32(*shape):
    return jax.ShapeDtypeStruct(shape, jnp.int32)


def constrained(x):
    return lax.with_sharding_constraint(x, rows)


def heavy(x):
    return jnp.tanh(x @ x)


def count(n, x):
    return lax.while_loop(lambda c: c[0] < n, lambda c: (c[0] + 1, heavy(c[1])), (0, x))[1]  # expect: JX103


batch3 = NamedSharding(mesh, P("data", None, None))


@functools.partial(jax.jit, in_shardings=(NamedSharding(mesh, P("data")), batch3))
def batched_while(ns, xs):
    return jax.vmap(count)(ns, xs)


@functools.partial(jax.jit, in_shardings=(replicated, batch3))
def unbatched_while(n, xs):  # one trip count for the whole batch: quiet
    return jax.vmap(count, in_axes=(None, 0))(n, xs)


batched_while.trace(i32(8), f32(8, 16, 16))
unbatched_while.trace(i32(), f32(8, 16, 16))


def unrolled(x):
    for _ in range(300):
        x = x * 2.0 + 1.0  # expect: JX202
    return constrained(x)


def rolled(x):
    return constrained(lax.fori_loop(0, 300, lambda _, x: x * 2.0 + 1.0, x))


unrolled_sharded = jax.jit(unrolled, in_shardings=rows)
unrolled_sharded.trace(f32(8, 16))
rolled_sharded = jax.jit(rolled, in_shardings=rows)
rolled_sharded.trace(f32(8, 16))


def add_one(v):
    return constrained(v + 1.0)


# jaxlint: args x=f32[8@data, 16]
def train(x):
    for _ in range(3):
        x = jax.jit(add_one, out_shardings=rows)(x)  # expect: JX203
    return x


# jaxlint: args x=f32[8@data, 16]
def train_hoisted(x):
    step = jax.jit(add_one, out_shardings=rows)
    for _ in range(3):
        x = step(x)
    for sharding in (rows, blocks):  # a wrapper per sharding: quiet
        x = jax.jit(add_one, out_shardings=sharding)(x)
    return x


@functools.partial(jax.jit, static_argnums=1, in_shardings=rows)
def resize(x, shape):
    return jnp.broadcast_to(x.sum(), shape)


resize.trace(f32(8, 16), (2, 3))


def bad_static(x):
    return resize(x, [2, 3])  # expect: JX204


def good_static(x):
    return resize(x, (2, 3))


step_rows = NamedSharding(mesh, P("data"))


@functools.partial(jax.jit, in_shardings=(replicated, step_rows))
def decay(total, x):
    return total * 0.9 + jnp.sum(x)


@functools.partial(jax.jit, in_shardings=(replicated, step_rows))
def decay_cast(total, x):
    return total * 0.9 + jnp.sum(x)


batches = jax.device_put(jnp.ones((3, 8)), NamedSharding(mesh, P(None, "data")))
total = 0.0
for x in batches:
    total = decay(total, x)  # expect: JX206
cast_total = jnp.float32(0.0)
for x in batches:
    cast_total = decay_cast(cast_total, x)


def numpy_constant(x):
    return constrained(x) @ TABLE  # expect: JX301


def small_constant(x):
    return constrained(x) @ SMALL


numpy_constant_sharded = jax.jit(numpy_constant, in_shardings=rows)
numpy_constant_sharded.trace(f32(8, 512))
small_constant_sharded = jax.jit(small_constant, in_shardings=rows)
small_constant_sharded.trace(f32(8, 64))


def record(c):
    return np.asarray(c)


def print_in_scan(xs):
    def body(c, x):
        jax.debug.print("c={c}", c=c)  # expect: JX305
        return c + x, None
    return lax.scan(body, jnp.zeros(16), constrained(xs))[0]


def print_outside_loop(xs):
    jax.debug.print("xs={xs}", xs=xs)
    total = lax.scan(lambda c, x: (c + x, None), jnp.zeros(16), constrained(xs))[0]
    return io_callback(record, jax.ShapeDtypeStruct((16,), jnp.float32), total)


print_in_scan_sharded = jax.jit(print_in_scan, in_shardings=rows)
print_in_scan_sharded.trace(f32(8, 16))
print_outside_loop_sharded = jax.jit(print_outside_loop, in_shardings=rows)
print_outside_loop_sharded.trace(f32(8, 16))


def bf16(*shape):
    return jax.ShapeDtypeStruct(shape, jnp.bfloat16)


def plus_ones(x):
    return constrained(x) + np.ones(16, np.float32)  # expect: JX502


def python_scalar(x):
    return constrained(x) * 2.0 + 1


plus_ones_sharded = jax.jit(plus_ones, in_shardings=rows)
plus_ones_sharded.trace(bf16(8, 16))
python_scalar_sharded = jax.jit(python_scalar, in_shardings=rows)
python_scalar_sharded.trace(bf16(8, 16))


def mse(pred, y):
    return jnp.mean((constrained(pred) - y) ** 2)  # expect: JX506


def matching(pred, y):
    return jnp.mean((constrained(pred)[:, 0] - y) ** 2)


mse_sharded = jax.jit(mse, in_shardings=(rows, replicated))
mse_sharded.trace(f32(8, 1), f32(8))
matching_sharded = jax.jit(matching, in_shardings=(rows, replicated))
matching_sharded.trace(f32(8, 1), f32(8))


def scaled_positions():
    return constrained(jnp.arange(100_000).reshape(1000, 100)) * 100_000  # expect: JX507


def fits():
    return constrained(jnp.arange(10_000).reshape(100, 100)) * 100_000


scaled_positions_jit = jax.jit(scaled_positions)
scaled_positions_jit.trace()
fits_jit = jax.jit(fits)
fits_jit.trace()


def as_counts(x):
    return jnp.array(constrained(x), dtype="int64")  # expect: JX508


def as_int32(x):
    return jnp.array(constrained(x), dtype="int32")


as_counts_sharded = jax.jit(as_counts, in_shardings=rows)
as_counts_sharded.trace(f32(8, 16))
as_int32_sharded = jax.jit(as_int32, in_shardings=rows)
as_int32_sharded.trace(f32(8, 16))


@functools.partial(jax.jit, in_shardings=rows)
def branches(x):
    if x.sum() > 0:  # expect: JX601
        return x
    return -x


@functools.partial(jax.jit, in_shardings=rows)
def where_branches(x):
    return jnp.where(x.sum() > 0, x, -x)


try:
    branches.trace(f32(8, 16))
except Exception:
    pass
where_branches.trace(f32(8, 16))
LOG = []


@functools.partial(jax.jit, in_shardings=rows)
def prints(x):
    print(x)  # expect: JX602
    return constrained(x * 2)


@functools.partial(jax.jit, in_shardings=rows)
def prints_shape(x):
    print(x.shape)
    return constrained(x * 2)


prints.trace(f32(8, 16))
prints_shape.trace(f32(8, 16))
