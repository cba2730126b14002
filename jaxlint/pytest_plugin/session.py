"""One ``pytest --jaxlint`` run: watch the calls while the tests run, lint them when they are
done, report in jaxlint's formats with ``jaxlint check``'s configuration, selection,
per-file-ignores and suppression comments.

Under pytest-xdist each worker watches and lints its own tests and hands its findings to the
controller (``workeroutput``, as pytest-cov hands over its data), which merges and reports. Test
outcomes are never changed: only the session's exit status, from 0 to 1, when findings remain.
"""
from __future__ import annotations

import contextlib
import io
import json
import os
import sys
import time
from typing import Any

import pytest

import jaxlint
from jaxlint import read_digests
from jaxlint.config import Config, ConfigError, load_config
from jaxlint.drivers import results
from jaxlint.drivers.imported_sources import ImportedSources
from jaxlint.drivers.lint import lint_calls
from jaxlint.drivers.results import Linted, Ran
from jaxlint.drivers.runtime import RunWatcher, run_sources
from jaxlint.drivers.watched_calls import CallWatcher, ProjectFiles
from jaxlint.drivers.watched_imports import WatchedImports, imported_already
from jaxlint.engine.results import CheckResult
from jaxlint.engine.store import cache_for, write_store
from jaxlint.model import Finding
from jaxlint.pytest_plugin.read_tests import note_conftest, note_file
from jaxlint.report import ENVIRONMENT_VARIABLE, FORMATS, OutputError, check_writable, choose, json_array, write_file
from jaxlint.rules import rule_classes
from jaxlint.text import relative

WORKER_OUTPUT = "jaxlint"  # the key of xdist's workeroutput holding a worker's findings
PATIENCE = 3  # runs of a parametrized test in a row that show nothing new before it is no longer watched


def from_root(nodeid: str, path: str | None, rootdir: str, root: str) -> str:
    """``nodeid`` as pytest takes it when run from ``root``: its file (``path``, the item's) relative
    to ``root`` (a test folder outside the project, as ``pytest --jaxlint ../tests``, gets a
    relative path up), then the rest of the id. The file comes from the item, not from the id's
    own path, which is relative to pytest's ``rootdir`` and was seen empty (``::test_x``) for a
    test outside it."""
    file, sep, rest = nodeid.partition("::")
    if path:
        return os.path.relpath(path, root) + sep + rest
    if os.path.realpath(rootdir) == os.path.realpath(root):
        return nodeid
    return os.path.relpath(os.path.join(rootdir, file), root) + sep + rest


