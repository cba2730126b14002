"""JX311 on a program the module shards itself: checked by tests/test_jx311.py with
`jaxlint check --target tpu-v5e:2x4`, the mesh laid on the slice's 8 chips. Each chip holds an
eighth of the batch: 16.50 GiB, above the 15.75 GiB it has."""
from functools import partial

import jax
import jax.numpy as jnp
from jax.sharding import NamedSharding
from jax.sharding import PartitionSpec as P

try:  # JAX >= 0.6 makes Explicit axes by default; the compile places the jit's Auto ones
    from jax.sharding import AxisType
    AUTO = {"axis_types": (AxisType.Auto,)}
except ImportError:  # 0.4.35: every axis is Auto
    AUTO = {}

mesh = jax.make_mesh((8,), ("data",), **AUTO)
batch = NamedSharding(mesh, P("data"))
replicated = NamedSharding(mesh, P())


@partial(jax.jit, in_shardings=(replicated, batch))
def step(ws, x):  # expect: JX311
    def loss(ws, x):
        h = x
        for w in ws:
            h = jnp.tanh(h @ w)
        return h.sum()

    return jax.grad(loss)(ws, x)


step.lower([jax.ShapeDtypeStruct((4096, 4096), jnp.float32)] * 4, jax.ShapeDtypeStruct((2097152, 4096), jnp.float32))
