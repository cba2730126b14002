import jax
import jax.numpy as jnp


def loss(a, b):
    return jnp.linalg.norm(a - b)  # expect: JX704


loss_grad = jax.jit(jax.grad(loss))


@jax.jit
def grad_inside(a, b):
    return jax.grad(lambda v: jnp.sqrt(jnp.sum((v - b) ** 2)))(a)  # expect: JX704


# Quiet: a norm nothing differentiates, a guarded square root, a norm that is only compared.


def undifferentiated_norm(a, b):
    return jnp.linalg.norm(a - b) + jnp.sqrt(jnp.sum((a - b) ** 2))


undifferentiated = jax.jit(undifferentiated_norm)


def guarded(v):
    s = jnp.sum(v ** 2)
    return jnp.where(s > 0, jnp.sqrt(jnp.where(s > 0, s, 1.0)), 0.0) + jnp.sqrt(jnp.sum(v ** 2) + 1e-12)


guarded_grad = jax.jit(jax.grad(guarded))


def only_compared(a, b):
    return jnp.where(jnp.linalg.norm(a - b) > 1e-5, jnp.sum(a * b), 0.0)


only_compared_grad = jax.jit(jax.grad(only_compared))


def safe_norm(v, floor):
    # optax's safe_norm: the vector is replaced by ones wherever its own norm is at most the floor.
    norm = jnp.linalg.norm(v, keepdims=True)
    v = jnp.where(norm <= floor, jnp.ones_like(v), v)
    return jnp.where(jnp.squeeze(norm) <= floor, floor, jnp.linalg.norm(v))


safe_norm_grad = jax.jit(jax.grad(safe_norm))
safe_norm_zero_floor = jax.jit(jax.grad(lambda v: safe_norm(v, 0.0)))


# The norms below are spelled out: JAX before 0.7 gives every call of the jitted
# jnp.linalg.norm with one signature the traceback of its first trace (tests/rules/README.md).


def replaced_only_when_large(v):
    # Not a guard: a zero vector keeps v (its norm is not above 100).
    v = jnp.where(jnp.sqrt(jnp.sum(v ** 2)) > 100.0, jnp.ones_like(v), v)
    return jnp.sqrt(jnp.sum(v ** 2))  # expect: JX704


def replaced_by_another_norm(v, w):
    # Not a guard: the test is on w, so v may still be zero.
    v = jnp.where(jnp.sqrt(jnp.sum(w ** 2)) <= 0.0, jnp.ones_like(v), v)
    return jnp.sqrt(jnp.sum(v ** 2))  # expect: JX704


large_grad = jax.jit(jax.grad(replaced_only_when_large))
another_grad = jax.jit(jax.grad(replaced_by_another_norm))


x = jnp.linspace(-3.0, 3.0, 12).reshape(3, 4)
loss_grad(x[0], x[1])
grad_inside(x[0], x[1])
undifferentiated(x[0], x[1])
guarded_grad(x[0])
only_compared_grad(x[0], x[1])
safe_norm_grad(x[0], 1e-6)
safe_norm_zero_floor(x[0])
large_grad(x[0])
another_grad(x[0], x[1])
