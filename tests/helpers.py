"""Small helpers the rule tests share."""
from __future__ import annotations

import atexit
import contextlib
import functools
import importlib
import io
import json
import os
import re
import shutil
import sys
import tempfile
import threading
import warnings
from collections.abc import Iterator
from pathlib import Path
from typing import Any
from unittest import mock

from jaxlint.config import DEFAULT_TIMEOUT
from jaxlint.engine.check import check
from jaxlint.engine.results import CheckResult
from jaxlint.model import Finding, Job, Result
from jaxlint.rules import Rule, RuleInfo


def libtpu_version() -> str:
    """The installed libtpu's version, "" without one."""
    import importlib.metadata

    try:
        return importlib.metadata.version("libtpu")
    except importlib.metadata.PackageNotFoundError:
        return ""


def skip_without_libtpu(why: str) -> Any:
    """Skip without libtpu (CI's older JAX may lack it): ``why`` says what the test compiles for a TPU."""
    import importlib.util

    import pytest

    return pytest.mark.skipif(importlib.util.find_spec("libtpu") is None, reason=f"libtpu is not installed: {why}")


def skip_unless_libtpu_0042(what: str) -> Any:
    """Skip unless libtpu is 0.0.42 (JAX 0.10.2's, the chip's in tpu-facts.md): the test's figures
    (``what``: "sizes", "layouts") are that compiler's; libtpu 0.0.2 (JAX 0.4.35) decides others."""
    import pytest

    version = libtpu_version()
    return pytest.mark.skipif(not version.startswith("0.0.42"),
                              reason=f"the cases' {what} are libtpu 0.0.42's (JAX 0.10.2); this is libtpu "
                                     f"{version or 'missing'}")


def write(folder: Path, name: str, text: str) -> Path:
    """``folder/name.py`` holding ``text``."""
    path = folder / f"{name}.py"
    path.write_text(text, encoding="utf-8")
    return path


def gone(pid: int) -> bool:
    """No such process, or a zombie nobody reaped yet (a container's init may not)."""
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return True
    except PermissionError:  # the pid is another user's now
        return False
    try:
        with open(f"/proc/{pid}/stat") as handle:
            return handle.read().rsplit(")", 1)[1].split()[0] == "Z"
    except OSError:
        return True


def with_plugin_autoload(env: dict[str, str]) -> dict[str, str]:
    """``env`` for a pytest session that loads its plugins as a user's does, through their entry
    points (conftest.py's inner_pytest_sessions_load_only_jaxlints_plugin turns that off)."""
    return {k: v for k, v in env.items() if k not in ("PYTEST_DISABLE_PLUGIN_AUTOLOAD", "PYTEST_PLUGINS")}


def expected_markers(module: str) -> set[tuple[str, int]]:
    """(code, line) of every ``# expect JXnnn`` comment: the findings a check must give, exactly."""
    return {(m.group(1), n) for n, line in enumerate(module.splitlines(), 1)
            for m in [re.search(r"# expect (JX\d+)", line)] if m}


def assert_analyzed(result: CheckResult, functions: int) -> None:
    """Guards the quiet tests: every function was traced, no analysis failure hides a finding."""
    assert result.skipped == []
    assert result.traced == functions
    assert not [f for f in result.findings if f.code.startswith("JX9")]


# ---------------------------------------------------------------------------------------------
# The pipeline without the worker process.
#
# A check starts a worker process that imports JAX (~1 s) before it analyzes anything. Tests whose
# subject is a rule's findings, messages, spans or fixes run the same pipeline with the worker's
# job function called in the test process instead: ``check_in_process`` below. Tests whose
# subject is the worker or the process boundary (crashes, timeouts, hangs, isolation between
# modules, what the user's code prints, --fix writing files, the command line) keep the real one.


