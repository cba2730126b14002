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


x = jnp.linspace(-3.0, 3.0, 12).reshape(3, 4)
loss_grad(x[0], x[1])
grad_inside(x[0], x[1])
undifferentiated(x[0], x[1])
guarded_grad(x[0])
only_compared_grad(x[0], x[1])
