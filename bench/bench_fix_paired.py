"""Benchmark: `jaxlint check` against `jaxlint check --fix` on the founding example, paired (run by hand).

    python bench/bench_fix_paired.py [--repeat 7]

Each pair runs both commands, alternating, through the command line on fresh copies of
examples/founding.py with the cache off (-n), so each pays for its workers' JAX imports, as a first
run does. Prints each pair, the medians and their ratio, and the load average (the machine's
other work moves both figures; the pairing keeps the ratio fair).
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

FOUNDING = Path(__file__).resolve().parent.parent / "examples" / "founding.py"


def timed(*flags: str) -> float:
    with tempfile.TemporaryDirectory() as folder:
        shutil.copy(FOUNDING, folder)
        started = time.perf_counter()
        run = subprocess.run([sys.executable, "-m", "jaxlint", "check", "-n", *flags, "founding.py"], cwd=folder,
                             capture_output=True, text=True)
        seconds = time.perf_counter() - started
        if "--fix" in flags:
            assert "1 fixed" in run.stderr, run.stderr
        return seconds


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--repeat", type=int, default=7)
    repeat = parser.parse_args().repeat
    checks, fixes = [], []
    for i in range(repeat):
        first, second = ((), ("--fix",)) if i % 2 == 0 else (("--fix",), ())
        a, b = timed(*first), timed(*second)
        check, fix = (a, b) if not first else (b, a)
        checks.append(check)
        fixes.append(fix)
        print(f"pair {i + 1}: check {check:.2f} s, check --fix {fix:.2f} s (load {os.getloadavg()[0]:.1f})")
    median_check, median_fix = statistics.median(checks), statistics.median(fixes)
    print(f"medians: check {median_check:.2f} s, check --fix {median_fix:.2f} s, ratio {median_fix / median_check:.2f}")


if __name__ == "__main__":
    main()
