"""``jaxlint check --rerun-tests``: for each module whose test-run entry (engine/store.py) is stale,
run only the tests that reached its functions, with ``pytest --jaxlint`` in a subprocess from the
configuration's root, so the store holds fresh results when check reports. The session gets
``rerun-timeout`` seconds per stale module; one that runs out is said, and its functions stay
counted as changed since the test run."""
from __future__ import annotations

import os
import subprocess
import sys
import time
from dataclasses import dataclass
from typing import TYPE_CHECKING, Callable, Sequence, TextIO

from jaxlint.engine.cache import ResultCache
from jaxlint.engine.results import CheckResult
from jaxlint.engine.store import load_store, slot_material
from jaxlint.processes import kill_group
from jaxlint.scan import discover
from jaxlint.text import relative

if TYPE_CHECKING:
    from jaxlint.config import Config


@dataclass
class Rerun:
    """The tests run again for the stale modules, and how it went."""

    paths: list[str]
    tests: list[str]
    seconds: float
    outcome: str  # "ran", "timeout", "error"
    detail: str = ""


def stale_in_store(paths: Sequence[str], config: Config, codes: Sequence[str],
                   cache: ResultCache) -> list[tuple[str, list[str]]]:
    """(module, the node ids that reached its functions) for each module under ``paths`` whose
    test-run entry is stale, read before any worker starts (so its tests run while check traces);
    a test whose file is gone since is left out."""
    shared = slot_material(cache, config)
    stale = []
    for path in discover.discover(list(paths), config, missing=[]):  # the check reports those
        stored = load_store(cache, config, codes, os.path.abspath(path), shared)
        if stored is not None and not stored.fresh:
            tests = list(dict.fromkeys(t for f in stored.functions for t in f.tests if _runnable(t, config.root)))
            if tests:
                stale.append((path, tests))
    return stale


def _runnable(test: str, root: str) -> bool:
    """A node id pytest can take from ``root``: its file still exists (one test file deleted or
    renamed since the test run would fail the whole session with a usage error)."""
    path = test.partition("::")[0]
    return bool(path) and os.path.isfile(os.path.join(root, path))


def check_rerunning_stale(run_check: Callable[[bool], CheckResult], stale: list[tuple[str, list[str]]],
                          cache: ResultCache, root: str, timeout: float, out: TextIO, *,
                          again: bool = False, yield_cpu: bool = False) -> tuple[CheckResult, Rerun | None]:
    """``check --rerun-tests`` and the server's save with ``rerun-tests = true``: the tests of the
    ``stale`` modules (``stale_in_store``) run in one pytest session (JAX is imported once),
    ``timeout`` seconds per module (``rerun-timeout``), while ``run_check(fixing)`` checks once without fixes (its
    workers trace what changed meanwhile); then, when the tests ran or ``again`` asks for it (fixes
    wait for the fresh results), it checks once more, what did not change coming from the cache.
    Says on ``out`` what ran. With ``yield_cpu`` (the command line's check, whose process ends
    with the run), this process and the workers it starts from then on run at a lower CPU priority
    than the tests: the report waits for the tests, which share the cores with check's own tracing
    (measured: no clear gain on a quiet machine, where check's first pass is what takes longest;
    docs/performance.md). The editor server keeps its priority (its worker is already running, and
    it outlives the save)."""
    if not stale:
        return run_check(True), None
    paths = [path for path, _ in stale]
    tests = list(dict.fromkeys(t for _, module_tests in stale for t in module_tests))
    names = ", ".join(relative(p) for p in paths[:3]) + (", ..." if len(paths) > 3 else "")
    out.write(f"jaxlint: {len(paths)} module{'s' * (len(paths) != 1)} changed since the test run ({names}): "
              f"running the {len(tests)} test{'s' * (len(tests) != 1)} that reached "
              f"{'them' if len(paths) != 1 else 'it'} again (pytest --jaxlint)\n")
    limit = timeout * len(paths)
    tests_run = _TestRun(paths, tests, root, cache)
    if yield_cpu:
        _lower_priority()
    try:
        result = run_check(False)
        rerun = tests_run.finish(limit)
    except BaseException:  # Ctrl-C, or jaxlint's own error: the tests go with check
        tests_run.stop()
        raise
    if rerun.outcome == "timeout":
        out.write(f"jaxlint: the tests did not finish within the time limit ({timeout:g} s per module, --rerun-timeout, "
                  f"{limit:g} s in all): {names} stay changed since the test run; run "
                  f"`pytest --jaxlint {' '.join(tests)}` to lint them\n")
    elif rerun.outcome == "error":
        out.write(f"jaxlint: the tests that reached {names} could not run: {rerun.detail}\n")
    else:
        out.write(f"jaxlint: ran them in {rerun.seconds:.1f} s\n")
    if rerun.outcome == "ran" or again:
        result = run_check(True)
    return result, rerun


NICENESS = 10  # added to check's own, after the tests start (os.nice: a process can only lower its priority)


def _lower_priority() -> None:
    try:
        os.nice(NICENESS)
    except (AttributeError, OSError):  # Windows has no nice; a refused change only costs time
        pass


class _TestRun:
    """``pytest --jaxlint TESTS`` from ``root``, started at once, in a session of its own: on a
    timeout the whole group goes (pytest-xdist's workers too)."""

    def __init__(self, paths: list[str], tests: list[str], root: str, cache: ResultCache) -> None:
        self.paths, self.tests = paths, tests
        command = [sys.executable, "-m", "pytest", "--jaxlint", "--jaxlint-exit-zero", "-q", *tests]
        # The cache folder goes by the environment, not --jaxlint-cache-dir: pytest takes an
        # existing path among its arguments, option values included, into its choice of rootdir
        # and configuration file. The session must be the one the user gets by hand (measured on
        # equinox: the cache folder in its tree made pytest take its pyproject's addopts, run-time
        # type checks, 2.5 s slower).
        environment = {**os.environ, "JAXLINT_CACHE_DIR": cache.folder}
        self.started = time.perf_counter()
        self.process = subprocess.Popen(command, cwd=root, env=environment, stdout=subprocess.PIPE,
                                        stderr=subprocess.STDOUT, text=True, start_new_session=True)

    def finish(self, limit: float) -> Rerun:
        """Wait for the tests, at most ``limit`` seconds after they started."""
        remaining = max(0.0, limit - (time.perf_counter() - self.started))
        try:
            output, _ = self.process.communicate(timeout=remaining)
        except subprocess.TimeoutExpired:
            self.stop()
            return Rerun(self.paths, self.tests, time.perf_counter() - self.started, "timeout")
        seconds = time.perf_counter() - self.started
        # 0 passed, 1 some failed: either way the plugin stored what it linted.
        if self.process.returncode in (0, 1):
            return Rerun(self.paths, self.tests, seconds, "ran")
        tail = " / ".join(line for line in (output or "").strip().splitlines()[-3:])
        return Rerun(self.paths, self.tests, seconds, "error",
                     f"pytest exited with status {self.process.returncode}: {tail}")

    def stop(self) -> None:
        kill_group(self.process.pid)
        self.process.communicate()
