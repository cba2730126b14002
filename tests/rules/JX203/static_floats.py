import math
from functools import partial

import jax
import jax.numpy as jnp
import numpy as np

HALF = 0.5


# jaxlint: args x=f32[3], lr=0.1
@partial(jax.jit, static_argnums=(1,))
def step(x, lr):
    return x - lr * jnp.tanh(x)


# jaxlint: args x=f32[3], temperature=0.5
@partial(jax.jit, static_argnames=("temperature",))
def sample(x, temperature):
    if temperature > 0:
        return x / temperature
    return x


def decay(x, scale):
    return x * (1.0 - scale)


# jaxlint: args x=f32[3], scale=0.5
decayed = jax.jit(decay, static_argnames="scale")


# jaxlint: args x=f32[3], rate=0.5
@partial(jax.jit, static_argnums=1)
def damp(x, rate):
    return x * jnp.exp(-rate)


# jaxlint: args x=f32[3], lr=0.5, n=2, mode='a'
@partial(jax.jit, static_argnums=(1, 2, 3))
def quiet(x, lr, n, mode):
    return jnp.tile(x * lr, n)


# jaxlint: args x=f32[3], eps=0.5
@partial(jax.jit, static_argnums=1)
def nudge(x, eps):
    if isinstance(eps, float):  # Python looks at the static value's type: other operations traced
        return x + eps
    return jnp.sin(x) + eps


@partial(jax.jit, static_argnums=1)
def unhinted(x, lr):
    return x * lr


@partial(jax.jit, static_argnums=1)
def unhinted_sites(x, lr):
    return x * lr


unhinted.lower(jnp.ones(3), 0.5)
unhinted_sites.lower(jnp.ones(3), 0.5)


def train(x, steps, base_lr):
    for i in range(steps):
        x = step(x, 0.1 * 0.99 ** i)  # expect: JX203
    for t in np.linspace(0.1, 1.0, 5):
        x = sample(x, temperature=t)  # expect: JX203
    lr = 0.5
    for _ in range(3):
        x = step(x, lr)  # expect: JX203
        lr *= 0.9
    for i in range(steps):
        x = decayed(x, scale=i / steps)  # expect: JX203
    for i, lr in enumerate([0.1, 0.01, 0.001]):
        x = step(x, lr)  # expect: JX203
    for epoch in range(10):
        x = step(x, base_lr * math.cos(epoch))  # expect: JX203
    xs = [decayed(x, float(k) / 4) for k in range(4)]  # expect: JX203
    t = 0.0
    while t < 1.0:
        x = sample(x, t)  # expect: JX203
        t += 0.25
    schedule = np.linspace(0.0, 1.0, 8)
    for i in range(8):
        x = step(x, schedule[i])  # expect: JX203
    for i in range(steps):
        x = unhinted(x, 1.0 / (i + 1))  # expect: JX203
    return x, xs


def near_misses(x, steps, base_lr, n):
    for i in range(steps):
        x = quiet(x, 0.5, 2, "a")  # one constant everywhere: one compile
        x = quiet(x, HALF, i, "b" * i)  # ints and strings: out of scope
        x = quiet(x, base_lr, (i, i), "a")
        x = quiet(x, lr=base_lr * 0.5, n=2, mode="a")  # loop-invariant
    fixed = 0.3 * 0.99 ** 10
    for i in range(steps):
        x = quiet(x, fixed, 2, "a")
        lr2 = 0.5
        x = quiet(x, lr2, 2, "a")
        x = quiet(x, 0.5 if i < 0 else 0.5, 2, "a")
    for lr in [0.5, 0.5]:
        x = quiet(x, lr, 2, "a")
    for row in x:
        x = quiet(x, 0.5, 2, "a")
    for i in range(steps):
        x = jnp.tanh(x) * (0.1 * i)
        x = quiet(x * (0.1 * i), 0.5, 2, "a")  # a changing float at a traced position
    for xi in jnp.linspace(0.0, 1.0, 4):
        x = quiet(x, 0.5, n, "a")
    return x


# jaxlint: args x=f32[3]
@jax.jit
def traced_schedule(x):
    for i in range(3):
        x = step(x, 0.1 * i)  # traced into traced_schedule: compiled once, with it
    return helper(x)


def helper(x):
    for i in range(3):
        x = step(x, 0.1 * i)  # runs only under traced_schedule's trace
    return x


def evaluate(x):
    a = damp(x, 0.5)  # expect: JX203
    b = damp(x, rate=0.25)
    c = damp(x, 0.125)
    d = sample(x, 0.0)  # temperature picks a code path: two values, two programs, by design
    e = sample(x, 1.0)
    f = quiet(x, 0.5, 2, "a")
    g = quiet(x, HALF * 5, 2, "a")
    for temperature in (0.0, 1.0):
        e = sample(x, temperature)
    for i in range(3):
        f = sample(x, 0.0 if i == 0 else 1.0)
    h = unhinted_sites(x, 0.1)  # not verified by a trace (no hint, no record): not reported
    k = unhinted_sites(x, 0.2)
    m = nudge(x, 0.1) + nudge(x, 0.2)  # traced, eps gives other operations: not verified either
    return a, b, c, d, e, f, g, h, k, m
