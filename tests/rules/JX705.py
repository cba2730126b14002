import jax
import jax.numpy as jnp


@jax.jit
def solve_by_inverse(m, b):
    return jnp.linalg.inv(m) @ b  # expect: JX705


@jax.jit
def inverse_elsewhere(m, b):
    return b @ jnp.linalg.inv(m) + jnp.dot(jnp.linalg.inv(m), b)  # expect: JX705, JX705


# Quiet: the inverse is also returned, a solve, an inverse applied to many vectors.


@jax.jit
def inverse_kept(m, b):
    inv = jnp.linalg.inv(m)
    return inv @ b, inv


@jax.jit
def solved(m, b):
    return jnp.linalg.solve(m, b)


@jax.jit
def inverse_for_many_vectors(m, points):
    return jnp.linalg.inv(m) @ points + jax.vmap(lambda p: jnp.linalg.inv(m) @ p)(points.T).T


m = jnp.eye(4) + 0.1
b = jnp.linspace(-3.0, 3.0, 4)
solve_by_inverse(m, b)
inverse_elsewhere(m, b)
inverse_kept(m, b)
solved(m, b)
inverse_for_many_vectors(m, jnp.ones((4, 6)))
