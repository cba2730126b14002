"""Findings on six public JAX libraries, to show that a change keeps behaviour (run by hand).

    python bench/six_libraries.py WORKTREE OUT [--libs DIR] [--tests DIR] [--python PY] [--only optax,equinox] [--target TARGET]
    python bench/six_libraries.py --compare BEFORE AFTER

The first form runs the jaxlint of WORKTREE (``PYTHONPATH=WORKTREE``) on each library, twice:
- ``python -m jaxlint check --isolated --no-cache --output-format json --exit-zero PACKAGE``
  (default rule selection), in the library's folder; stdout kept as ``OUT/LIB.check.json``;
- ``python -m pytest --jaxlint --jaxlint-exit-zero --jaxlint-report OUT/LIB.pytest.json`` on a fixed
  slice of the library's tests (1-3 minutes each on a 2-core machine), in the library's folder (so
  the library is the project jaxlint lints); the terminal output kept as ``OUT/LIB.pytest.log``.
With ``--target TARGET`` (``tpu-v5e``, ...; docs/target.md) check gets ``--target TARGET`` and pytest
``--jaxlint-target TARGET``: the compiled rules read the program compiled for that target (the
summary records it; without the option nothing is passed, and jaxlint compiles for the CPU).
``OUT/summary.json`` holds the wall times, the finding counts, pytest's outcome and jaxlint's summary
lines (how many functions each run linted and traced); check's stderr is kept as ``OUT/LIB.check.log``.
With ``--plain`` the slice also runs without the plugin, right after it (``plain``: its time and the
plugin's ratio to it).

The libraries are the releases earlier measurements used, unpacked under ``--libs`` (default
/tmp/libs): optax 0.2.8, equinox 0.13.8, diffrax 0.7.2, numpyro 0.22.0, blackjax 1.7.1, jax-md
0.2.29 (``pip download --no-deps --no-binary :all: NAME==VERSION``, then ``tar xzf``). PY (default:
this interpreter) must have JAX, the six installed from those folders (``pip install -e``) and their
test dependencies (flax, scipy, scikit-learn, chex, beartype, tqdm, ase, netCDF4, pytest). The sdists of
equinox and diffrax ship no tests: ``--tests`` (default /tmp/measure/tests) holds their
repositories' test folders at the release tags, as ``equinox/tests`` and ``diffrax/test``.

``--compare`` prints, per library and command, the findings one run has and the other has not,
each normalized to (library, path relative to the library, line, column, end line, end column,
code, message, fix applicability and edits), and jaxlint's summary lines when they differ (the
seconds taken out); it exits 1 if anything differs.
"""
from __future__ import annotations

import argparse
import json
import os
import re
import subprocess
import sys
import time
from collections import Counter
from pathlib import Path
from typing import Any

# name: (folder under --libs, package folder in it, pytest slice). "{lib}" is the library's folder,
# "{tests}" the --tests folder. The slices reach jitted, grad-ed and vmapped library code.
LIBRARIES: dict[str, tuple[str, str, list[str]]] = {
    "optax": ("optax-0.2.8", "optax", [
        "optax/_src/transform_test.py", "optax/_src/combine_test.py", "optax/_src/update_test.py",
        "optax/_src/numerics_test.py", "optax/_src/lookahead_test.py", "optax/_src/factorized_test.py"]),
    "equinox": ("equinox-0.13.8", "equinox", [
        "{tests}/equinox/tests/test_jit.py", "{tests}/equinox/tests/test_ad.py",
        "{tests}/equinox/tests/test_vmap.py", "{tests}/equinox/tests/test_filters.py"]),
    "diffrax": ("diffrax-0.7.2", "diffrax", [
        "{tests}/diffrax/test/test_term.py", "{tests}/diffrax/test/test_interpolation.py",
        "{tests}/diffrax/test/test_vmap.py", "{tests}/diffrax/test/test_step_to.py",
        "{tests}/diffrax/test/test_progress_meter.py", "{tests}/diffrax/test/test_local_interpolation.py"]),
    "numpyro": ("numpyro-0.22.0", "numpyro", [
        "test/test_optimizers.py", "test/test_handlers.py", "test/test_util.py"]),
    "blackjax": ("blackjax-1.7.1", "blackjax", [
        "tests/mcmc/test_trajectory.py", "tests/mcmc/test_proposal.py", "tests/mcmc/test_mala.py",
        "tests/mcmc/test_barker.py"]),
    "jax_md": ("jax_md-0.2.29", "jax_md", ["tests/quantity_test.py", "tests/space_test.py"]),
}


