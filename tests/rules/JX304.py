import jax
import jax.numpy as jnp


@jax.jit
def max_copies(v):
    return jnp.max(jnp.broadcast_to(v, (100, 10)), axis=0)  # expect: JX304


@jax.jit
def all_method(v):
    return ~jnp.broadcast_to(v > 0, (100, 10)).all(axis=-2)  # expect: JX304


@jax.jit
def min_expression(v):
    return jnp.min(jnp.broadcast_to(v + 1.0, (4, 25, 10)), axis=(0, 1)) * 3.0  # expect: JX304


# Reported without a fix: no single expression replaces the reduction.


@jax.jit
def product(v):
    return jnp.prod(jnp.broadcast_to(v, (100, 10)), axis=0)  # expect: JX304


@jax.jit
def arg(v):
    return jnp.argmax(jnp.broadcast_to(v, (100, 10)), axis=0)  # expect: JX304


@jax.jit
def keep(v):
    return jnp.max(jnp.broadcast_to(v, (100, 10)), axis=0, keepdims=True)  # expect: JX304


@jax.jit
def stretched(m):
    return jnp.max(jnp.broadcast_to(m[:1], (100, 10)), axis=0)  # expect: JX304


@jax.jit
def partial_axes(v):
    return jnp.max(jnp.broadcast_to(v, (4, 25, 10)), axis=0)  # expect: JX304


# Quiet: sum and mean of copies (they scale), an original axis, all axes, a size-one axis, a
# constant broadcast, broadcasts of fewer than 1000 elements (the min-elements option: the
# reduction costs under a microsecond).


@jax.jit
def sum_copies(v):
    return jnp.sum(jnp.broadcast_to(v, (5, 10)), axis=0) + jnp.mean(jnp.broadcast_to(v, (5, 10)), axis=0)


@jax.jit
def original_axis(v):
    return jnp.max(jnp.broadcast_to(v, (5, 10)), axis=1)


@jax.jit
def all_axes(v):
    return jnp.max(jnp.broadcast_to(v, (5, 10)))


@jax.jit
def size_one(v):
    return jnp.max(v[None], axis=0)


@jax.jit
def constant_broadcast(v):
    return jnp.max(jnp.full((5, 10), 2.0), axis=0) + v


@jax.jit
def few_elements(v):
    return jnp.max(jnp.broadcast_to(v, (99, 10)), axis=0)


def per_dimension(length, dim=2):
    # numpyro's spectral densities: a scalar or per-dimension length, made per-dimension.
    return jnp.prod(jnp.broadcast_to(length, (dim,)))


v = jnp.arange(10.0)
jax.jit(per_dimension, static_argnums=1)(1.5, 2)
for fn in (max_copies, all_method, min_expression, product, arg, keep, partial_axes, sum_copies, original_axis,
           all_axes, size_one, constant_broadcast, few_elements):
    fn(v)
stretched(jnp.ones((4, 10)))
