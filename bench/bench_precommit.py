"""Benchmark: pre-commit latency with and without the result cache (run by hand).

    python bench/bench_precommit.py [--repeat 5]

A git repository of 20 JAX modules (the founding pattern, each importing a shared helper module)
with docs/ci.md's `repo: local` hook (`jaxlint check --force-exclude`, this interpreter's
jaxlint). Cases, each `pre-commit run` in a fresh process, median wall time:
- one changed file: a comment appended to one module, `pre-commit run --files` that module;
- all files, one changed: the same change, `pre-commit run --all-files`;
- all files, unchanged: `pre-commit run --all-files` again.
Each first with JAXLINT_NO_CACHE=1 (before the cache), then with the cache warm.
"""
from __future__ import annotations

import argparse
import os
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

REPO = Path(__file__).resolve().parent.parent
MODULE = (REPO / "examples" / "founding.py").read_text().replace(
    "print(my_mapped_function.lower(x, y).compile().as_text())", "my_mapped_function(x, y)").replace(
    "import jax.numpy as jnp\n", "import jax.numpy as jnp\n\nfrom shared import offset\n").replace(
    "x = x + 1  #", "x = x + offset()  #")
GIT = ["git", "-c", "user.name=bench", "-c", "user.email=bench@jaxlint.invalid", "-c", "commit.gpgsign=false"]


def make_project(root: Path) -> None:
    (root / "shared.py").write_text("def offset():\n    return 1\n")
    for i in range(20):
        (root / f"mod{i}.py").write_text(MODULE)
    (root / "jaxlint.toml").write_text("")
    (root / ".pre-commit-config.yaml").write_text(
        "repos:\n- repo: local\n  hooks:\n  - id: jaxlint\n    name: jaxlint\n"
        f"    entry: {sys.executable} -m jaxlint check --force-exclude\n"
        "    language: system\n    types: [python]\n    require_serial: true\n")
    subprocess.run(["git", "init", "-q"], cwd=root, check=True)
    subprocess.run([*GIT, "add", "-A"], cwd=root, check=True)
    subprocess.run([*GIT, "commit", "-q", "-m", "project"], cwd=root, check=True)


def timed(args: list[str], root: Path, cache: bool) -> float:
    env = dict(os.environ, PRE_COMMIT_COLOR="never")
    if not cache:
        env["JAXLINT_NO_CACHE"] = "1"
    started = time.perf_counter()
    subprocess.run([sys.executable, "-m", "pre_commit", "run", *args], cwd=root, env=env,
                   stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    return time.perf_counter() - started


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--repeat", type=int, default=5)
    repeat = parser.parse_args().repeat
    with tempfile.TemporaryDirectory() as tmp:
        root = Path(tmp)
        make_project(root)
        changed = root / "mod7.py"
        for cache in (False, True):
            timed(["--all-files"], root, cache)  # warm the cache (and pre-commit's own)
            times: dict[str, list[float]] = {"one changed file": [], "all files, one changed": [],
                                             "all files, unchanged": []}
            for _ in range(repeat):
                with changed.open("a") as handle:
                    handle.write("# changed\n")
                times["one changed file"].append(timed(["--files", changed.name], root, cache))
                with changed.open("a") as handle:
                    handle.write("# changed\n")
                times["all files, one changed"].append(timed(["--all-files"], root, cache))
                times["all files, unchanged"].append(timed(["--all-files"], root, cache))
            print("with the cache" if cache else "without the cache (JAXLINT_NO_CACHE=1)")
            for name, values in times.items():
                print(f"  {name:<24} {statistics.median(values):6.2f} s  (min {min(values):.2f}, max {max(values):.2f})")


if __name__ == "__main__":
    main()
