from functools import partial

import jax
import jax.numpy as jnp
import numpy as np


# jaxlint: args x=f32[3], shape=(3,)
@partial(jax.jit, static_argnums=(1,))
def resize(x, shape):
    return jnp.broadcast_to(x.sum(), shape)


def scale(x, factor):
    return x * factor


# jaxlint: args x=f32[3], factor=2.0
scaled = jax.jit(scale, static_argnames="factor")


# The bad static arguments sit in a function that is neither run at import nor traced (tracing it
# would fail with a trace error instead). The rule reads the source once per traced target
# (resize, scaled): each line is reported once.
def bad_calls(x, items):
    a = resize(x, [2, 3])  # expect: JX204
    b = resize(x, shape=[2, 3])  # expect: JX204
    c = scaled(x, factor=np.array(2.0))  # expect: JX204
    d = scaled(x, {"a": 1})  # expect: JX204
    e = resize.lower(x, ([2], 3))  # expect: JX204
    f = resize(x, {2, 3})  # expect: JX204
    g = resize(x, [n for n in items])  # expect: JX204
    h = resize(x, jnp.asarray([2]))  # expect: JX204
    # Quiet: hashable static values, a list where the argument is traced.
    ok = resize(x, (2, 3))
    ok2 = resize([1.0, 2.0], (2,))
    ok3 = scaled(x, 2.0)
    ok4 = scaled([x], factor=(1, 2))
    ok5 = resize(x, tuple([2, 3]))
    return a, b, c, d, e, f, g, h, ok, ok2, ok3, ok4, ok5


# Quiet: the name is a parameter or a local function, not the jitted one.
def shadowed(resize, x):
    return resize(x, [2, 3])


def local_function(x):
    def scaled(x, factor):
        return x
    return scaled(x, [1])
