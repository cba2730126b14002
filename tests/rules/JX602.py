from functools import partial

import jax
import jax.numpy as jnp

LOG = []
CACHE = {}
state = None


class Model:
    def __init__(self):
        self.last = None

    @partial(jax.jit, static_argnums=0)
    def step(self, x):
        y = x * 2
        self.last = y  # expect: JX602
        return y

    @partial(jax.jit, static_argnums=0)
    def quiet_step(self, x):
        self.calls = 1
        return x * 2


@jax.jit
def prints(x, y):
    print(x)  # expect: JX602
    z = jnp.sin(y) + 1
    print("z is", z)  # expect: JX602
    print(f"mean {x.mean()}")  # expect: JX602
    for row in x:
        print(row)  # expect: JX602
    return z


@jax.jit
def stores(x):
    global state
    y = jnp.cos(x)
    LOG.append(y)  # expect: JX602
    state = y  # expect: JX602
    CACHE["x"] = x  # expect: JX602
    return y


def plain(x):
    print(x)  # expect: JX602
    return x


jitted_plain = jax.jit(plain)


def bound_target(x):
    LOG.append(x + 1)  # expect: JX602
    return x


bound = jax.jit(bound_target)


# Quiet: static values printed or stored, local containers, a traced pytree `self`, not jitted.


@partial(jax.jit, static_argnums=1)
def quiet_prints(x, n):
    print(x.shape, x.dtype, len(x), jnp.shape(x))
    print(f"shape {x.shape[0]} n={n}")
    print(n)
    print("tracing")
    jax.debug.print("x = {}", x)
    for i, v in enumerate(x):
        print(i)
    x = 3
    print(x)
    return n


@jax.jit
def local_lists(xs):
    out = []
    for x in xs:
        out.append(x * 2)
    seen = {}
    seen["a"] = xs
    return jnp.stack(out), seen["a"]


@jax.jit
def quiet_static_global(x):
    LOG.append(x.shape)
    CACHE["n"] = x.ndim
    return x


W = jnp.ones(3)


class Box:
    pass


@jax.tree_util.register_pytree_node_class
class Params:
    def __init__(self, w):
        self.w = w

    def tree_flatten(self):
        return (self.w,), None

    @classmethod
    def tree_unflatten(cls, aux, children):
        return cls(*children)

    @jax.jit
    def apply(self, x):
        self.w = self.w * x  # a traced pytree self: rebuilt for the trace, nothing leaks
        return self.w


@jax.jit
def quiet_locals(x):
    box = Box()
    box.v = x
    print(W)
    def print_shape(v):
        print(v)
    print_shape(x.shape)
    return box.v


def not_jitted(x):
    print(x)
    LOG.append(x)
    return jax.vmap(jnp.sin)(x)


# Lowered, not run: nothing is compiled at import.
x = jnp.ones(5)
xs = jnp.ones((4, 3))
Model.step.lower(Model(), x)
Model.quiet_step.lower(Model(), x)
prints.lower(x, x)
stores.lower(x)
jitted_plain.lower(x)
bound.lower(x)
quiet_prints.lower(x, 2)
local_lists.lower(xs)
quiet_static_global.lower(x)
not_jitted(x)
Params.apply.lower(Params(x), x)
quiet_locals.lower(x)