class InProcessPool:
    """Stand-in for ``jaxlint.engine.pool.WorkerPool`` that analyzes in the test process.

    Same interface as the real pool (``(timeout)``, ``run(job) -> Result``, ``prestart()``, ``close()``, a context
    manager; attributes ``timeout``, ``jax_import``, ``started``). ``run`` does what the worker does
    with a job line: the job and the result go through JSON as they would through the pipes, and
    ``jaxlint.worker.process.analyze_module`` runs in between (it puts JAX's configuration back
    and forgets the analyzed project's modules afterwards), with the worker's settings: no
    bytecode written, the default warning filters, ``exclude_from_user_frames`` called once.
    Analyses run one at a time (check's lanes are threads here). What it cannot do: enforce
    ``timeout``, survive a crash or ``os._exit``, hide what the user's code writes to file
    descriptor 1 (``print`` is discarded, as the worker's stdout is /dev/null), start from a fresh
    interpreter. ``started`` counts the workers the real pool would have started, so
    ``workers_started`` reads the same; tests that assert on it keep the real pool anyway.
    """

    _lock = threading.Lock()  # check() runs one lane per pool in threads: one analysis at a time
    _prepared = False

    def __init__(self, timeout: float = DEFAULT_TIMEOUT) -> None:
        self.timeout = timeout
        self.jax_import = 0.0
        self.started = 0
        self._live = False  # a "worker" is up: started counts like the real pool's

    @classmethod
    def _prepare(cls) -> None:
        """What the worker does once at its start, before any job."""
        if cls._prepared:
            return
        if "jax" not in sys.modules:  # tracing needs no accelerator (the worker's setting), read at import
            saved = os.environ.get("JAX_PLATFORMS")
            os.environ.setdefault("JAX_PLATFORMS", "cpu")
            try:
                importlib.import_module("jax")
            finally:  # not for the subprocesses later tests start
                if saved is None:
                    del os.environ["JAX_PLATFORMS"]
        from jaxlint.jaxapi import tracebacks

        tracebacks.exclude_from_user_frames()
        cls._prepared = True

    def run(self, job: Job) -> Result:
        from jaxlint.worker.process import analyze_module

        with self._lock:
            if not self._live:
                self.started += 1
                self._live = True
            self._prepare()
            sent = Job.from_json(json.loads(json.dumps(job.to_json())))
            bytecode = sys.dont_write_bytecode
            sys.dont_write_bytecode = True  # as in the worker: no __pycache__ in the analyzed tree
            try:
                # print() at import goes nowhere, as into the worker's /dev/null (not a report on stdout)
                with warnings.catch_warnings(), contextlib.redirect_stdout(io.StringIO()):
                    _default_warning_filters()  # the worker's, not pytest's (-W error would raise)
                    result = analyze_module(sent)
            finally:
                sys.dont_write_bytecode = bytecode
            return Result.from_json(json.loads(json.dumps(result.to_json())))

    def prestart(self, devices: int | None = None) -> None:
        """The real pool starts a worker ahead of its first job; this one starts at its first run."""

    def close(self) -> None:
        self._live = False

    def kill(self) -> None:
        self.close()

    def __enter__(self) -> InProcessPool:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()


def _default_warning_filters() -> None:
    """The warning filters of a fresh interpreter without -W, as the worker process has them."""
    warnings.resetwarnings()
    for category in (ResourceWarning, ImportWarning, PendingDeprecationWarning, DeprecationWarning):
        warnings.filterwarnings("ignore", category=category)
    warnings.filterwarnings("default", category=DeprecationWarning, module="__main__")


@contextlib.contextmanager
def in_process_workers() -> Iterator[None]:
    """While inside: every pool ``check``, the fixer and ``explain`` make is an InProcessPool."""
    import jaxlint.engine.fixer
    import jaxlint.engine.pool
    import jaxlint.explain.run

    # check imports WorkerPool from its module when it needs one; the fixer and explain at their top.
    with mock.patch.object(jaxlint.engine.pool, "WorkerPool", InProcessPool), \
            mock.patch.object(jaxlint.engine.fixer, "WorkerPool", InProcessPool), \
            mock.patch.object(jaxlint.explain.run, "WorkerPool", InProcessPool):
        yield


def check_in_process(paths: list[str], rules: list[type[Rule]] | list[RuleInfo], **kwargs: Any) -> CheckResult:
    """``jaxlint.engine.check.check`` with the analysis (and the fixer's verification) run in the
    test process by InProcessPool: the same findings without a worker's JAX import."""
    with in_process_workers():
        return check(paths, rules, **kwargs)


