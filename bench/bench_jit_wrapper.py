"""What a jit wrapper rebuilt on every loop step costs (JX203): per call, with JAX's trace and
compile counts, against the wrapper created once before the loop.

    python bench/bench_jit_wrapper.py [--steps 200] [--size 100]

Cases: ``jax.jit(f)(x)`` in the loop against ``g = jax.jit(f)`` hoisted; ``jax.vmap(g)(xs)`` of a
jitted ``g`` in the loop against ``jax.vmap(g)`` hoisted and ``jax.jit(jax.vmap(g))`` hoisted.
Each case runs once untimed (compiles) and is then timed over ``--steps`` calls, best of 5.

``--numpyro`` times numpyro 0.21.0's own call instead, ``jit(body_fn)(svi_state, None)`` of
``numpyro/infer/svi.py:409``, against the hoisted wrapper, with the SVI state of a 100-dimensional
model (numpyro, tqdm and multipledispatch importable, e.g. an unpacked wheel on PYTHONPATH).
"""
from __future__ import annotations

import argparse
import time

import jax
import jax.numpy as jnp

events: list[str] = []
jax.monitoring.register_event_duration_secs_listener(
    lambda event, seconds, **_: events.append(event)
    if event in ("/jax/core/compile/backend_compile_duration", "/jax/core/compile/jaxpr_trace_duration")
    else None)


def update(state, _):
    w, m = state
    m = 0.9 * m + 0.1 * jnp.tanh(w)
    return (w - 0.01 * m, m), jnp.sum(m * m)


g = jax.jit(lambda w: jnp.tanh(w) * 2.0)


def per_step_jit(state, steps):
    for _ in range(steps):
        state, loss = jax.jit(update)(state, None)
    return state, loss


def hoisted_jit(state, steps):
    update_jit = jax.jit(update)
    for _ in range(steps):
        state, loss = update_jit(state, None)
    return state, loss


def per_step_vmap(xs, steps):
    for _ in range(steps):
        xs = jax.vmap(g)(xs)
    return xs


def hoisted_vmap(xs, steps):
    batched = jax.vmap(g)
    for _ in range(steps):
        xs = batched(xs)
    return xs


batched_once = jax.jit(jax.vmap(g))  # at module level: jax.vmap(g) is a new function on every call


def hoisted_jit_vmap(xs, steps):
    for _ in range(steps):
        xs = batched_once(xs)
    return xs


def timed(run, value, steps: int) -> tuple[float, int, int]:
    jax.block_until_ready(run(value, 1))  # the compile, outside the timing
    best = float("inf")
    events.clear()
    for _ in range(5):
        started = time.perf_counter()
        jax.block_until_ready(run(value, steps))
        best = min(best, time.perf_counter() - started)
    traces = sum(e.endswith("jaxpr_trace_duration") for e in events)
    compiles = sum(e.endswith("backend_compile_duration") for e in events)
    return best, traces, compiles


def numpyro_svi(steps: int) -> None:
    """svi.py:409's call with a real SVI state: a 100-dimensional AutoNormal guide, Adam."""
    import numpyro
    import numpyro.distributions as dist
    from numpyro.infer import SVI, Trace_ELBO
    from numpyro.infer.autoguide import AutoNormal
    from numpyro.optim import Adam

    def model(y):
        mu = numpyro.sample("mu", dist.Normal(jnp.zeros(100), 1.0).to_event(1))
        numpyro.sample("y", dist.Normal(mu, 1.0).to_event(1), obs=y)

    y = jnp.ones(100)
    svi = SVI(model, AutoNormal(model), Adam(0.01), Trace_ELBO())

    def body_fn(svi_state, _):
        return svi.update(svi_state, y)

    def per_step(state, n):
        for _ in range(n):
            state, _ = jax.jit(body_fn)(state, None)
        return state

    def hoisted(state, n):
        body_fn_jit = jax.jit(body_fn)
        for _ in range(n):
            state, _ = body_fn_jit(state, None)
        return state

    state = svi.init(jax.random.PRNGKey(0), y)
    print(f"numpyro {numpyro.__version__}, JAX {jax.__version__}, {steps} steps, best of 5")
    for name, run in (("jit(body_fn)(...) in the loop", per_step), ("jit(body_fn) hoisted", hoisted)):
        seconds, traces, compiles = timed(run, state, steps)
        print(f"{name:36s} {seconds * 1e3:8.2f} ms, {seconds / steps * 1e3:.4f} ms per call, "
              f"{traces} traces, {compiles} compiles in the timed runs")


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--steps", type=int, default=200)
    parser.add_argument("--size", type=int, default=100)
    parser.add_argument("--numpyro", action="store_true", help="time numpyro 0.21.0's SVI step instead")
    options = parser.parse_args()
    steps, size = options.steps, options.size
    if options.numpyro:
        numpyro_svi(steps)
        return
    state = (jnp.ones(size), jnp.zeros(size))
    xs = jnp.ones((8, size))
    print(f"JAX {jax.__version__}, {steps} steps, {size} elements, best of 5")
    for name, run, value in [("jax.jit(f)(...) in the loop", per_step_jit, state),
                             ("jax.jit(f) hoisted", hoisted_jit, state),
                             ("jax.vmap(jitted)(...) in the loop", per_step_vmap, xs),
                             ("jax.vmap(jitted) hoisted", hoisted_vmap, xs),
                             ("jax.jit(jax.vmap(jitted)) hoisted", hoisted_jit_vmap, xs)]:
        seconds, traces, compiles = timed(run, value, steps)
        print(f"{name:36s} {seconds * 1e3:8.2f} ms, {seconds / steps * 1e3:.4f} ms per call, "
              f"{traces} traces, {compiles} compiles in the timed runs")


if __name__ == "__main__":
    main()
