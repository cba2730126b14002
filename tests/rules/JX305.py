import jax
import jax.numpy as jnp
import numpy as np
from jax.experimental import io_callback


def record(c):
    return np.asarray(c)


@jax.jit
def print_in_scan(xs):
    def body(c, x):
        jax.debug.print("c={c}", c=c)  # expect: JX305
        return c + x, None
    return jax.lax.scan(body, 0.0, xs)[0]


@jax.jit
def callback_in_cond_in_scan(xs):
    def body(c, x):
        c = jax.lax.cond(x > 0, lambda c: jax.pure_callback(record, jax.ShapeDtypeStruct((), jnp.float32), c),  # expect: JX305
                         lambda c: c, c)
        return c + x, None
    return jax.lax.scan(body, jnp.float32(0), xs)[0]


@jax.jit
def io_in_while(x):
    def body(x):
        io_callback(record, jax.ShapeDtypeStruct((), jnp.float32), x)  # expect: JX305
        return x + 1.0
    return jax.lax.while_loop(lambda x: x < 10.0, body, x)


@jax.jit
def debug_callback_nested(xs):
    def inner(c, x):
        jax.debug.callback(lambda v: None, c)  # expect: JX305
        return c + x, None
    return jax.lax.fori_loop(0, 5, lambda i, c: jax.lax.scan(inner, c, xs)[0], 0.0)


# Quiet: callbacks outside any loop of the program, in a Python loop (unrolled: no loop left).


@jax.jit
def print_outside_loop(xs):
    jax.debug.print("xs={xs}", xs=xs)
    total = jax.lax.scan(lambda c, x: (c + x, None), 0.0, xs)[0]
    return jax.lax.cond(total > 0, lambda t: jax.pure_callback(record, jax.ShapeDtypeStruct((), jnp.float32), t),
                        lambda t: t, total)


@jax.jit
def print_in_python_loop(xs):
    for i in range(3):
        jax.debug.print("xs={xs}", xs=xs)
        xs = xs + 1.0
    return xs


# Lowered, not run: nothing is compiled at import.
xs = jnp.ones(10, jnp.float32)
for fn, arg in [(print_in_scan, xs), (callback_in_cond_in_scan, xs), (io_in_while, jnp.float32(0)),
                (debug_callback_nested, xs), (print_outside_loop, xs), (print_in_python_loop, xs)]:
    fn.lower(arg)
