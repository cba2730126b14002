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


OUTPUTS = (["double", "half"], ["half"])


def pick(v, fields):
    parts = {"double": v * 2.0, "half": v / 2.0}
    return sum(parts[name] for name in fields)


# A loop over configurations (dynamax's tests: two lists of output fields) needs one compile per
# configuration, made in the loop or not, and a configuration passed as an argument raises: quiet.
# jaxlint: args x=f32[3]
def configurations(x):
    for fields in (["double", "half"], ["half"]):
        x = jax.jit(lambda v: pick(v, fields))(x)
    for dtype in (jax.numpy.float32, jax.numpy.float16):
        y = jax.jit(lambda v: v.astype(dtype))(x)
    for shape in ((3,), (1, 3)):
        y = jax.jit(lambda v: v.reshape(shape))(x)
    for name, activation in [("tanh", jax.numpy.tanh), ("relu", jax.nn.relu)]:
        @jax.jit
        def activated(v):
            return activation(v)
        x = activated(x)
    for activation in (jax.numpy.tanh, jax.numpy.sin):
        def applied(v):
            return activation(v)
        x = jax.jit(applied)(x)
    ys = [jax.jit(lambda v: pick(v, fields))(x) for fields in (["double"], ["half"])]
    for fields in OUTPUTS:  # a name bound once to a display, in the module or the function
        x = jax.jit(lambda v: pick(v, fields))(x)
    shapes = [(3,), (1, 3)]
    for shape in shapes:
        y = jax.jit(lambda v: v.reshape(shape))(x)
    # Reported: the items are numbers (values jit traces), the function reads no configuration,
    # or a loop that is not over configurations repeats the compile.
    for k in (1, 2, 3):
        x = jax.jit(lambda v: v * k)(x)  # expect: JX203
    chosen = [["double"]]
    chosen = chosen + [["half"]]  # bound twice: not seen as a display
    for fields in chosen:
        x = jax.jit(lambda v: pick(v, fields))(x)  # expect: JX203
    for fields in (["double"], ["half"]):
        x = jax.jit(lambda v: v - 1.0)(x)  # expect: JX203
    for fields in (["double"], ["half"]):
        for _ in range(2):
            x = jax.jit(lambda v: pick(v, fields))(x)  # expect: JX203
    for _ in range(2):
        for dtype in (jax.numpy.float32, jax.numpy.float16):
            y = jax.jit(lambda v: v.astype(dtype))(x)  # expect: JX203
    return x + y.astype(x.dtype) + sum(ys)
