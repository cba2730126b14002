import jax
import jax.numpy as jnp


def blackbox_function(x, y):  # given black box, cannot be split
    x = x + 1  # guaranteed not to depend on y
    y = x * y
    return x, y


@jax.jit
def my_mapped_function(x, y):
    x, y = jax.vmap(blackbox_function, in_axes=(None, 0))(x, y)
    return x[0], y


x = 1
y = jnp.arange(10)
print(my_mapped_function.lower(x, y).compile().as_text())
