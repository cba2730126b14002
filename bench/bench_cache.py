"""Benchmark: the result cache, each case beside ruff's uncached time on the same tree (run by hand).

    python bench/bench_cache.py [TREE] [--repeat 5]

TREE defaults to a generated project of 20 JAX modules (the founding pattern); an unpacked
release (optax) is the case the issue names. Each case runs the real command line in a fresh
process (`jaxlint check`, exit status ignored) on a copy of the tree, so the cache is the copy's:
- cold: no cache (the folder removed before each run);
- warm: the same tree again;
- one changed file: a comment appended to one module holding a target, then a check;
- ruff: `ruff check --no-cache --select E,F,W` (when ruff is installed).
Prints the median wall time of each and its ratio to ruff's.
"""
from __future__ import annotations

import argparse
import shutil
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

REPO = Path(__file__).resolve().parent.parent
MODULE = (REPO / "examples" / "founding.py").read_text().replace(
    "print(my_mapped_function.lower(x, y).compile().as_text())", "my_mapped_function(x, y)")


def timed(command: list[str], cwd: Path) -> float:
    started = time.perf_counter()
    subprocess.run(command, cwd=cwd, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    return time.perf_counter() - started


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("tree", nargs="?", default=None)
    parser.add_argument("--repeat", type=int, default=5)
    args = parser.parse_args()
    jaxlint = [sys.executable, "-m", "jaxlint", "check", "."]
    ruff = shutil.which("ruff") or str(Path(sys.executable).parent / "ruff")
    with tempfile.TemporaryDirectory() as tmp:
        tree = Path(tmp) / "tree"
        if args.tree:
            shutil.copytree(args.tree, tree, ignore=shutil.ignore_patterns(".jaxlint_cache", ".ruff_cache"))
        else:
            tree.mkdir()
            for i in range(20):
                (tree / f"mod{i}.py").write_text(MODULE)
        cache = tree / ".jaxlint_cache"
        changing = next(p for p in sorted(tree.rglob("*.py")) if "jax.jit" in p.read_text(errors="replace"))
        times: dict[str, list[float]] = {"cold": [], "warm": [], "one changed file": [], "ruff": []}
        for _ in range(args.repeat):
            shutil.rmtree(cache, ignore_errors=True)
            times["cold"].append(timed(jaxlint, tree))
            times["warm"].append(timed(jaxlint, tree))
            with changing.open("a") as handle:
                handle.write("\n# changed\n")
            times["one changed file"].append(timed(jaxlint, tree))
            if Path(ruff).exists():
                times["ruff"].append(timed([ruff, "check", "--no-cache", "--select", "E,F,W", "-q", "."], tree))
        ruff_median = statistics.median(times["ruff"]) if times["ruff"] else None
        print(f"tree: {args.tree or '20 generated JAX modules'} ({len(list(tree.rglob('*.py')))} files), "
              f"{args.repeat} runs, medians")
        for name, values in times.items():
            if not values:
                continue
            median = statistics.median(values)
            ratio = f"  {median / ruff_median:5.1f}x ruff" if ruff_median else ""
            print(f"  {name:<18} {median:6.2f} s  (min {min(values):.2f}, max {max(values):.2f}){ratio}")


if __name__ == "__main__":
    main()