class JaxlintSession:
    """Registered by hooks.py when ``--jaxlint`` is given: before conftest.py files are imported
    (``early``), so the project's modules are imported through WatchedImports."""

    def __init__(self, config: Any, early: bool) -> None:
        self.pytest_config = config
        self.started = time.time()  # before the project's import (early): what the store's digests vouch for
        try:
            self.config: Config = load_config([str(config.invocation_params.dir)])
        except ConfigError as error:
            raise pytest.UsageError(f"jaxlint: {error}") from None
        self.output_format = self.config.output_format  # the options are read in pytest_configure
        self.report_path: str | None = None
        self.coverage_path: str | None = None
        self.rules = rule_classes(r.code for r in self.config.rules())
        if not self.rules:
            raise pytest.UsageError(f"jaxlint: no rule is selected ({self.config.emptied_selection()}), "
                                    "so nothing would be checked")
        own = os.path.dirname(os.path.realpath(jaxlint.__file__))
        files = ProjectFiles(self.config.root, lambda path: path == own or self.config.excluded(path),
                             list(config.getini("python_files")))
        # A project module imported already makes no call: only a profile hook sees its functions.
        self.imported_before = imported_already(files.__contains__) if early else []
        self.other_loaders: list[str] = []  # project modules WatchedImports could not compile (xdist: all workers')
        self.imports: WatchedImports | None = None
        run_events = run_sources(self.rules)  # before the project's import: its loops may be counted
        if early and not self.imported_before:
            self.imports = WatchedImports(files.__contains__)
        self.watcher = CallWatcher(files, profile=self.imports is None)
        # The project's sources as imported: what the traces after the tests and the report read.
        self.sources = self.imports.sources if self.imports is not None else ImportedSources()
        self.sources.started = self.started
        if self.imports is not None:
            self.imports.install(self.watcher.notify)
        # JAX's run-time events (compiles) for the run-time rules, per test: only when one is selected.
        self.runtime = RunWatcher(files.__contains__, run_events) if run_events else None
        self.findings: list[Finding] = []
        self.functions: list[Linted] = []
        self.ran: list[Ran] = []
        self.not_compiled: list[str] = []  # why programs were not compiled for the target (lint.Outcome)
        self.depends: dict[str, set[str]] = {}  # module -> the project files its traces ran (lint.Outcome)
        self.stored = 0  # test-run store entries written (engine/store.py)
        self.read: list[dict[str, str]] = []  # the project files' digests as read (xdist: each worker's)
        self.tests_read: dict[str, str] = {}  # the test modules' and conftest.py files' (read_tests.py)
        self.read.append(self.tests_read)
        self.result: CheckResult | None = None
        self.exit_status_changed = False
        self.write_error: str | None = None
        self.seconds = 0.0  # spent tracing and running the rules after the tests (xdist: summed)
        self.watch_all = False
        self.unrevealing: dict[tuple[str, str], int] = {}  # test function -> runs in a row that showed nothing new
        self.watched = self.unwatched = 0  # tests (xdist: summed)

    @property
    def is_worker(self) -> bool:
        """An xdist worker, which hands its findings to the controller (``workerinput`` is set
        after the early hooks)."""
        return hasattr(self.pytest_config, "workerinput")

    def _choose_target(self, name: str | None) -> None:
        """--jaxlint-target over the configuration's ``target``; a bad one is a usage error."""
        if name is None:
            return
        from jaxlint.chips import TargetError, check_installed, parse_target

        try:
            target = parse_target(name)
            check_installed(target)
        except TargetError as error:
            self._uninstall()
            raise pytest.UsageError(f"jaxlint: --jaxlint-target: {error}") from None
        self.config.target = target.name

    def pytest_configure(self, config: Any) -> None:
        """The options, which ``config.getoption`` gives only once the early hooks are done."""
        try:
            self.output_format = choose(config.getoption("jaxlint_output_format"),
                                        os.environ.get(ENVIRONMENT_VARIABLE), self.config.output_format)
            self.report_path = config.getoption("jaxlint_report")
            self.coverage_path = config.getoption("jaxlint_coverage_report")
            self.watch_all = bool(config.getoption("jaxlint_watch_all"))
            self._choose_target(config.getoption("jaxlint_target"))
            for path in (self.report_path, self.coverage_path):
                if path and not self.is_worker:
                    check_writable(path)
        except OutputError as error:
            self._uninstall()
            raise pytest.UsageError(f"jaxlint: {error}") from None

    def pytest_unconfigure(self, config: Any) -> None:
        self._uninstall()

    def _uninstall(self) -> None:
        self.watcher.stop()
        if self.runtime is not None:
            self.runtime.stop()
        if self.imports is not None:
            self.imports.uninstall()

    def pytest_sessionstart(self, session: Any) -> None:
        if self.imports is not None:
            self.imports.put_first()  # ahead of a finder a plugin installed in pytest_configure
        self.watcher.start()  # collection imports the project: calls made at import count too
        if self.runtime is not None:
            self.runtime.start()
            self.runtime.scope = "collection"

    def pytest_plugin_registered(self, plugin: Any, manager: Any) -> None:
        note_conftest(self.tests_read, plugin)  # historic: also those registered before this session

    @pytest.hookimpl(hookwrapper=True)
    def pytest_make_collect_report(self, collector: Any) -> Any:
        """A test module's bytes before pytest imports it and after: what its tests ran."""
        module = isinstance(collector, pytest.Module) and getattr(collector, "path", None) is not None
        if module:
            note_file(self.tests_read, str(collector.path))
        yield
        if module:
            note_file(self.tests_read, str(collector.path))

    def pytest_collection_finish(self, session: Any) -> None:
        self.watcher.stop()  # from here on, each test is watched or not (pytest_runtest_protocol)
        if self.runtime is not None:
            self.runtime.scope = None

    @pytest.hookimpl(hookwrapper=True)
    def pytest_runtest_protocol(self, item: Any, nextitem: Any) -> Any:
        """Watch a test unless the same test function, parametrized, showed nothing new the last
        ``PATIENCE`` times: the watching costs each Python call, and repeats rarely call new code."""
        test = (str(getattr(item, "path", "")), getattr(item, "originalname", item.name))
        watch = self.watch_all or self.unrevealing.get(test, 0) < PATIENCE
        # The store names the tests that reached each function, as `check --rerun-tests` runs
        # them: from the project's root, which need not be pytest's rootdir.
        nodeid = from_root(item.nodeid, str(getattr(item, "path", "") or "") or None, str(item.config.rootpath),
                           self.config.root)
        if watch:
            before = self.watcher.news
            self.watcher.test = nodeid
            self.watcher.start()
        try:
            # Compiles are watched in every test: JAX reports them, nothing is paid per call.
            with self.runtime.scoped(nodeid) if self.runtime is not None else contextlib.nullcontext():
                yield
        finally:
            if watch:
                self.watcher.stop()
                self.watcher.test = None
                self.watched += 1
                self.unrevealing[test] = 0 if self.watcher.news > before else self.unrevealing.get(test, 0) + 1
            else:
                self.unwatched += 1

    def pytest_sessionfinish(self, session: Any, exitstatus: int) -> None:
        self._uninstall()  # the watcher is off already after a collection that finished; not after one that failed
        if self.imports is not None:
            self.other_loaders += self.imports.other_loaders
            self.read.append(self.imports.read)
        if exitstatus == pytest.ExitCode.INTERNAL_ERROR:
            return  # pytest itself failed: no tracing now
        if exitstatus == pytest.ExitCode.INTERRUPTED and self.is_worker:
            return  # xdist stops its workers at once; the controller stores what they handed over
        if exitstatus == pytest.ExitCode.INTERRUPTED and self.watcher.functions:
            # As pytest-cov keeps the coverage of an interrupted run: what the tests reached is
            # linted and stored, unless the user stops that too.
            sys.stderr.write(f"\njaxlint: the tests were interrupted: linting the {len(self.watcher.functions)} "
                             "functions they called so far (Ctrl-C again skips it)\n")
        if self.runtime is not None:  # the tests' compiles, before jaxlint's own traces
            self.findings += self.runtime.findings(self.rules, self.config.settings())
        started = time.perf_counter()
        try:
            with self.imports.calling(self.watcher.notify) if self.imports is not None else contextlib.nullcontext():
                outcome = lint_calls(list(self.watcher.functions.values()), self.rules, self.config.settings(),
                                     self.watcher.files.__contains__, self.watcher.executed_files,
                                     read=self.sources.read)
        except KeyboardInterrupt:
            if exitstatus != pytest.ExitCode.INTERRUPTED:
                raise
            self.watcher.functions.clear()
            return  # stopped twice: nothing linted, nothing stored (earlier entries stay)
        self.seconds += time.perf_counter() - started
        self.findings += outcome.findings
        self.functions += outcome.functions
        self.ran += outcome.ran
        self.not_compiled += [why for why in outcome.not_compiled if why not in self.not_compiled]
        for path, files in outcome.depends.items():
            self.depends.setdefault(path, set()).update(files)
        self.watcher.functions.clear()  # they hold the calls' objects
        if self.is_worker:
            self.pytest_config.workeroutput[WORKER_OUTPUT] = json.dumps({
                "findings": [f.to_json() for f in self.findings],
                "functions": [f.to_json() for f in self.functions],
                "depends": {path: sorted(files) for path, files in self.depends.items()},
                "ran": [r.to_json() for r in self.ran], "seconds": self.seconds,
                "watched": self.watched, "unwatched": self.unwatched, "imported_before": self.imported_before,
                "other_loaders": self.other_loaders, "not_compiled": self.not_compiled,
                "read": read_digests.merged(self.read),
                "sources": self.sources.texts(f.path for f in self.findings),
                "changed": sorted(self.sources.changed)})
            return
        self._store()
        self.sources.judge(f.path for f in self.findings)  # a worker's finding's file may have changed there
        # Found against lines the code that ran did not have: left out, the summary says so.
        reported = [f for f in self.findings if os.path.abspath(f.path) not in self.sources.changed]
        self.result = results.settled(reported, [rule.code for rule in self.rules], self.config, self.functions,
                                      read=self.sources.read)
        try:
            if self.report_path:
                out = io.StringIO()
                json_array.write(self.result, out)
                write_file(self.report_path, out.getvalue())
            if self.coverage_path:
                write_file(self.coverage_path,
                           json.dumps(results.coverage_report(self.ran, self.functions), indent=2) + "\n")
        except OutputError as error:  # the folder went away during the run: say so, keep the session
            self.write_error = str(error)
        exit_zero = self.pytest_config.getoption("jaxlint_exit_zero")
        if self.result.findings and session.exitstatus == 0 and not exit_zero:
            session.exitstatus = pytest.ExitCode.TESTS_FAILED
            self.exit_status_changed = True

    @pytest.hookimpl(optionalhook=True)
    def pytest_testnodedown(self, node: Any, error: Any) -> None:
        """xdist, in the controller: a worker finished; take its findings."""
        data = getattr(node, "workeroutput", {}).get(WORKER_OUTPUT)
        if data:
            received = json.loads(data)
            self.findings += [Finding.from_json(f) for f in received["findings"]]
            self.functions += [Linted(**f) for f in received["functions"]]
            self.ran += [Ran(**r) for r in received["ran"]]
            for path, files in received.get("depends", {}).items():
                self.depends.setdefault(path, set()).update(files)
            self.seconds += received.get("seconds", 0.0)
            self.not_compiled += [why for why in received.get("not_compiled", []) if why not in self.not_compiled]
            self.watched += received.get("watched", 0)
            self.unwatched += received.get("unwatched", 0)
            self.imported_before += received.get("imported_before", [])
            self.other_loaders += received.get("other_loaders", [])
            self.read.append(received.get("read", {}))
            self.sources.receive(received.get("sources", {}))
            self.sources.changed.update(received.get("changed", []))

    def pytest_terminal_summary(self, terminalreporter: Any) -> None:
        if self.result is None:
            return
        terminalreporter.section("jaxlint")
        out = io.StringIO()
        FORMATS[self.output_format](self.result, out)
        if out.getvalue().strip():
            terminalreporter.write(out.getvalue())
        terminalreporter.write_line(self._summary())
        for why in self.not_compiled:  # figures the target did not give: never a silent green
            terminalreporter.write_line(f"jaxlint: warning: not compiled for the target: {why}")
        if terminalreporter.config.getoption("verbose") > 0:
            for line in results.not_linted_lines(self.functions, relative):
                terminalreporter.write_line(line)
        for path in sorted(self.sources.changed):
            count = sum(os.path.abspath(f.path) == path for f in self.findings)
            terminalreporter.write_line(
                f"jaxlint: {relative(path)} changed during the session: its {count} finding{'s' * (count != 1)} "
                "left out of this report (found against lines the code that ran did not have; `jaxlint check` "
                "reads it as it is now)")
        if self.write_error:
            terminalreporter.write_line(f"jaxlint: {self.write_error}")
        if self.exit_status_changed:
            terminalreporter.write_line("jaxlint: exit status 1 for the findings above "
                                        "(--jaxlint-exit-zero reports them without failing the run)")

    def _summary(self) -> str:
        count = len(self.result.findings) if self.result is not None else 0
        text = results.summary_line(self.ran, self.functions, count, self.seconds, "the tests", self._verbose())
        text += results.unwatched_modules_note(self.other_loaders, self.imported_before)
        if self.unwatched:
            text += (f"\njaxlint: watched {self.watched} of {self.watched + self.unwatched} tests: the others repeat a "
                     f"parametrized test that showed no new call {PATIENCE} times in a row (--jaxlint-watch-all "
                     "watches every test)")
        return text

    def _store(self) -> None:
        """Write what was linted into the result cache, for ``jaxlint check`` to report (the
        controller does under xdist, from what the workers handed over)."""
        cache = cache_for(self.config, bool(self.pytest_config.getoption("jaxlint_no_cache")),
                          self.pytest_config.getoption("jaxlint_cache_dir"))
        if cache is not None:
            self.stored = write_store(self.config, [rule.code for rule in self.rules], self.findings,
                                      results.stored_functions(self.ran, self.functions), self.depends, cache=cache,
                                      read=read_digests.merged(self.read), started=self.started)

    def _verbose(self) -> bool:
        return self.pytest_config.getoption("verbose") > 0