def check_project(root: Path, modules: dict[str, str]) -> CheckResult:
    """``modules`` (name: source) written under ``root`` beside an empty ``[tool.jaxlint]``, then
    checked in this process with every rule and the project's configuration."""
    from jaxlint.config import load_config
    from jaxlint.rules import all_rules

    paths = [write(root, name, source) for name, source in modules.items()]
    (root / "pyproject.toml").write_text("[tool.jaxlint]\n")
    return check_in_process([str(path) for path in paths], all_rules(), config=load_config([str(paths[0])]))


def traced_signatures(result: CheckResult) -> dict[str, str]:
    """Each traced target's signature, by qualname."""
    return {t.target: t.signature for fa in result.files for t in fa.result.traced}


def skip_reasons(result: CheckResult) -> dict[str, str]:
    """Why each skipped target was not traced, by qualname."""
    return {s.target: s.reason for _, s in result.skipped}


# ---------------------------------------------------------------------------------------------
# Rule cases: tests/rules/JXnnn.py, or the folder tests/rules/JXnnn/ (see tests/rules/README.md).

CASES = Path(__file__).resolve().parent / "rules"
# ``# expect: JX401``, or ``# expect(jax>=0.7): JX401`` / ``# expect(jax<0.7): JX401`` where the
# finding's place depends on the JAX version (tests/rules/README.md).
_EXPECT = re.compile(r"#.*\bexpect(?:\(jax(>=|<)(\d+)\.(\d+)\))?: (JX\d+(?:, JX\d+)*)")
# Why a function was not traced, when no finding says it: a case must have none.
SILENT_SKIPS = ("no-arguments", "not-traceable", "not-found")


def case_source(code: str) -> Path:
    """The case file ``tests/rules/<code>.py``, else the case folder ``tests/rules/<code>/``."""
    path = CASES / f"{code}.py"
    return path if path.is_file() else CASES / code


def case_markers(root: Path) -> list[tuple[str, str, int]]:
    """(file relative to ``root``, code, line) of every ``# expect: JXnnn[, JXmmm]`` comment, once per
    code named: the findings a check of the case must give, exactly."""
    files = sorted(root.rglob("*.py")) if root.is_dir() else [root]
    return sorted((path.relative_to(root).as_posix() if root.is_dir() else path.name, code, number)
                  for path in files
                  for number, line in enumerate(path.read_text(encoding="utf-8").splitlines(), 1)
                  for match in [_EXPECT.search(line)] if match and _for_this_jax(match)
                  for code in match.group(4).split(", "))


def _for_this_jax(marker: re.Match[str]) -> bool:
    """Whether an ``expect`` marker applies to the installed JAX (a marker without a version does)."""
    if marker.group(1) is None:
        return True
    from jaxlint.jaxapi.version import JAX_VERSION

    at_least = JAX_VERSION[:2] >= (int(marker.group(2)), int(marker.group(3)))
    return at_least if marker.group(1) == ">=" else not at_least


def case_rules(folder: Path) -> list[RuleInfo]:
    """Every rule, as ``jaxlint check`` runs them, or those the case's pyproject.toml selects: a near
    miss of one rule that another reports is marked, and a near miss that fails to trace (JX601), or
    a rule raising on it (JX906), is reported, not quiet."""
    from jaxlint.config import load_config

    return load_config([str(folder)]).rules()


def copy_case(code: str, into: Path) -> Path:
    """The case copied into the empty folder ``into`` (the project root: a ``pyproject.toml`` with
    a ``[tool.jaxlint]`` table unless the case brings its own), which is returned."""
    source = case_source(code)
    if source.is_dir():
        shutil.copytree(source, into, dirs_exist_ok=True)
    else:
        shutil.copy(source, into / source.name)
    if not (into / "pyproject.toml").exists():
        (into / "pyproject.toml").write_text("[tool.jaxlint]\n", encoding="utf-8")
    return into


