"""Benchmark: the result cache, each case beside ruff's time on the same tree (run by hand).

    python bench/bench_cache.py [TREE] [--repeat 5] [--warm-only] [--worktree DIR ...]

TREE defaults to a generated project of 20 JAX modules (the founding pattern); an unpacked
release (optax) is the case the issue names. Each case runs the real command line in a fresh
process (`jaxlint check`, exit status ignored) on a copy of the tree, so the cache is the copy's:
- cold: no cache (the folder removed before each run);
- warm: the same tree again (an unchanged tree: no worker starts, JAX is never imported);
- one changed file: a comment appended to one module holding a target, then a check;
- ruff, in the same run (when ruff is installed): `ruff check` twice, the second timed (warm, its
  own cache, default rules), `ruff check --no-cache` (default rules) and `ruff check --no-cache
  --select E,F,W` (the figure the README quoted first).
Prints the median wall time of each and its ratio to each ruff figure, then the same for the
processes' CPU time (user + system), steadier than wall time on a loaded machine.

`--warm-only` times only the warm run (one cold run fills the cache first). `--worktree DIR`
(repeatable) runs the jaxlint of DIR (`PYTHONPATH=DIR`, each on its own copy of the tree, since
jaxlint's own files are part of every cache key), so a branch and its base are timed in one
run; the default is this checkout. jaxlint runs as an installed package would: its bytecode is
written once (to a temporary `PYTHONPYCACHEPREFIX`, even under `PYTHONDONTWRITEBYTECODE`) and read
by later runs. Compare imports with `python -X importtime -c "import jaxlint.cli.main"` and a
warm run with `python -m cProfile -s cumulative -m jaxlint check TREE`.
"""
from __future__ import annotations

import argparse
import os
import resource
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


WALL: dict[str, list[float]] = {}  # case -> wall seconds of each run
CPU: dict[str, list[float]] = {}  # case -> the process's user + system seconds (steadier on a loaded machine)


def timed(case: str, command: list[str], cwd: Path, env: dict[str, str] | None = None) -> None:
    """Run ``command`` once, its times kept under ``case`` ("" keeps nothing: a warm-up)."""
    before, started = resource.getrusage(resource.RUSAGE_CHILDREN), time.perf_counter()
    subprocess.run(command, cwd=cwd, env=env, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    wall, after = time.perf_counter() - started, resource.getrusage(resource.RUSAGE_CHILDREN)
    if case:
        WALL.setdefault(case, []).append(wall)
        CPU.setdefault(case, []).append(after.ru_utime - before.ru_utime + after.ru_stime - before.ru_stime)


def make_tree(source: str | None, tree: Path) -> None:
    if source:
        shutil.copytree(source, tree, ignore=shutil.ignore_patterns(".jaxlint_cache", ".ruff_cache"))
    else:
        tree.mkdir()
        for i in range(20):
            (tree / f"mod{i}.py").write_text(MODULE)


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("tree", nargs="?", default=None)
    parser.add_argument("--repeat", type=int, default=5)
    parser.add_argument("--warm-only", action="store_true", help="time only the warm (unchanged tree) run")
    parser.add_argument("--worktree", action="append", default=[], help="a jaxlint checkout to time (repeatable)")
    args = parser.parse_args()
    worktrees = [Path(w).resolve() for w in args.worktree] or [REPO]
    jaxlint = [sys.executable, "-m", "jaxlint", "check", "."]
    ruff = shutil.which("ruff") or str(Path(sys.executable).parent / "ruff")
    with tempfile.TemporaryDirectory() as tmp:
        base_env = {k: v for k, v in os.environ.items() if k != "PYTHONDONTWRITEBYTECODE"}
        runs = []  # (label, tree, env)
        for index, worktree in enumerate(worktrees):
            tree = Path(tmp) / f"tree{index}"
            make_tree(args.tree, tree)
            env = {**base_env, "PYTHONPATH": str(worktree), "PYTHONPYCACHEPREFIX": str(Path(tmp) / f"pyc{index}")}
            label = "" if len(worktrees) == 1 else f" [{worktree.name}]"
            runs.append((label, tree, env))
        ruff_tree = Path(tmp) / "ruff_tree"
        make_tree(args.tree, ruff_tree)
        for label, tree, env in runs:
            timed("", jaxlint, tree, env)  # writes the bytecode (and, for --warm-only, the cache)
        for _ in range(args.repeat):
            for label, tree, env in runs:
                if not args.warm_only:
                    shutil.rmtree(tree / ".jaxlint_cache", ignore_errors=True)
                    timed("cold" + label, jaxlint, tree, env)
                timed("warm" + label, jaxlint, tree, env)
                if not args.warm_only:
                    changing = next(p for p in sorted(tree.rglob("*.py")) if "jax.jit" in p.read_text(errors="replace"))
                    with changing.open("a") as handle:
                        handle.write("\n# changed\n")
                    timed("one changed file" + label, jaxlint, tree, env)
            if Path(ruff).exists():
                timed("", [ruff, "check", "-q", "."], ruff_tree)
                timed("ruff (warm, cache)", [ruff, "check", "-q", "."], ruff_tree)
                timed("ruff --no-cache", [ruff, "check", "--no-cache", "-q", "."], ruff_tree)
                timed("ruff --no-cache E,F,W", [ruff, "check", "--no-cache", "--select", "E,F,W", "-q", "."], ruff_tree)
        print(f"tree: {args.tree or '20 generated JAX modules'} ({len(list(ruff_tree.rglob('*.py')))} files), "
              f"{args.repeat} runs, medians")
        for title, table in (("wall", WALL), ("cpu (user + system)", CPU)):
            ruffs = {name: statistics.median(values) for name, values in table.items() if name.startswith("ruff")}
            print(f"{title}; ratios to: {', '.join(ruffs)}")
            for name, values in table.items():
                median = statistics.median(values)
                ratios = "" if name.startswith("ruff") else "  " + " / ".join(f"{median / r:.1f}x" for r in ruffs.values())
                print(f"  {name:<28} {median:6.3f} s  (min {min(values):.3f}, max {max(values):.3f}){ratios}")


if __name__ == "__main__":
    main()
