import functools

import jax
import jax.numpy as jnp


@jax.jit
def step(state, batch):  # expect: JX302
    return state * 0.9 + batch.sum(), batch.sum()


@functools.partial(jax.jit, static_argnums=(2,))
def update(params, opt, n):  # expect: JX302
    return {k: v - 1.0 for k, v in params.items()}, opt + n


@functools.partial(jax.jit, donate_argnums=(1,))
def half_donated(a, b):  # expect: JX302
    return a + 1.0, b + 1.0


def _advance(pos, dt):
    return pos + dt


advance = jax.jit(_advance)  # expect: JX302


@jax.jit
def kw_step(state, batch):  # expect: JX302
    return state + batch.mean()


# Quiet: donated (by position, by name), an output that does not repeat the input, too small, the
# result not bound to the argument's name, an input passed through, not jitted, inlined in a jit.


@functools.partial(jax.jit, donate_argnums=0)
def donated(state):
    return state + 1.0


@functools.partial(jax.jit, donate_argnames=("state",))
def donated_by_name(state):
    return state + 1.0


@jax.jit
def reduced(state):
    return state.sum(axis=0)  # the output does not repeat the input


@jax.jit
def small_state(state):
    return state + 1.0


@jax.jit
def not_rebound(state):
    return state + 1.0


@jax.jit
def passed_through(state, x):
    return state, x + 1.0  # jit forwards an unchanged input: no second buffer


def not_jitted(state):
    return jax.lax.fori_loop(0, 2, lambda i, s: s + 1.0, state)


@jax.jit
def inner(state):
    return state + 1.0


@jax.jit
def outer(state):
    for _ in range(2):
        state = inner(state)  # inlined into outer: donating inner's argument does nothing
    return state.sum()


state = jnp.zeros((1024, 512), jnp.float32)  # 2 MiB
for batch in (jnp.ones((3,)), jnp.ones((3,))):
    state, loss = step(state, batch)

params = {"w": jnp.zeros((512, 512)), "v": jnp.zeros((512, 512))}  # 1 MiB each
opt = jnp.zeros((1024, 512))
params, opt = update(params, opt, 2)

a, b = jnp.zeros((1024, 512)), jnp.zeros((1024, 512))
a, b = half_donated(a, b)

pos = jnp.zeros((1024, 512))
pos = advance(pos, 0.1)

big_batch = jnp.ones((512, 1024))
state = kw_step(state=state, batch=big_batch)

state = donated(state)
state = donated_by_name(state)
total = reduced(state)
tiny = jnp.zeros((8, 8))
tiny = small_state(tiny)
new_state = not_rebound(state)
state, y = passed_through(state, jnp.ones((3,)))
state = not_jitted(state)
total = outer(state)