def run(command: list[str], cwd: Path, env: dict[str, str], stdout: Path, stderr: Path | None = None
        ) -> tuple[float, int]:
    """Runs command with its stdout in a file, its stderr in another (None: in the same, as pytest's
    terminal shows them); returns the wall time and the exit status."""
    started = time.perf_counter()
    with stdout.open("w") as out:
        if stderr is None:
            status = subprocess.run(command, cwd=cwd, env=env, stdout=out, stderr=subprocess.STDOUT).returncode
        else:
            with stderr.open("w") as err:
                status = subprocess.run(command, cwd=cwd, env=env, stdout=out, stderr=err).returncode
    return time.perf_counter() - started, status


def plugin_args(python: str, env: dict[str, str]) -> list[str]:
    """`-p` loads the plugin from the worktree unless jaxlint is installed (its entry point loads it)."""
    # Run from / : in a checkout of jaxlint, the folder's own jaxlint.egg-info would answer.
    installed = subprocess.run([python, "-c", "import importlib.metadata as m; m.distribution('jaxlint')"],
                               env=env, capture_output=True, cwd="/").returncode == 0
    return [] if installed else ["-p", "jaxlint.pytest_plugin.hooks"]


def summary_lines(log: Path) -> list[str]:
    """jaxlint's summary lines in a log (what it linted and traced), without the seconds spent."""
    if not log.exists():
        return []
    lines = log.read_text(errors="replace").splitlines()
    kept = [line for line in lines if line.startswith("jaxlint: ") or " files checked, " in line]
    return [re.sub(r" \([0-9.]+ s tracing after the tests\)", "", line) for line in kept]


def outcome(log: Path) -> str:
    lines = log.read_text(errors="replace").splitlines()
    return next((line for line in reversed(lines) if " in " in line and ("passed" in line or "failed" in line)),
                "").strip("= ")


def measure(args: argparse.Namespace) -> None:
    out = Path(args.out).resolve()
    out.mkdir(parents=True, exist_ok=True)
    # JAX_PLATFORMS=cpu unless set: with libtpu installed (a TPU target needs it) and no chip, JAX would
    # look for a TPU first in the tests' process (docs/target.md, Limits); the libraries run on the CPU.
    env = {"JAX_PLATFORMS": "cpu", **os.environ, "PYTHONPATH": str(Path(args.worktree).resolve())}
    plugin = plugin_args(args.python, env)
    target_check = ["--target", args.target] if args.target else []
    target_pytest = ["--jaxlint-target", args.target] if args.target else []
    summary: dict[str, Any] = {"worktree": str(Path(args.worktree).resolve()), "target": args.target or None,
                               "libraries": {}}
    if (out / "summary.json").exists():  # a run of some libraries (--only) adds to the others'
        summary["libraries"] = json.loads((out / "summary.json").read_text())["libraries"]
    chosen = args.only.split(",") if args.only else list(LIBRARIES)
    for name in chosen:
        folder, package, tests = LIBRARIES[name]
        lib = Path(args.libs) / folder
        check_out = out / f"{name}.check.json"
        check_time, check_status = run([args.python, "-m", "jaxlint", "check", "--isolated", "--no-cache",
                                        "--output-format", "json", "--exit-zero", *target_check, package], lib, env,
                                       check_out,
                                       out / f"{name}.check.log")
        report = out / f"{name}.pytest.json"
        report.unlink(missing_ok=True)
        slice_ = [t.format(lib=lib, tests=args.tests) for t in tests]
        pytest_log = out / f"{name}.pytest.log"
        pytest_time, pytest_status = run([args.python, "-m", "pytest", "-p", "no:cacheprovider", *plugin, "-q",
                                          "--color=no", "--jaxlint", "--jaxlint-exit-zero", "--jaxlint-report",
                                          str(report), *target_pytest, *slice_], lib, env, pytest_log)
        if args.plain:  # the same slice without the plugin, right after: the plugin's cost
            plain_time, plain_status = run([args.python, "-m", "pytest", "-p", "no:cacheprovider", "-q", "--color=no",
                                            *slice_], lib, env, out / f"{name}.plain.log")
        entry = {"check": {"seconds": round(check_time, 1), "status": check_status,
                           "findings": len(findings_of(check_out)), "summary": summary_lines(out / f"{name}.check.log")},
                 "pytest": {"seconds": round(pytest_time, 1), "status": pytest_status, "slice": slice_,
                            "findings": len(findings_of(report)), "outcome": outcome(pytest_log),
                            "summary": summary_lines(pytest_log)}}
        if args.plain:
            entry["plain"] = {"seconds": round(plain_time, 1), "status": plain_status,
                              "outcome": outcome(out / f"{name}.plain.log"),
                              "plugin_ratio": round(pytest_time / max(plain_time, 1e-3), 2)}
        summary["libraries"][name] = entry
        print(name, json.dumps(entry), flush=True)
        (out / "summary.json").write_text(json.dumps(summary, indent=1) + "\n")


