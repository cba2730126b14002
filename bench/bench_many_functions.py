"""Benchmark: how rule time grows with the number of jitted functions in one module (run by hand).

    python bench/bench_many_functions.py [--sizes 50 150 300 600 1500] [--timeout 60]

Each size is one generated module of N jitted functions, each with a hint, a donation candidate
(the state is rebound at a call site), an ``.at[]`` update and a print (the source-reading program
rules JX302, JX504 and JX602 have something to look at), checked with every rule by
``jaxlint check --timings`` in a fresh process. Prints the wall time and the worker's import,
trace and rules stages. Rule time that grows with the square of N is what this guards against.
"""
from __future__ import annotations

import argparse
import re
import subprocess
import sys
import tempfile
import time
from pathlib import Path

FUNCTION = '''
# jaxlint: args state=f32[8], x=f32[8]
@jax.jit
def step_{i}(state, x):
    update = state.at[0].set(x[0])
    print("tracing step_{i}")
    return state * {i} + jnp.sin(x) + update


def run_{i}(state, x):
    state = step_{i}(state, x)
    return state
'''


def module(size: int) -> str:
    return "import jax\nimport jax.numpy as jnp\n" + "".join(FUNCTION.format(i=i) for i in range(size))


def measure(size: int, timeout: float) -> str:
    with tempfile.TemporaryDirectory() as folder:
        path = Path(folder) / f"many_{size}.py"
        path.write_text(module(size), encoding="utf-8")
        started = time.perf_counter()
        run = subprocess.run([sys.executable, "-m", "jaxlint", "check", "--timings", "--timeout", str(timeout),
                              "--output-format", "concise", str(path)], capture_output=True, text=True)
        wall = time.perf_counter() - started
    stages = dict(re.findall(r"(\w[\w-]*) ([\d.]+) ms", run.stderr.split("timings:")[-1]))
    summary = next((line for line in run.stderr.splitlines() if "checked" in line), run.stderr.strip()[-200:])
    return (f"{size:5d} functions: {wall:6.1f} s wall, import {float(stages.get('import', 0)) / 1000:5.1f} s, "
            f"trace {float(stages.get('trace', 0)) / 1000:5.1f} s, rules {float(stages.get('rules', 0)) / 1000:6.1f} s"
            f"  | {summary}")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--sizes", type=int, nargs="+", default=[50, 150, 300, 600, 1500])
    parser.add_argument("--timeout", type=float, default=60.0)
    args = parser.parse_args()
    for size in args.sizes:
        print(measure(size, args.timeout), flush=True)


if __name__ == "__main__":
    main()
