"""JX709's triggers and near misses on a TPU v5e: tests/test_jx709.py checks them with
`jaxlint check --target tpu-v5e` (and that the CPU target is quiet). The marks follow
tests/rules/README.md."""
import jax
import jax.numpy as jnp
import jax.scipy.linalg as jsl
from jax import lax

X = jax.ShapeDtypeStruct((512, 64), jnp.float32)
Y = jax.ShapeDtypeStruct((512,), jnp.float32)
A = jax.ShapeDtypeStruct((64, 64), jnp.float32)


def normal_equations(x, y):
    gram = x.T @ x  # expect: JX709
    # X.T @ y is a matrix-vector product: XLA computes it as a float32 multiply and sum, quiet.
    return jnp.linalg.solve(gram, x.T @ y)


jax.jit(normal_equations).lower(X, Y)


def ridge(x, y):
    kernel = jnp.dot(x, x.T) + jnp.eye(x.shape[0])  # expect: JX709
    return jsl.cho_solve(jsl.cho_factor(kernel), y)


jax.jit(ridge).lower(X, Y)


def covariance_eigh(x):
    centered = x - x.mean(axis=0)
    cov = jnp.einsum("ni,nj->ij", centered, centered) / (x.shape[0] - 1)  # expect: JX709
    return jnp.linalg.eigh(cov)


jax.jit(covariance_eigh).lower(X)


def gram(x):
    return x.T @ x  # expect: JX709


def inverse_through_a_jitted_helper(x):
    g = jax.jit(gram)(x)
    return jnp.linalg.inv(0.5 * (g + g.T))


jax.jit(inverse_through_a_jitted_helper).lower(X)


def accumulated_in_a_loop(x):
    def body(i, total):
        block = lax.dynamic_slice_in_dim(x, i * 64, 64)
        return total + lax.dot_general(block, block, (((0,), (0,)), ((), ())))  # expect: JX709
    total = lax.fori_loop(0, 8, body, jnp.zeros((64, 64), x.dtype))
    return jnp.linalg.pinv(total)


jax.jit(accumulated_in_a_loop).lower(X)


def ridge_loss(x, y):
    # Two lines: JAX 0.4.35's HLO metadata has no columns, and would confirm x.T @ y with x.T @ x.
    w = jnp.linalg.solve(x.T @ x + 0.1 * jnp.eye(64),  # expect: JX709
                         x.T @ y)
    return jnp.sum((x @ w - y) ** 2)  # x @ w: a matrix-vector product, and no solve after it


jax.jit(jax.grad(ridge_loss)).lower(X, Y)


def batched_cholesky(xs):
    return jax.vmap(lambda x: jnp.linalg.cholesky(x.T @ x))(xs)  # expect: JX709


jax.jit(batched_cholesky).lower(jax.ShapeDtypeStruct((8, 512, 64), jnp.float32))


def carried_through_a_scan(x):
    def body(c, _):
        return c @ c, None  # expect: JX709
    m, _ = lax.scan(body, x.T @ x, None, length=3)  # expect: JX709
    return jnp.linalg.eigh(m)[0]


jax.jit(carried_through_a_scan).lower(X)


# Near misses.

def highest(x, y):
    g = jnp.matmul(x.T, x, precision=jax.lax.Precision.HIGHEST)
    return jnp.linalg.solve(g, x.T @ y)


jax.jit(highest).lower(X, Y)


def float32_block(x, y):
    with jax.default_matmul_precision("float32"):
        g = x.T @ x
    return jnp.linalg.solve(g, x.T @ y)


jax.jit(float32_block).lower(X, Y)


def high_is_a_choice(x, y):
    g = jnp.dot(x.T, x, precision="high")  # bfloat16_3x, asked for
    return jnp.linalg.solve(g, x.T @ y)


jax.jit(high_is_a_choice).lower(X, Y)


def bfloat16_inputs(x, y):
    xb = x.astype(jnp.bfloat16)
    g = (xb.T @ xb).astype(jnp.float32)
    return jnp.linalg.solve(g, x.T @ y)


jax.jit(bfloat16_inputs).lower(X, Y)


def rounded_to_bfloat16(x, y):
    g = (x.T @ x).astype(jnp.bfloat16).astype(jnp.float32)  # the user rounds it anyway
    return jnp.linalg.solve(g, x.T @ y)


jax.jit(rounded_to_bfloat16).lower(X, Y)


def layer(x, w):
    return jnp.tanh(x @ w).sum()  # an activation and a loss: no solve


jax.jit(layer).lower(X, A)


def through_an_activation(x, y):
    g = jnp.tanh(x.T @ x / 512.0) + 2.0 * jnp.eye(64)
    return jnp.linalg.solve(g, x.T @ y)


jax.jit(through_an_activation).lower(X, Y)


def matrix_vector_only(a, x, y):
    return jnp.linalg.solve(a, x.T @ y)  # XLA multiplies and sums in float32


jax.jit(matrix_vector_only).lower(A, X, Y)
