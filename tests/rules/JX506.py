import jax
import jax.numpy as jnp
import jax.numpy as np
from jax import lax


@jax.jit
def mse(pred, y):
    return jnp.mean((pred - y) ** 2)  # expect: JX506


@jax.jit
def mse_swapped(pred, y):
    return jnp.sum(jnp.abs(y - pred))  # expect: JX506 (either order)


@jax.jit
def aliased(pred, y):
    return np.max(np.square(pred * y))  # expect: JX506 (jax.numpy imported as np)


def residual(pred, y):
    return pred - y  # expect: JX506 (in a helper)


@jax.jit
def helper_loss(pred, y):
    return jnp.mean(residual(pred, y) ** 2)


@jax.jit
def batched(pred, y):
    return jax.vmap(lambda p: jnp.mean((p - y) ** 2))(pred)  # expect: JX506 (under vmap)


@jax.jit
def leading_batch(pred, y):
    return jnp.mean((pred - y) ** 2)  # expect: JX506 (pred f32[2,4,1])


@jax.jit
def scanned(preds, y):
    def body(total, p):
        return total + jnp.sum((p - y) ** 2), None  # expect: JX506 (in a scan body)

    total, _ = lax.scan(body, 0.0, preds)
    return total


# Quiet: an explicit outer product, jnp.outer and subtract.outer, a bias add, n == 1, keepdims,
# a pairwise table that is kept (not reduced over both axes), matching shapes.


@jax.jit
def explicit(a, b):
    return jnp.sum((a[:, None] - b[None, :]) ** 2)


@jax.jit
def explicit_column(a, b):
    return jnp.sum((a[:, None] - b) ** 2)


@jax.jit
def outers(a, b):
    return jnp.sum(jnp.outer(a, b)) + jnp.sum(jnp.subtract.outer(a, b))


@jax.jit
def bias_add(h, bias):
    return jnp.sum(h + bias)


@jax.jit
def single(pred, y):
    return jnp.mean((pred - y) ** 2)


@jax.jit
def keepdims_distances(x):
    sq = jnp.sum(x ** 2, axis=1, keepdims=True)
    return jnp.sum(sq + jnp.sum(x ** 2, axis=1) - 2 * x @ x.T)


@jax.jit
def pairwise_kept(pred, y):
    return jnp.sum((pred - y) ** 2, axis=0)


@jax.jit
def matching(pred, y):
    return jnp.mean((pred[:, 0] - y) ** 2)


column = jnp.linspace(0.0, 1.0, 4).reshape(4, 1)
row = jnp.linspace(0.0, 1.0, 4)
mse(column, row)
mse_swapped(column, row)
aliased(column, row)
helper_loss(column, row)
batched(jnp.ones((3, 4, 1)), row)
leading_batch(jnp.ones((2, 4, 1)), row)
scanned(jnp.ones((3, 4, 1)), row)
explicit(row, row)
explicit_column(row, row)
outers(row, row)
bias_add(jnp.ones((4, 3)), jnp.ones(3))
single(jnp.ones((1, 1)), jnp.ones(1))
keepdims_distances(jnp.ones((4, 3)))
pairwise_kept(column, row)
matching(column, row)
