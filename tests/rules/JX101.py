import jax
import jax.numpy as jnp
from jax import vmap as V


def pair(x, y):
    return x + 1, x * y


def triple(x, y):
    return x + 1, x * y, jnp.sin(x)


def as_dict(x, y):
    return {"a": x * 2, "b": x + y}


def from_dict(d, y):
    return d["s"] * 3, d["s"] * y


@jax.jit
def jit_first(x, y):
    a, b = jax.vmap(pair, in_axes=(None, 0))(x, y)  # expect: JX101
    return a[0], b


def eager_first(x, y):
    a, b = jax.vmap(pair, in_axes=(None, 0))(x, y)  # expect: JX101
    return a[0] + 1.0, b


@jax.jit
def last_index(x, y):
    a, b = jax.vmap(pair, in_axes=(None, 0))(x, y)  # expect: JX101
    return a[-1], b


@jax.jit
def third_index(x, y):
    c, d = jax.vmap(pair, in_axes=(None, 0))(x, y)  # expect: JX101
    return c[3], d


@jax.jit
def aliased(x, y):
    a, b = V(pair, in_axes=(None, 0))(x, y)  # expect: JX101
    return a[0], b


@jax.jit
def tree_in(x, y):
    a, b = jax.vmap(from_dict, in_axes=({"s": None}, 0))({"s": x}, y)  # expect: JX101
    return a[0], b


@jax.jit
def dict_out(x, y):
    out = jax.vmap(as_dict, in_axes=(None, 0))(x, y)  # expect: JX101
    return out["a"][0], out["b"]


@jax.jit
def three(x, y):
    a, b, c = jax.vmap(triple, in_axes=(None, 0))(x, y)  # expect: JX101
    return a[0], b, c[1]


@jax.jit
def existing_zero(x, y):
    a, b = jax.vmap(pair, in_axes=(None, 0), out_axes=0)(x, y)  # expect: JX101
    return a[0], b


@jax.jit
def existing_tuple(x, y):
    a, b = jax.vmap(pair, in_axes=(None, 0), out_axes=(0, 0))(x, y)  # expect: JX101
    return a[0], b


@jax.jit
def nested_index(x, y):
    out = jax.vmap(pair, in_axes=(None, 0))(x, y)  # expect: JX101
    return out[0][0] * 2, out[1]


@jax.jit
def accented(x, y):
    _ = "é€"; a, b = jax.vmap(pair, in_axes=(None, 0))(x, y)  # ü  # expect: JX101
    return a[0], b


x = jnp.float32(1)
y = jnp.arange(10.0)
for fn in (jit_first, eager_first, last_index, third_index, aliased, tree_in, dict_out, three,
           existing_zero, existing_tuple, nested_index, accented):
    fn(x, y)


# Reported without a fix: the index or the vmap call is not one the fix can rewrite.


def variable_index(x, y, i):
    a, b = jax.vmap(pair, in_axes=(None, 0))(x, y)  # expect: JX101
    return a[i], b


def rebound_in_branch(x, y, flag):
    a, b = jax.vmap(pair, in_axes=(None, 0))(x, y)  # expect: JX101
    if flag:
        a = b
    return a[0], b


def applied_later(x, y):
    mapped = jax.vmap(pair, in_axes=(None, 0))
    a, b = mapped(x, y)  # expect: JX101
    return a[0], b


def in_closure(x, y):
    a, b = jax.vmap(pair, in_axes=(None, 0))(x, y)  # expect: JX101
    first = lambda: a[0]
    return first(), b


def in_loop(x, y):
    total = 0.0
    for _ in range(2):
        a, b = jax.vmap(pair, in_axes=(None, 0))(x, y)  # expect: JX101
        total = total + a[0]
    return total, b


def batch_axis_one(x, y):
    a, b = jax.vmap(pair, in_axes=(None, 0), out_axes=1)(x, y)  # expect: JX101
    return a[:, 0], b


x3 = jnp.ones(3)
y3 = jnp.ones((10, 3))
variable_index(x3, y3, jnp.int32(1))
rebound_in_branch(x3, y3, False)
for fn in (applied_later, in_closure, in_loop, batch_axis_one):
    fn(x3, y3)


# The broadcast is made inside a jit and indexed outside it: it is materialized.


def mapped(x, y):
    return jax.vmap(pair, in_axes=(None, 0))(x, y)  # expect: JX101


def outer(x, y):
    a, b = jax.jit(mapped)(x, y)
    return a[0], jax.vmap(jnp.sin)(b)


outer(jnp.float32(1), jnp.arange(10.0))


# JAX turns x[-1] into a slice at 5 (a batch of 6): the message says [-1], as written.


def blackbox_function(x, y):
    x = x + 1
    return x, x * y


# jaxlint: args x=f32[3], y=f32[6,3]
def last_row(x, y):
    x, y = jax.vmap(blackbox_function, in_axes=(None, 0))(x, y)  # expect: JX101
    return x[-1], y


# jaxlint: args x=f32[3], y=f32[6,3]
def fifth_row(x, y):
    x, y = jax.vmap(blackbox_function, in_axes=(None, 0))(x, y)  # expect: JX101
    return x[5], y


# Quiet: an output that depends on a mapped input, declared unbatched already, the batched output
# indexed, the output used whole.


@jax.jit
def depends_on_mapped(x, y):
    a, b = jax.vmap(pair, in_axes=(0, 0))(y, y)
    return a[0], b


@jax.jit
def already_none(x, y):
    a, b = jax.vmap(pair, in_axes=(None, 0), out_axes=(None, 0))(x, y)
    return a, b[0]


@jax.jit
def batched_indexed(x, y):
    a, b = jax.vmap(pair, in_axes=(None, 0))(x, y)
    return b[0]


@jax.jit
def returned_whole(x, y):
    a, b = jax.vmap(pair, in_axes=(None, 0))(x, y)
    return a, b


def arithmetic_whole(x, y):
    a, b = jax.vmap(pair, in_axes=(None, 0))(x, y)
    return a * b


@jax.jit
def indexed_and_whole(x, y):
    a, b = jax.vmap(pair, in_axes=(None, 0))(x, y)
    return a[0] + a.sum(), b


x = jnp.float32(1)
y = jnp.arange(10.0)
for fn in (depends_on_mapped, already_none, batched_indexed, returned_whole, arithmetic_whole,
           indexed_and_whole):
    fn(x, y)
