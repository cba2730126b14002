import jax
import jax.numpy as jnp
from jax import jit


def update(x, scale):
    return x * scale


def shift(x):
    return x + 1.0


# jaxlint: args x=f32[3]
@jax.jit
def double(x):
    return x * 2.0


def apply_shift(x):  # called once per step below: its jit is not in a loop here
    return jax.jit(shift)(x)


# jaxlint: args x=f32[3]
def train(x):
    for _ in range(3):
        x = jit(update)(x, 0.5)  # expect: JX203
    n = 0
    while n < 2:
        step = jax.jit(shift)  # expect: JX203
        x = step(x)
        n += 1
    for _ in range(2):
        x = jax.jit(update, static_argnums=1)(x, 2.0)  # expect: JX203
    ys = [jax.jit(shift)(x) * k for k in range(3)]  # expect: JX203
    for _ in range(2):
        x = jax.vmap(double)(x[None])[0]  # expect: JX203
    for _ in range(2):
        x = jax.jit(jax.grad(lambda v: jnp.sum(v * v)))(x)  # expect: JX203
    for scale in (0.5, 2.0):  # f made per configuration, then many steps: the inner loop rebuilds it
        scaled = jax.tree_util.Partial(update, scale=scale)
        for _ in range(2):
            x = jax.jit(scaled)(x)  # expect: JX203
    # Quiet: made once before the loop; once outside any loop; the function changes with the
    # iteration (compile-time configurations); a static argument chosen by the loop; vmap of a
    # plain function (nothing cached to miss); a wrapper in a function the loop calls (not seen);
    # the wrapper lowered, not called.
    stepped = jax.jit(shift)
    for _ in range(2):
        x = stepped(x)
    x = jax.jit(shift)(x)
    for f in (shift, double):
        x = jax.jit(f)(x)
    for config in ("a", "b"):
        g = shift if config == "a" else double
        x = jax.jit(g)(x)
    for name in ("scale",):
        x = jax.jit(update, static_argnames=name)(x, 0.5)
    for _ in range(2):
        x = jax.vmap(shift)(x[None])[0]
    for _ in range(2):
        x = apply_shift(x)
    for n in (2, 3):  # ahead-of-time lowering per shape: no call of the wrapper to speed up
        jax.jit(shift).lower(jnp.ones(n))
    return x + sum(ys)


# Quiet: inside a jitted function the loop is traced once; its jit and vmap are inlined.
# jaxlint: args x=f32[3]
@jax.jit
def traced_loop(x):
    for _ in range(2):
        x = jax.jit(shift)(x)
        x = jax.vmap(double)(x[None])[0]
    return x
