"""More rules' triggers on a program sharded over a (4, 2) mesh of Auto axes (every supported JAX):
the values are placed by each jit's in_shardings or by a sharding constraint. Every line a rule must
report ends in `# expect: JXnnn`; every other function must stay quiet."""
import jax
import jax.numpy as jnp
import numpy as np
from jax import lax
from jax.sharding import Mesh, NamedSharding
from jax.sharding import PartitionSpec as P

mesh = Mesh(np.array(jax.devices()).reshape(4, 2), ("data", "model"))
rows = NamedSharding(mesh, P("data", None))
replicated = NamedSharding(mesh, P())


def f32(*shape):
    return jax.ShapeDtypeStruct(shape, jnp.float32)


def heavy(x):
    return jnp.tanh(x @ jnp.ones((16, 16))) @ jnp.ones((16, 16))


def light(x):
    return x + 1.0


def pick(p, x):
    return lax.cond(p > 0, heavy, light, x)  # expect: JX102


def batched_cond(ps, xs):
    return jax.vmap(pick)(ps, xs)


batched_cond_sharded = jax.jit(batched_cond, in_shardings=(NamedSharding(mesh, P("data")), rows))
batched_cond_sharded.trace(f32(8), f32(8, 16))


def columns(x):
    return x[:, np.arange(0, 4)]  # expect: JX303


def column_slice(x):  # a slice, not a gather: quiet
    return x[:, 0:4]


columns_sharded = jax.jit(columns, in_shardings=rows)
columns_sharded.trace(f32(8, 16))
column_slice_sharded = jax.jit(column_slice, in_shardings=rows)
column_slice_sharded.trace(f32(8, 16))


def past_end(x):
    return x[9]  # expect: JX503


def last_row(x):  # in bounds: quiet
    return x[7]


past_end_sharded = jax.jit(past_end, in_shardings=rows)
past_end_sharded.trace(f32(8, 16))
last_row_sharded = jax.jit(last_row, in_shardings=rows)
last_row_sharded.trace(f32(8, 16))


def discarded(x):
    x.at[0].set(0.0)  # expect: JX504
    return x * 2


def kept(x):  # the update is used: quiet
    x = x.at[0].set(0.0)
    return x * 2


discarded_sharded = jax.jit(discarded, in_shardings=rows)
discarded_sharded.trace(f32(8, 16))
kept_sharded = jax.jit(kept, in_shardings=rows)
kept_sharded.trace(f32(8, 16))


def rounded_loss(w, x):
    return jnp.sum(jnp.round(x @ w) ** 2)  # expect: JX505


def smooth_loss(w, x):  # differentiable: quiet
    return jnp.sum((x @ w) ** 2)


rounded_grad = jax.jit(jax.grad(rounded_loss), in_shardings=(replicated, rows))
rounded_grad.trace(f32(16, 16), f32(8, 16))
smooth_grad = jax.jit(jax.grad(smooth_loss), in_shardings=(replicated, rows))
smooth_grad.trace(f32(16, 16), f32(8, 16))
