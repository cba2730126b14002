"""Benchmark: what `pytest --jaxlint` costs a test suite (run by hand).

    python bench/bench_pytest_plugin.py [--cwd DIR] [--repeat 3] [--python PY] -- PYTEST_ARGS...

Runs the suite with and without ``--jaxlint`` (``--jaxlint-exit-zero``, so findings do not change
the exit status), alternating, ``--repeat`` times each, and prints the median wall times, their
ratio, the pytest outcome line of each kind of run and jaxlint's summary line. With no
PYTEST_ARGS: a generated project of 20 modules whose tests call jitted, grad-ed and plain JAX
functions.
"""
from __future__ import annotations

import argparse
import os
import statistics
import subprocess
import sys
import tempfile
import textwrap
import time
from pathlib import Path

MODULE = textwrap.dedent('''\
    import jax
    import jax.numpy as jnp


    def safe_log(x):
        return jnp.where(x > 0, jnp.log(x), 0.0)


    @jax.jit
    def step(w, x):
        return w - 0.1 * jax.grad(lambda w: jnp.sum(safe_log(x @ w)))(w)


    def make_update(rate):
        def update(w, g):
            return w - rate * g
        return update
    ''')

TEST = textwrap.dedent('''\
    import jax.numpy as jnp
    from pkg.mod{i} import make_update, safe_log, step


    def test_step():
        w = jnp.ones((8, 4))
        for _ in range(5):
            w = step(w, jnp.ones((16, 8)))
        assert w.shape == (8, 4)


    def test_update():
        assert make_update(0.1)(jnp.ones(3), jnp.ones(3)).shape == (3,)


    def test_safe_log():
        assert float(safe_log(jnp.ones(2)).sum()) == 0.0
    ''')


def generated(root: Path) -> Path:
    (root / "pkg").mkdir()
    (root / "pkg" / "__init__.py").write_text("")
    (root / "tests").mkdir()
    for i in range(20):
        (root / "pkg" / f"mod{i}.py").write_text(MODULE)
        (root / "tests" / f"test_mod{i}.py").write_text(TEST.format(i=i))
    return root


def run(python: str, cwd: Path, args: list[str]) -> tuple[float, str]:
    started = time.perf_counter()
    done = subprocess.run([python, "-m", "pytest", "-p", "no:cacheprovider", *args], cwd=cwd,
                          capture_output=True, text=True, env={**os.environ, "JAX_PLATFORMS": "cpu"})
    return time.perf_counter() - started, done.stdout


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--cwd", type=Path, default=None)
    parser.add_argument("--repeat", type=int, default=3)
    parser.add_argument("--python", default=sys.executable)
    parser.add_argument("pytest_args", nargs="*")
    options = parser.parse_args()
    with tempfile.TemporaryDirectory() as scratch:
        cwd = options.cwd or generated(Path(scratch))
        args = options.pytest_args or ["-q", "tests"]
        plain, linted, outputs = [], [], {}
        for _ in range(options.repeat):
            seconds, outputs["plain"] = run(options.python, cwd, args)
            plain.append(seconds)
            seconds, outputs["jaxlint"] = run(options.python, cwd, [*args, "--jaxlint", "--jaxlint-exit-zero"])
            linted.append(seconds)
    print(f"without --jaxlint: median {statistics.median(plain):.1f} s  {[round(s, 1) for s in plain]}")
    print(f"with --jaxlint:    median {statistics.median(linted):.1f} s  {[round(s, 1) for s in linted]}")
    print(f"ratio: {statistics.median(linted) / statistics.median(plain):.2f}")
    for kind, text in outputs.items():
        lines = [line for line in text.splitlines() if line.strip()]
        outcome = lines[-1] if lines else "(no output)"
        summary = next((line for line in lines if line.startswith("jaxlint: linted")), "")
        print(f"{kind}: {outcome}" + (f"\n  {summary}" if summary else ""))


if __name__ == "__main__":
    main()
