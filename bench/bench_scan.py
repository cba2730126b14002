"""Benchmark: the static scanner (jaxlint.scan, ``ast``) against the libcst scanner it replaced.

    python bench/bench_scan.py                      # jax/_src, flax, optax, equinox
    python bench/bench_scan.py path/or/package ...  # folders, files or installed package names
    python bench/bench_scan.py --no-reference       # skip libcst (slow: ~2 s per 1000 lines)

Prints, per corpus, ms per 1000 source lines for the CPython parse alone, the ast scanner and
the libcst reference (tests/libcst_scan_reference.py), the targets found, and whether both
scanners agreed on every file. Each file is timed as the minimum of --repeat runs (the machine
may be shared; the minimum is the least disturbed).
"""
from __future__ import annotations

import argparse
import ast
import gc
import importlib.util
import sys
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


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("corpora", nargs="*", default=DEFAULT)
    parser.add_argument("--repeat", type=int, default=3, help="runs per file for the ast timings")
    parser.add_argument("--no-reference", action="store_true", help="do not run the libcst scanner")
    args = parser.parse_args()
    for spec in args.corpora:
        run(spec, args.repeat, not args.no_reference)


if __name__ == "__main__":
    main()
