import functools
from functools import partial

import jax
from jax import jit as J


def scale(x, factor):
    return x * factor


def add_one(v):
    return v + 1.0


# jaxlint: args x=f32[3]
def train(x):
    for i in range(3):
        step = jax.jit(lambda v: v * 2.0)  # expect: JX203
        x = step(x)
    for i in range(3):
        x = J(lambda v: v + i)(x)  # expect: JX203
    for i in range(3):
        x = jax.jit(functools.partial(scale, factor=2.0))(x)  # expect: JX203
    for i in range(3):
        def inner(v):
            return v - 1.0
        x = jax.jit(inner)(x)  # expect: JX203
    ys = [jax.jit(lambda v: v * k)(x) for k in range(3)]  # expect: JX203
    n = 0
    while n < 3:
        x = jax.jit(lambda v: v / 2.0)(x)  # expect: JX203
        n += 1
    # A module-level function jitted in a loop: jit's cache holds it, but the wrapper is rebuilt
    # each step (wrappers.py has that half). Quiet: jitted once before the loop, in a for-else, in
    # the iterable, a plain lambda.
    for i in range(3):
        x = jax.jit(add_one)(x)  # expect: JX203
    f = jax.jit(lambda v: v * 3.0)
    for i in range(3):
        x = f(x)
    for i in range(2):
        pass
    else:
        x = jax.jit(lambda v: v)(x)
    for v in [jax.jit(lambda v: v + 1.0)(x)]:
        x = v
    for i in range(2):
        g = lambda v: v * 4.0
    for i in range(2):
        @partial(jax.jit, static_argnums=())  # expect: JX203
        def doubled(v):
            return v * 2.0 + i
        x = doubled(x)
    return x + sum(ys) + g(x)


# Quiet: inside a traced function, jit in a loop is inlined into one trace.
# jaxlint: args x=f32[3]
@jax.jit
def traced_loop(x):
    for i in range(3):
        x = jax.jit(lambda v: v * 2.0)(x)

        @jax.jit
        def halved(v):
            return v / 2.0
        x = halved(x)
    return x
