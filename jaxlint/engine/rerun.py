"""``jaxlint check --rerun-tests``: for each module whose test-run entry (engine/store.py) is stale,
run only the tests that reached its functions, with ``pytest --jaxlint`` in a subprocess from the
configuration's root, so the store holds fresh results when check reports. A module's tests get
the check's time limit per module; one that runs out is said, and its functions stay counted as
changed since the test run."""
from __future__ import annotations

import os
import subprocess
import sys
import time
from dataclasses import dataclass
from typing import Callable, TextIO

from jaxlint.engine.cache import ResultCache
from jaxlint.engine.results import CheckResult
from jaxlint.processes import kill_group
from jaxlint.text import relative


@dataclass
class Rerun:
    """The tests run again for the stale modules, and how it went."""

    paths: list[str]
    tests: list[str]
    seconds: float
    outcome: str  # "ran", "timeout", "error"
    detail: str = ""


def stale_tests(result: CheckResult) -> list[tuple[str, list[str]]]:
    """(module, the node ids that reached its functions) for each module whose entry is stale."""
    stale = []
    for analysis in result.files:
        stored = analysis.stored
        if stored is not None and not stored.fresh:
            stale.append((analysis.source.path, list(dict.fromkeys(t for f in stored.functions for t in f.tests))))
    return stale


def rerun_stale(result: CheckResult, cache: ResultCache, timeout: float, out: TextIO) -> Rerun | None:
    """Run the tests of the stale modules (see the module docstring) in one pytest session (JAX
    is imported once), ``timeout`` seconds per module; says on ``out`` what ran. None: nothing to run."""
    root = result.config.root if result.config is not None else os.getcwd()
    stale = [(path, tests) for path, tests in stale_tests(result) if tests]
    if not stale:
        return None
    paths = [path for path, _ in stale]
    tests = list(dict.fromkeys(t for _, module_tests in stale for t in module_tests))
    names = ", ".join(relative(p) for p in paths[:3]) + (", ..." if len(paths) > 3 else "")
    out.write(f"jaxlint: {len(paths)} module{'s' * (len(paths) != 1)} changed since the test run ({names}): "
              f"running the {len(tests)} test{'s' * (len(tests) != 1)} that reached "
              f"{'them' if len(paths) != 1 else 'it'} again (pytest --jaxlint)\n")
    limit = timeout * len(paths)
    run = _run(paths, tests, root, cache, limit)
    if run.outcome == "timeout":
        out.write(f"jaxlint: the tests did not finish within the time limit ({timeout:g} s per module, --timeout, "
                  f"{limit:g} s in all): {names} stay changed since the test run; run "
                  f"`pytest --jaxlint {' '.join(tests)}` to lint them\n")
    elif run.outcome == "error":
        out.write(f"jaxlint: the tests that reached {names} could not run: {run.detail}\n")
    else:
        out.write(f"jaxlint: ran them in {run.seconds:.1f} s\n")
    return run


def check_rerunning_stale(run_check: Callable[[bool], CheckResult], cache: ResultCache, timeout: float,
                          out: TextIO, *, again: bool = False) -> tuple[CheckResult, Rerun | None]:
    """``run_check(fixing)`` once without fixes, the tests of the stale modules again, then once more
    (what did not change comes from the cache) when they ran or ``again`` asks for it (fixes wait for
    the fresh results): ``check --rerun-tests`` and the server's save with ``rerun-tests = true``."""
    result = run_check(False)
    rerun = rerun_stale(result, cache, timeout, out)
    if (rerun is not None and rerun.outcome == "ran") or again:
        result = run_check(True)
    return result, rerun


def _run(paths: list[str], tests: list[str], root: str, cache: ResultCache, timeout: float) -> Rerun:
    command = [sys.executable, "-m", "pytest", "--jaxlint", "--jaxlint-exit-zero", "-q",
               "--jaxlint-cache-dir", cache.folder, *tests]
    started = time.perf_counter()
    # A session of its own: on a timeout the whole group goes (pytest-xdist's workers too).
    process = subprocess.Popen(command, cwd=root, stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True,
                               start_new_session=True)
    try:
        output, _ = process.communicate(timeout=timeout)
    except subprocess.TimeoutExpired:
        kill_group(process.pid)
        process.communicate()
        return Rerun(paths, tests, time.perf_counter() - started, "timeout")
    except BaseException:  # Ctrl-C: the tests go with check
        kill_group(process.pid)
        process.wait()
        raise
    seconds = time.perf_counter() - started
    # 0 passed, 1 some failed: either way the plugin stored what it linted.
    if process.returncode in (0, 1):
        return Rerun(paths, tests, seconds, "ran")
    tail = " / ".join(line for line in (output or "").strip().splitlines()[-3:])
    return Rerun(paths, tests, seconds, "error", f"pytest exited with status {process.returncode}: {tail}")
