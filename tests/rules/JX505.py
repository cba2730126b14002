import jax
import jax.numpy as jnp
import jax.numpy as np
from jax import lax


def rounded_loss(w, x):
    return jnp.sum(jnp.round(x @ w) ** 2)  # expect: JX505


@jax.jit
def rounded_step(w, x):
    return w - 0.1 * jax.grad(rounded_loss)(w, x)


def argmax_loss(w, x):
    return jnp.argmax(x @ w, axis=1).astype(jnp.float32).sum()  # expect: JX505


argmax_grad = jax.jit(jax.grad(argmax_loss))


def aliased_loss(w, x):
    return np.sum(np.sign(w) * x)  # expect: JX505 (jax.numpy imported as np)


aliased_value_and_grad = jax.jit(jax.value_and_grad(aliased_loss))


def quantize(v):
    return jnp.floor(v * 4.0) / 4.0  # expect: JX505 (a helper cuts the path)


def helper_loss(w, x):
    return jnp.sum(quantize(w) * x)


helper_grad = jax.jit(jax.grad(helper_loss))


def threshold_loss(scale, x):
    return jnp.sum((x > scale).astype(jnp.float32) * x)  # expect: JX505 (a comparison)


threshold_grad = jax.jit(jax.grad(threshold_loss))


def per_example(w, x):
    return jnp.sum(jnp.ceil(w * x))  # expect: JX505 (under vmap)


@jax.jit
def batched_grad(w, xs):
    return jax.vmap(jax.grad(per_example), in_axes=(None, 0))(w, xs)


def scanned_loss(w, xs):
    def body(carry, x):
        return carry + jnp.round(w * x), None  # expect: JX505 (in a scan body)

    total, _ = lax.scan(body, 0.0, xs)
    return total


scanned_grad = jax.jit(jax.grad(scanned_loss))


# Quiet: stop_gradient on purpose, a straight-through estimator, an ordinary path beside the
# cut one, a rounded input that is not differentiated, an integer input, an unused parameter.


def stopped_loss(w, x):
    return jnp.sum(lax.stop_gradient(w) * x)


stopped_grad = jax.jit(jax.grad(stopped_loss))


def straight_through_loss(w, x):
    q = w + lax.stop_gradient(jnp.round(w) - w)
    return jnp.sum((q * x) ** 2)


straight_through_grad = jax.jit(jax.grad(straight_through_loss))


@jax.custom_jvp
def round_ste(v):
    return jnp.round(v)  # its gradient is the custom rule's, not round's


@round_ste.defjvp
def _round_ste_jvp(primals, tangents):
    return round_ste(primals[0]), tangents[0]


def custom_ste_loss(w, b, x):
    return jnp.sum(round_ste(w) * x)  # b is unused: its zero gradient is of w's shape


custom_ste_grad = jax.jit(jax.grad(custom_ste_loss, argnums=(0, 1)))


def both_paths_loss(w, x):
    return jnp.sum(x @ w + jnp.round(x @ w))


both_paths_grad = jax.jit(jax.grad(both_paths_loss))


def rounded_data_loss(w, x):
    return jnp.sum((jnp.round(x) @ w) ** 2)  # x is rounded, but only w is differentiated


rounded_data_grad = jax.jit(jax.grad(rounded_data_loss))


def integer_input_loss(w, n):
    return jnp.sum(w * n)


integer_input_grad = jax.jit(jax.grad(integer_input_loss, argnums=(0, 1), allow_int=True))


def unused_loss(w, x):
    return jnp.sum(x ** 2)  # w is unused: a zero gradient, but not this rule's


unused_grad = jax.jit(jax.grad(unused_loss))


def undifferentiated(w, x):
    return jnp.sum(jnp.round(x @ w))  # never differentiated


undifferentiated_jit = jax.jit(undifferentiated)


w = jnp.linspace(-1.0, 1.0, 6).reshape(3, 2)
x = jnp.linspace(0.0, 2.0, 12).reshape(4, 3)
v = jnp.linspace(-1.0, 1.0, 3)
rounded_step(w, x)
argmax_grad(w, x)
aliased_value_and_grad(v, v)
helper_grad(v, v)
threshold_grad(v, v)
batched_grad(v, x)
scanned_grad(jnp.float32(0.5), v)
stopped_grad(v, v)
straight_through_grad(v, v)
custom_ste_grad(v, v, v)
both_paths_grad(w, x)
rounded_data_grad(w, x)
integer_input_grad(v, jnp.arange(3))
unused_grad(v, v)
undifferentiated_jit(w, x)
