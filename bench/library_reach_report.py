"""Read the folders bench/library_reach.sh writes (LIB.coverage.json, LIB.json per library).

    python bench/library_reach_report.py totals DIR            # linted N of M per library and per set
    python bench/library_reach_report.py diff BEFORE AFTER     # functions linted in one and not the other; findings
    python bench/library_reach_report.py reasons DIR LIB[,LIB] [REGEX] [N]   # why not linted, grouped

``totals`` also splits each library's figure into its test modules (``test_*.py``, ``*_test.py``,
files under ``tests/``) and the rest. ``diff`` compares findings by (file, line, code).
"""
from __future__ import annotations

import json
import re
import sys
from collections import Counter
from pathlib import Path

SIX = ("optax", "equinox", "diffrax", "numpyro", "blackjax", "jax_md")
TEN = ("flax", "optimistix", "lineax", "dynamax", "tinygp", "jaxopt", "distrax", "chex", "gpjax", "brax")
TEST_MODULE = re.compile(r"(^|/)(test_[^/]*|[^/]*_test|conftest)\.py$|/tests?/")


def _coverage(folder: Path, lib: str) -> dict | None:
    path = folder / f"{lib}.coverage.json"
    return json.loads(path.read_text()) if path.is_file() else None


def totals(folder: Path) -> None:
    for name, libs in (("six", SIX), ("ten", TEN)):
        linted = functions = 0
        for lib in libs:
            report = _coverage(folder, lib)
            if report is None:
                continue
            split = Counter()
            for function in report["functions"]:
                part = "tests" if TEST_MODULE.search(function["path"]) else "code"
                split[part] += 1
                split[part + " linted"] += function["linted"]
            summary = report["summary"]
            linted, functions = linted + summary["linted"], functions + summary["jax_functions"]
            print(f"{lib:>10}: {summary['linted']:>5} of {summary['jax_functions']:>5}   outside test modules "
                  f"{split['code linted']} of {split['code']}, in them {split['tests linted']} of {split['tests']}")
        if functions:
            print(f"{name:>10}: {linted:>5} of {functions:>5} ({100 * linted / functions:.1f}%)\n")


def _linted(report: dict) -> set[tuple[str, str]]:
    return {(f["path"].split("/src/")[-1], f["function"]) for f in report["functions"] if f["linted"]}


def _findings(folder: Path, lib: str) -> set[tuple[str, int, str]]:
    try:
        items = json.loads((folder / f"{lib}.json").read_text())
    except (OSError, ValueError):
        return set()
    return {(Path(f["filename"]).name, f["location"]["row"], f["code"]) for f in items}


def diff(before: Path, after: Path) -> None:
    for lib in SIX + TEN:
        old, new = _coverage(before, lib), _coverage(after, lib)
        if old is None or new is None:
            continue
        lost, gained = _linted(old) - _linted(new), _linted(new) - _linted(old)
        gone, came = _findings(before, lib) - _findings(after, lib), _findings(after, lib) - _findings(before, lib)
        print(f"== {lib}: {old['summary']['linted']} of {old['summary']['jax_functions']} -> "
              f"{new['summary']['linted']} of {new['summary']['jax_functions']}; lost {len(lost)}, new {len(gained)}")
        for item in sorted(lost):
            print("   lost", *item)
        for item in sorted(gone):
            print("   finding gone", *item)
        for item in sorted(came):
            print("   finding new", *item)


def reasons(folder: Path, libs: str, pattern: str = "", limit: int = 30) -> None:
    grouped: Counter = Counter()
    for lib in libs.split(","):
        report = _coverage(folder, lib) or {"untraced": []}
        for entry in report["untraced"]:
            text = f"{entry['path']} {entry['target']} {entry['kind']} {entry['reason']}"
            if TEST_MODULE.search(entry["path"]) or not re.search(pattern, text):
                continue
            reason = re.sub(r"'[^']*'|\d+", "_", entry["reason"])[:150]
            grouped[(lib, entry["kind"], reason)] += 1
    for (lib, kind, reason), count in grouped.most_common(limit):
        print(f"{count:>4} {lib} [{kind}] {reason}")


if __name__ == "__main__":
    command, *args = sys.argv[1:] or ["help"]
    if command == "totals" and len(args) == 1:
        totals(Path(args[0]))
    elif command == "diff" and len(args) == 2:
        diff(Path(args[0]), Path(args[1]))
    elif command == "reasons" and len(args) >= 2:
        reasons(Path(args[0]), args[1], *(args[2:3]), *(int(a) for a in args[3:4]))
    else:
        sys.exit(__doc__)