def findings_of(path: Path) -> list[dict[str, Any]]:
    if not path.exists():
        return []
    text = path.read_text()
    return json.loads(text) if text.strip() else []


def normalized(name: str, finding: dict[str, Any], lib: str) -> tuple:
    """The parts of a finding that must not change, with the library's absolute folder taken out."""
    def local(text: str) -> str:
        return text.replace(lib + os.sep, "").replace(lib, ".")

    fix = finding.get("fix")
    fix_key = None
    if fix:
        fix_key = (fix.get("applicability"), local(fix.get("message") or ""),
                   local(json.dumps(fix.get("edits"), sort_keys=True)))
    end = finding.get("end_location") or {}
    return (name, local(finding["filename"]), finding["location"]["row"], finding["location"]["column"],
            end.get("row"), end.get("column"), finding["code"], local(finding["message"]), fix_key)


def compare(before: Path, after: Path, libs: str) -> int:
    differences = 0
    for name, (folder, _, _) in LIBRARIES.items():
        lib = str((Path(libs) / folder).resolve())
        for kind in ("check", "pytest"):
            a_path, b_path = before / f"{name}.{kind}.json", after / f"{name}.{kind}.json"
            if not a_path.exists() and not b_path.exists():
                continue
            if not (a_path.exists() and b_path.exists()):  # a run left out or crashed
                print(f"{name} {kind}: no findings file in {before if not a_path.exists() else after}")
                differences += 1
                continue
            a = Counter(normalized(name, f, lib) for f in findings_of(a_path))
            b = Counter(normalized(name, f, lib) for f in findings_of(b_path))
            only_a, only_b = a - b, b - a
            print(f"{name} {kind}: {sum(a.values())} before, {sum(b.values())} after, "
                  f"{sum(only_a.values())} only before, {sum(only_b.values())} only after")
            for label, rows in (("-", only_a), ("+", only_b)):
                for row in sorted(rows.elements(), key=repr):
                    print(f"  {label} {row}")
            differences += sum(only_a.values()) + sum(only_b.values())
            lines_a, lines_b = summary_lines(before / f"{name}.{kind}.log"), summary_lines(after / f"{name}.{kind}.log")
            if lines_a != lines_b:  # what was linted and traced: a difference there is one of behaviour too
                print(f"  summary before: {lines_a}\n  summary after:  {lines_b}")
                differences += 1
    print("identical" if not differences else f"{differences} differences")
    return 1 if differences else 0


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("worktree", nargs="?")
    parser.add_argument("out", nargs="?")
    parser.add_argument("--compare", nargs=2, metavar=("BEFORE", "AFTER"))
    parser.add_argument("--libs", default="/tmp/libs")
    parser.add_argument("--tests", default="/tmp/measure/tests")
    parser.add_argument("--python", default=sys.executable)
    parser.add_argument("--only", default="", help="comma-separated library names (default: all six)")
    parser.add_argument("--target", default="",
                        help="jaxlint's compile target (check --target, pytest --jaxlint-target); default: none passed")
    parser.add_argument("--plain", action="store_true",
                        help="also run each slice without the plugin (OUT/LIB.plain.log): the plugin's cost")
    args = parser.parse_args()
    if args.compare:
        sys.exit(compare(Path(args.compare[0]), Path(args.compare[1]), args.libs))
    if not (args.worktree and args.out):
        parser.error("WORKTREE and OUT are required unless --compare")
    measure(args)


if __name__ == "__main__":
    main()
