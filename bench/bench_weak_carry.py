"""Benchmark: what a weakly typed carry costs (JX206's page), run by hand.

    python bench/bench_weak_carry.py [--steps 50] [--repeat 5]

The page's example, `total = step(total, x)` over rows of an f32[50, 128] array, starting from the
Python float 0.0 and from `jnp.float32(0.0)`, each in a fresh process (JAX's caches are per
process). For each: the compiles of `step` counted by JAX's own event
(`/jax/core/compile/backend_compile_duration`), the seconds XLA's compiler took, and the wall time
of the whole loop. Prints the medians over the repeats: the weak start's second compile is the
cost JX206 reports.
"""
from __future__ import annotations

import argparse
import json
import statistics
import subprocess
import sys

_CHILD = r"""
import json, sys, time
import jax
import jax.numpy as jnp

compiles = []
COMPILE = "/jax/core/compile/backend_compile_duration"
jax.monitoring.register_event_duration_secs_listener(
    lambda event, seconds, **_: compiles.append(seconds) if event == COMPILE else None)


@jax.jit
def step(total, x):
    return total + jnp.sum(x ** 2)


xs = list(jnp.ones((int(sys.argv[2]), 128)))  # the rows sliced (and their helpers compiled) beforehand
start_value = 0.0 if sys.argv[1] == "weak" else jnp.float32(0.0)
jax.block_until_ready(xs)
compiles.clear()  # from here on only step compiles
start = time.perf_counter()
total = start_value
for x in xs:
    total = step(total, x)
jax.block_until_ready(total)
wall = time.perf_counter() - start
print(json.dumps({"compiles": compiles, "wall_s": wall}))
"""


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--steps", type=int, default=50)
    parser.add_argument("--repeat", type=int, default=5)
    options = parser.parse_args()
    import jax

    print(f"JAX {jax.__version__}, CPU, {options.steps} steps, median of {options.repeat} fresh processes")
    for start in ("weak", "cast"):
        runs = [json.loads(subprocess.run([sys.executable, "-c", _CHILD, start, str(options.steps)], check=True,
                                          capture_output=True, text=True).stdout) for _ in range(options.repeat)]
        counts = sorted({len(r["compiles"]) for r in runs})
        each = [statistics.median(r["compiles"][k] for r in runs if len(r["compiles"]) > k) * 1e3
                for k in range(max(counts))]
        print(f"{start:5}: compiles of step {'/'.join(map(str, counts))}, XLA compile time of each "
              f"{', '.join(f'{ms:.1f} ms' for ms in each)}; "
              f"whole loop {statistics.median(r['wall_s'] for r in runs) * 1e3:.1f} ms")


if __name__ == "__main__":
    main()
