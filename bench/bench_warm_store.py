"""Benchmark: a warm `jaxlint check PACKAGE` on a library whose `pytest --jaxlint` run wrote the
result store (issue 25's case), beside `ruff check --no-cache PACKAGE` on the same tree (run by hand).

    python bench/bench_warm_store.py TREE PACKAGE --tests TEST... [--worktree DIR ...] [--repeat 21]

For each worktree (default: this checkout), TREE is copied to a temporary folder, `pytest
--jaxlint` runs the given test files there (writing the store), and `jaxlint check --output-format
json --exit-zero --jobs 1 PACKAGE` runs twice (the first analyzes what the tests did not reach, the
second is warm). Then the warm checks of every worktree and ruff (`--no-cache`, default rules, and
`--select E,F,W`) run in turn, REPEAT times each, interleaved so the machine's load falls on all
alike; printed: min and median of each process's CPU time (user + system) and wall time, and the
ratios to ruff. jaxlint runs with its bytecode written (a temporary PYTHONPYCACHEPREFIX, even under
PYTHONDONTWRITEBYTECODE), as an installed package runs. The interpreter is this one (its
environment must hold the library's test dependencies); ruff is found beside it, else on PATH.
"""
from __future__ import annotations

import argparse
import os
import shutil
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

REPO = Path(__file__).resolve().parent.parent


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("tree")
    parser.add_argument("package")
    parser.add_argument("--tests", nargs="+", required=True, help="test files, relative to TREE")
    parser.add_argument("--worktree", action="append", default=[], help="a jaxlint checkout (repeatable)")
    parser.add_argument("--repeat", type=int, default=21)
    args = parser.parse_args()
    ruff = shutil.which("ruff", path=os.path.dirname(sys.executable)) or shutil.which("ruff")
    scratch = Path(tempfile.mkdtemp(prefix="jaxlint-bench-"))
    env = {k: v for k, v in os.environ.items() if k != "PYTHONDONTWRITEBYTECODE"}
    env["PYTHONPYCACHEPREFIX"] = str(scratch / "pycache")
    cases: dict[str, tuple[list[str], Path, dict[str, str]]] = {}
    try:
        for n, worktree in enumerate(args.worktree or [str(REPO)]):
            tree = scratch / f"tree{n}"
            shutil.copytree(args.tree, tree, ignore=shutil.ignore_patterns(".jaxlint_cache", ".ruff_cache"))
            own = {**env, "PYTHONPATH": os.path.abspath(worktree)}
            subprocess.run([sys.executable, "-m", "pytest", "-p", "no:cacheprovider", "-q", "--jaxlint",
                            "--jaxlint-exit-zero", *args.tests], cwd=tree, env=own, stdout=subprocess.DEVNULL)
            check = [sys.executable, "-m", "jaxlint", "check", "--output-format", "json", "--exit-zero",
                     "--jobs", "1", args.package]
            for _ in range(2):
                subprocess.run(check, cwd=tree, env=own, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
            cases[f"jaxlint {worktree}"] = (check, tree, own)
        if ruff:
            tree = scratch / "tree0"
            cases["ruff --no-cache"] = ([ruff, "check", "--no-cache", "--exit-zero", "-q", args.package], tree, env)
            cases["ruff --no-cache --select E,F,W"] = (
                [ruff, "check", "--no-cache", "--exit-zero", "-q", "--select", "E,F,W", args.package], tree, env)
        cpu: dict[str, list[float]] = {case: [] for case in cases}
        wall: dict[str, list[float]] = {case: [] for case in cases}
        for _ in range(args.repeat):
            for case, (command, cwd, case_env) in cases.items():
                started = time.perf_counter()
                process = subprocess.Popen(command, cwd=cwd, env=case_env, stdout=subprocess.DEVNULL,
                                           stderr=subprocess.DEVNULL)
                _, _, usage = os.wait4(process.pid, 0)
                wall[case].append(time.perf_counter() - started)
                cpu[case].append(usage.ru_utime + usage.ru_stime)
    finally:
        shutil.rmtree(scratch, ignore_errors=True)
    for case in cases:
        print(f"{case}: CPU min {min(cpu[case]) * 1000:.0f} ms, median {statistics.median(cpu[case]) * 1000:.0f} ms; "
              f"wall min {min(wall[case]) * 1000:.0f} ms, median {statistics.median(wall[case]) * 1000:.0f} ms")
    if ruff:
        base = "ruff --no-cache"
        for case in cases:
            if case.startswith("jaxlint"):
                print(f"{case} / {base}: CPU min {min(cpu[case]) / min(cpu[base]):.2f}x, median "
                      f"{statistics.median(cpu[case]) / statistics.median(cpu[base]):.2f}x; wall min "
                      f"{min(wall[case]) / min(wall[base]):.2f}x, median "
                      f"{statistics.median(wall[case]) / statistics.median(wall[base]):.2f}x")


if __name__ == "__main__":
    main()
