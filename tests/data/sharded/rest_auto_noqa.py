"""Suppressions on findings of a sharded program (a (4, 2) mesh of Auto axes, every supported JAX):
a `# noqa` naming the rule silences it; one naming another rule leaves it reported and is itself
reported unused (JX800)."""
import jax
import jax.numpy as jnp
import numpy as np
from jax import lax
from jax.sharding import Mesh, NamedSharding
from jax.sharding import PartitionSpec as P

mesh = Mesh(np.array(jax.devices()).reshape(4, 2), ("data", "model"))
rows = NamedSharding(mesh, P("data", None))
TABLE = np.ones((512, 1024), np.float32)  # 2 MiB


def constant_silenced(x):
    return lax.with_sharding_constraint(x, rows) @ TABLE  # noqa: JX301


def overflow_silenced():
    return lax.with_sharding_constraint(jnp.arange(100_000).reshape(1000, 100), rows) * 100_000  # noqa: JX507


def other_code(x):
    return lax.with_sharding_constraint(x, rows) @ TABLE  # noqa: JX502  # expect: JX301, JX800


constant_silenced_sharded = jax.jit(constant_silenced, in_shardings=rows)
constant_silenced_sharded.trace(jax.ShapeDtypeStruct((8, 512), jnp.float32))
overflow_silenced_sharded = jax.jit(overflow_silenced)
overflow_silenced_sharded.trace()
other_code_sharded = jax.jit(other_code, in_shardings=rows)
other_code_sharded.trace(jax.ShapeDtypeStruct((8, 512), jnp.float32))
