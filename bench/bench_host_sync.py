"""What a host sync on every step costs (rules/JX309.md, Cost): 200 steps of a small jitted
update, reading the loss with ``float`` on every step against every 100th step, in ms per step.

    JAX_PLATFORMS=cpu python bench/bench_host_sync.py [SIZE ...]
"""
from __future__ import annotations

import sys
import time

import jax
import jax.numpy as jnp


@jax.jit
def step(w: jax.Array, x: jax.Array) -> tuple[jax.Array, jax.Array]:
    loss = jnp.mean(jnp.tanh(x @ w) ** 2)
    return w - 0.01 * jnp.tanh(w), loss


def per_step(size: int, every: int, steps: int = 200) -> float:
    """Milliseconds per step, reading the loss every ``every`` steps."""
    w, x = jnp.ones((size, size)) * 0.01, jnp.ones((size, size))
    w, loss = step(w, x)
    float(loss)  # compiled and finished before the clock starts
    started = time.perf_counter()
    losses = []
    for i in range(steps):
        w, loss = step(w, x)
        if i % every == 0:
            losses.append(float(loss))
    jax.block_until_ready(w)
    return (time.perf_counter() - started) / steps * 1e3


if __name__ == "__main__":
    for size in [int(a) for a in sys.argv[1:]] or [64, 512]:
        for _ in range(3):
            print(f"{size}x{size}: every step {per_step(size, 1):.3f} ms/step, "
                  f"every 100th {per_step(size, 100):.3f} ms/step")
