import jax
import jax.numpy as jnp
import numpy as np

TABLE = np.ones((512, 1024), np.float32)  # 2 MiB
JTABLE = jnp.ones((1024, 512), jnp.float32)
SMALL = np.ones((64, 64), np.float32)  # 16 KiB
LARGE = np.ones((512, 1024), np.float32)  # 2 MiB, but passed as an argument


@jax.jit
def numpy_constant(x):
    y = x * 2.0
    return y @ TABLE  # expect: JX301


@jax.jit
def jnp_constant(x):
    return JTABLE @ x  # expect: JX301


# A constant of a nested jit points into the helper; one in a scan body at the body's use.
def project(x):
    return x @ TABLE  # expect: JX301


@jax.jit
def through_inner_jit(x):
    return jax.jit(project)(x) + 1.0


def in_scan_body(x):
    def body(carry, _):
        carry = jnp.tanh(carry @ TABLE[:, :512])  # expect: JX301
        return carry, None
    return jax.lax.scan(body, x, None, length=3)[0]


# Quiet: a small constant, a large one passed as an argument, one made inside (a broadcast).


@jax.jit
def small_constant(x):
    return x @ SMALL


@jax.jit
def large_argument(x, table):
    return x @ table


@jax.jit
def created_inside(x):
    return x @ jnp.ones((512, 1024), jnp.float32)  # a broadcast, not a constant


x = jnp.ones((4, 512), jnp.float32)
numpy_constant(x)
jnp_constant(jnp.ones((512, 4), jnp.float32))
through_inner_jit(x)
in_scan_body(x)
small_constant(jnp.ones((4, 64)))
large_argument(x, LARGE)
created_inside(x)
