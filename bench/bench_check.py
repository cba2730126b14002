"""Benchmark: time per stage and peak worker memory of `jaxlint check` (run by hand).

    python bench/bench_check.py [--repeat 5] [--ignore JX306,JX307,JX308]

Cases: the founding example; a tree of 200 files without JAX code; a project of 20 modules,
each with a jitted function holding the founding pattern; `--fix` on the founding example.
Prints the median of each stage. ``--ignore`` leaves rules out of the default selection (what a rule
family costs).
"""
from __future__ import annotations

import argparse
import resource
import shutil
import statistics
import tempfile
import time
from pathlib import Path

from jaxlint.config.selection import select_rules
from jaxlint.engine.check import check

REPO = Path(__file__).resolve().parent.parent
MODULE = (REPO / "examples" / "founding.py").read_text().replace(
    "print(my_mapped_function.lower(x, y).compile().as_text())", "my_mapped_function(x, y)")


def make_cases(root: Path) -> dict[str, Path]:
    founding = root / "founding"
    founding.mkdir()
    shutil.copy(REPO / "examples" / "founding.py", founding / "founding.py")
    plain = root / "plain"
    plain.mkdir()
    for i in range(200):
        (plain / f"mod{i}.py").write_text(f"def f{i}(a, b):\n    return [a + b for _ in range(3)]\n" * 20)
    project = root / "project"
    project.mkdir()
    for i in range(20):
        (project / f"mod{i}.py").write_text(MODULE)
    return {"founding example": (founding, None), "200 files, no jax": (plain, None),
            "20 jax modules, --jobs 1": (project, 1), "20 jax modules, default jobs": (project, None)}


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--repeat", type=int, default=5)
    parser.add_argument("--ignore", default="", help="rule codes to leave out, comma-separated")
    options = parser.parse_args()
    repeat = options.repeat
    rules = select_rules(None, [code for code in options.ignore.split(",") if code])
    with tempfile.TemporaryDirectory() as tmp:
        for name, (path, jobs) in make_cases(Path(tmp)).items():
            walls, stages = [], {}
            for _ in range(repeat):
                started = time.perf_counter()
                result = check([str(path)], rules, jobs=jobs)
                walls.append(time.perf_counter() - started)
                for stage, seconds in result.timings.items():
                    stages.setdefault(stage, []).append(seconds)
            print(f"{name}: wall {statistics.median(walls) * 1000:.0f} ms (median of {repeat}), "
                  f"{len(result.findings)} findings")
            print("   " + ", ".join(f"{s} {statistics.median(v) * 1000:.1f} ms" for s, v in stages.items()))
        # --fix: the verification re-imports the fixed module in a fresh worker.
        walls = []
        for i in range(repeat):
            copy = Path(tmp) / f"fix{i}"
            copy.mkdir()
            shutil.copy(REPO / "examples" / "founding.py", copy / "founding.py")
            started = time.perf_counter()
            result = check([str(copy)], rules, fix=True)
            walls.append(time.perf_counter() - started)
            assert len(result.fixed) == 1, "the founding example's fix was not applied"
        print(f"founding example --fix: wall {statistics.median(walls) * 1000:.0f} ms (median of {repeat}), "
              f"fix stage {result.timings['fix'] * 1000:.0f} ms")
    peak = resource.getrusage(resource.RUSAGE_CHILDREN).ru_maxrss / 1024
    print(f"peak worker RSS: {peak:.0f} MiB")


if __name__ == "__main__":
    main()