def check_case(code: str, into: Path, **kwargs: Any) -> CheckResult:
    """The case of ``code`` copied into ``into`` and checked in the test process, as a user's project.
    JAX's caches are cleared first: before JAX 0.7 a jitted ``jnp`` function traced earlier in the
    process (another test checking the same case) keeps that trace's traceback, and the findings
    would point at the other copy's lines."""
    import jax

    jax.clear_caches()
    copy_case(code, into)
    return check_in_process([str(into)], case_rules(into), **kwargs)


def case_line(code: str, text: str, file: str | None = None) -> int:
    """The number of the first line of the case (``file`` in a case folder) that contains ``text``."""
    source = case_source(code)
    path = source / file if file else source
    return next(n for n, line in enumerate(path.read_text(encoding="utf-8").splitlines(), 1) if text in line)


@functools.lru_cache(maxsize=None)
def checked_case(code: str) -> tuple[Path, CheckResult]:
    """``check_case`` once per test session (its project folder, its result): the case test and a
    rule's own tests of messages and spans read the same run. Callers must not change either."""
    root = Path(tempfile.mkdtemp(prefix=f"jaxlint-case-{code}-"))
    atexit.register(shutil.rmtree, root, True)
    return root, check_case(code, root)


def position(text: str, snippet: str) -> tuple[int, int]:
    """(1-based line, 0-based character column) of the first ``snippet`` in ``text``."""
    index = text.index(snippet)
    return text.count("\n", 0, index) + 1, index - (text.rfind("\n", 0, index) + 1)


def by_target(findings: list[Finding], code: str | None = None) -> dict[str, Finding]:
    """The findings (of ``code``, if given) by traced function, which must have one each."""
    found: dict[str, Finding] = {}
    for finding in findings:
        if code is None or finding.code == code:
            assert finding.target not in found, f"two findings for {finding.target}"
            found[finding.target] = finding
    return found


def fix_case_with_workers(code: str, into: Path) -> CheckResult:
    """The case copied into ``into`` and checked with --fix by the real worker: the fixes are
    written and verified in a fresh worker, through the process boundary."""
    copy_case(code, into)
    return check([str(into)], case_rules(into), fix=True)


def assert_case_fixed(code: str, root: Path, result: CheckResult, fixed: dict[str, tuple[str, str]],
                      fixless: list[str]) -> None:
    """``fix_case_with_workers`` fixed the functions of ``fixed`` (name: (the expression it
    returns, after the fix)) and no other; checked again, what is left is ``fixless``'s findings."""
    assert set(by_target(result.fixed)) == set(fixed) and all(f.code == code for f in result.fixed)
    assert result.fix_rejected == []
    assert sorted(f.target for f in result.findings) == sorted(fixless)
    assert all(f.fix is None for f in result.findings)
    expected = case_source(code).read_text(encoding="utf-8")
    for before, after in fixed.values():
        assert f"    return {before}  # expect: {code}\n" in expected, before
        expected = expected.replace(f"    return {before}  #", f"    return {after}  #")
    assert (root / f"{code}.py").read_text(encoding="utf-8") == expected


@functools.lru_cache(maxsize=None)
def _collective_timeout_flag() -> str:
    """XLA's flag that gives CPU collectives 600 s to meet instead of 40, where this jaxlib knows
    it (newer than 0.4.35: an unknown flag in XLA_FLAGS aborts the process, hence the probe)."""
    import subprocess

    flag = "--xla_cpu_collective_call_terminate_timeout_seconds=600"
    env = {**os.environ, "XLA_FLAGS": flag, "JAX_PLATFORMS": "cpu"}
    probe = subprocess.run([sys.executable, "-c", "import jax; jax.devices()"], env=env, capture_output=True,
                           timeout=300)
    return flag if probe.returncode == 0 else ""


def forced_devices_flags(count: int) -> str:
    """XLA_FLAGS for a subprocess that runs sharded programs on ``count`` CPU devices. On 2 busy
    cores, 8 device threads can take longer than XLA's 40 s to meet at a collective, and XLA then
    aborts the process: the flag above gives them time."""
    return f"--xla_force_host_platform_device_count={count} {_collective_timeout_flag()}".strip()
