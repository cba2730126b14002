"""JX705's figures: ``inv(a) @ b`` against ``jnp.linalg.solve(a, b)`` at n = 800, float32, on this
machine's CPU: the time per call (median of --repeat runs after a compile) and the relative residual
|a x - b| / |b| when a has condition number 1e6 and b = a @ (a unit-scale vector).

    python bench/bench_inverse.py [--n 800] [--repeat 20]
"""
from __future__ import annotations

import argparse
import statistics
import time

import jax
import jax.numpy as jnp
import numpy as np


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--n", type=int, default=800)
    parser.add_argument("--repeat", type=int, default=20)
    args = parser.parse_args()
    rng = np.random.default_rng(0)
    q, _ = np.linalg.qr(rng.standard_normal((args.n, args.n)))
    a = jnp.asarray(q @ np.diag(np.logspace(0, -6, args.n)) @ q.T, jnp.float32)  # condition number 1e6
    b = a @ jnp.asarray(rng.standard_normal(args.n), jnp.float32)
    by_inverse = jax.jit(lambda a, b: jnp.linalg.inv(a) @ b)
    by_solve = jax.jit(jnp.linalg.solve)
    print(f"JAX {jax.__version__}, n = {args.n}, median of {args.repeat}")
    for name, f in (("inv(a) @ b", by_inverse), ("solve(a, b)", by_solve)):
        x = f(a, b).block_until_ready()
        times = []
        for _ in range(args.repeat):
            start = time.perf_counter()
            f(a, b).block_until_ready()
            times.append(time.perf_counter() - start)
        residual = float(jnp.linalg.norm(a @ x - b) / jnp.linalg.norm(b))
        print(f"{name}: {statistics.median(times) * 1e3:.1f} ms, relative residual {residual:.1e}")


if __name__ == "__main__":
    main()
