"""Benchmark: the static scanner (jaxlint.scan, ``ast``) against the libcst scanner it replaced.

    python bench/bench_scan.py                      # jax/_src, flax, optax, equinox
    python bench/bench_scan.py path/or/package ...  # folders, files or installed package names
    python bench/bench_scan.py --no-reference       # skip libcst (slow: ~2 s per 1000 lines)
    python bench/bench_scan.py --generated [--functions 5001] [--check]   # one large module

Prints, per corpus, ms per 1000 source lines for the CPython parse alone, the ast scanner and
the libcst reference (tests/libcst_scan_reference.py), the targets found, and whether both
scanners agreed on every file. Each file is timed as the minimum of --repeat runs (the machine
may be shared; the minimum is the least disturbed).

``--generated`` writes one module of N hinted jitted functions (six lines each: 5,001 make about
30,000 lines) and times the scan stage of ``jaxlint check`` on it in this process (read, parse,
scan, source index, JAX functions: ``engine.check.prepare``), wall and CPU, in ms per 1000 lines.
With ``--check`` it also runs ``jaxlint check --timings`` on the module in a fresh process (with
an empty result cache) and
prints the scan stage it reports, the whole run's wall and CPU time (the worker included) and
the largest resident set of the processes it started.
"""
from __future__ import annotations

import argparse
import ast
import gc
import importlib.util
import re
import resource
import subprocess
import sys
import tempfile
import time
from pathlib import Path

from jaxlint import scan

REPO = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(REPO / "tests"))
import libcst_scan_reference as reference  # noqa: E402

DEFAULT = ["jax/_src", "flax", "optax", "equinox"]


def corpus_files(spec: str) -> list[Path]:
    path = Path(spec)
    if not path.exists():
        package, _, sub = spec.partition("/")
        found = importlib.util.find_spec(package)
        if found is None or found.origin is None:
            return []
        path = Path(found.origin).parent / sub
    return sorted(path.rglob("*.py")) if path.is_dir() else [path]


def best_time(function, repeat: int) -> float:
    times = []
    for _ in range(repeat):
        start = time.perf_counter()
        function()
        times.append(time.perf_counter() - start)
    return min(times)


def outcome(module, path: str, source: str):
    try:
        return module.scan_source(path, source)
    except module.ScanSyntaxError as error:
        return ("error", error.line, error.column)


def parse_only(path: str, source: str) -> None:
    paused = gc.isenabled()
    gc.disable()
    try:
        compile(source, path, "exec", ast.PyCF_ONLY_AST, dont_inherit=True)
    except (SyntaxError, ValueError):
        pass
    finally:
        if paused:
            gc.enable()


def run(spec: str, repeat: int, with_reference: bool) -> None:
    files = corpus_files(spec)
    if not files:
        print(f"{spec}: not found, skipped")
        return
    lines = parse = new = old = 0.0
    targets, disagreements = 0, []
    for path in files:
        source = path.read_text(encoding="utf-8")
        lines += source.count("\n") + 1
        parse += best_time(lambda: parse_only(str(path), source), repeat)
        new += best_time(lambda: outcome(scan, str(path), source), repeat)
        result = outcome(scan, str(path), source)
        targets += len(result) if isinstance(result, list) else 0
        if with_reference:
            old += best_time(lambda: outcome(reference, str(path), source), 1)
            if outcome(reference, str(path), source) != result:
                disagreements.append(str(path))
    per_k = 1000 / lines * 1000  # seconds over the corpus -> ms per 1000 lines
    row = f"{spec:<12} {len(files):>5} files {int(lines):>7} lines {targets:>4} targets | " \
          f"parse {parse * per_k:6.1f}  ast scan {new * per_k:6.1f}"
    if with_reference:
        row += f"  libcst scan {old * per_k:7.1f}  ({old / new:.0f}x)  " + (
            "identical" if not disagreements else f"DIFFER in {len(disagreements)} files")
    print(row + "  (ms per 1000 lines)")
    for path in disagreements:
        print("   differs:", path)


GENERATED_FUNCTION = """\
# jaxlint: args x=f32[8]
@jax.jit
def step_{i}(x):
    y = jnp.sin(x)
    return y * {i}

"""


def generated_module(functions: int) -> str:
    return "import jax\nimport jax.numpy as jnp\n\n" + "".join(GENERATED_FUNCTION.format(i=i) for i in range(functions))


def run_generated(functions: int, repeat: int, check: bool) -> None:
    from jaxlint.config import load_config
    from jaxlint.engine.check import prepare
    from jaxlint.rules import all_rules
    from jaxlint.scan.index import parse

    codes = [rule.code for rule in all_rules()]
    with tempfile.TemporaryDirectory() as folder:
        path = Path(folder) / f"generated_{functions}.py"
        path.write_text(generated_module(functions), encoding="utf-8")
        lines = path.read_text(encoding="utf-8").count("\n")
        config = load_config([str(path)], isolated=True)
        walls, cpus, targets = [], [], 0
        for _ in range(repeat):
            parse.cache_clear()  # each run parses the module, as a check does
            wall, cpu = time.perf_counter(), time.process_time()
            analysis = prepare(str(path), codes, config)
            walls.append(time.perf_counter() - wall)
            cpus.append(time.process_time() - cpu)
            targets = len(analysis.targets)
        per_k = 1000 / lines * 1000
        print(f"generated {functions} functions, {lines} lines, {targets} targets: scan stage "
              f"{min(walls) * 1000:.0f} ms wall, {min(cpus) * 1000:.0f} ms CPU (best of {repeat}) = "
              f"{min(walls) * per_k:.1f} / {min(cpus) * per_k:.1f} ms per 1000 lines")
        if check:
            before = resource.getrusage(resource.RUSAGE_CHILDREN)
            started = time.perf_counter()
            # A long time limit: on a loaded machine the module's import may take more than 60 s.
            run = subprocess.run([sys.executable, "-m", "jaxlint", "check", "--timings",
                                  "--cache-dir", str(Path(folder) / "cache"), "--timeout", "900", "--output-format", "concise", str(path)],
                                 capture_output=True, text=True)
            wall = time.perf_counter() - started
            after = resource.getrusage(resource.RUSAGE_CHILDREN)
            cpu = after.ru_utime + after.ru_stime - before.ru_utime - before.ru_stime
            stages = dict(re.findall(r"(\w[\w-]*) ([\d.]+) ms", run.stderr.split("timings:")[-1]))
            summary = next((line for line in run.stderr.splitlines() if "checked" in line), run.stderr[-300:])
            print(f"jaxlint check --timings: scan {float(stages.get('scan', 0)):.0f} ms "
                  f"({float(stages.get('scan', 0)) * 1000 / lines:.1f} ms per 1000 lines), whole run {wall:.1f} s wall, "
                  f"{cpu:.1f} s CPU, largest process {after.ru_maxrss / 1024:.0f} MiB | {summary}")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("corpora", nargs="*", default=DEFAULT)
    parser.add_argument("--repeat", type=int, default=3, help="runs per file for the ast timings")
    parser.add_argument("--no-reference", action="store_true", help="do not run the libcst scanner")
    parser.add_argument("--generated", action="store_true", help="time the scan stage on one generated module")
    parser.add_argument("--functions", type=int, default=5001, help="jitted functions in the generated module")
    parser.add_argument("--check", action="store_true", help="with --generated: also run jaxlint check on it")
    args = parser.parse_args()
    if args.generated:
        run_generated(args.functions, args.repeat, args.check)
        return
    for spec in args.corpora:
        run(spec, args.repeat, not args.no_reference)


if __name__ == "__main__":
    main()
