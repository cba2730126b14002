import jax
import jax.numpy as jnp
from jax import lax


def heavy(x):
    return jnp.tanh(x @ x)


def light(x):
    return x + 1.0


# Reported once at its place, with the cost of the first function that vmaps it (helper_cond);
# the others (the quiet ones below) do not batch its predicate.
def step(p, x):
    return lax.cond(p > 0, heavy, light, x)  # expect: JX102


# heavy on f32[4, 4]: a 4x4x4 dot (128 FLOPs) and a tanh (16); light: an add (16). A batch of 8.


@jax.jit
def helper_cond(ps, xs):
    return jax.vmap(step)(ps, xs)


@jax.jit
def inline_switch(idx, xs):
    def one(i, x):
        return lax.switch(  # expect: JX102
            i,
            [heavy, light, lambda x: x * 2.0],
            x,
        )
    return jax.vmap(one)(idx, xs)


def pytree_cond(ps, xs):
    def one(p, x):
        return lax.cond(p > 0, lambda x: (heavy(x), x.sum()), lambda x: (light(x), x.max()), x)  # expect: JX102
    return jax.vmap(one)(ps, xs)


# One call site traced twice: one finding, with both traces' cost.
@jax.jit
def twice(ps, xs):
    for _ in range(2):
        xs = jax.vmap(lambda p, x: lax.cond(p > 0, heavy, light, x))(ps, xs)  # expect: JX102
    return xs


@jax.jit
def in_scan(ps, xs):
    def body(c, _):
        return jax.vmap(lambda p, x: lax.cond(p > 0, heavy, light, x))(ps, c), None  # expect: JX102
    return lax.scan(body, xs, None, length=5)[0]


# Quiet: an unbatched predicate (in_axes None, a closure), the user's own where, no vmap, lax.map.


@jax.jit
def unbatched_predicate(p, xs):
    return jax.vmap(step, in_axes=(None, 0))(p, xs)


@jax.jit
def predicate_from_closure(p, xs):
    return jax.vmap(lambda x: lax.cond(p.sum() > 0, heavy, light, x))(xs)


@jax.jit
def user_where(ps, xs):
    return jax.vmap(lambda p, x: jnp.where(p > 0, heavy(x), light(x)))(ps, xs)


@jax.jit
def where_inside_cond(p, xs):
    return jax.vmap(lambda x: lax.cond(p > 0, lambda x: jnp.where(x > 0, x, -x), light, x))(xs)


@jax.jit
def cond_without_vmap(p, x):
    return lax.cond(p > 0, heavy, light, x)


@jax.jit
def lax_map_cond(ps, xs):
    return lax.map(lambda a: step(*a), (ps, xs))


ps, xs, ns = jnp.linspace(-1.0, 1.0, 8), jnp.ones((8, 4, 4)), jnp.arange(8)
step(1.0, xs[0])
helper_cond(ps, xs), inline_switch(ns % 3, xs), pytree_cond(ps, xs), twice(ps, xs), in_scan(ps, xs)
unbatched_predicate(1.0, xs), predicate_from_closure(ps, xs), user_where(ps, xs), where_inside_cond(1.0, xs)
cond_without_vmap(1.0, xs[0]), lax_map_cond(ps, xs)
