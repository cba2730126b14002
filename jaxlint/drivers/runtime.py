"""What the project's code does while it runs, from JAX's own events, per scope (one test, the
tests' collection, or a whole program under ``jaxlint run``), for the run-time rules
(``Rule.check_run``, e.g. JX205).

The events come from JAX, never from timing: with ``jax_explain_cache_misses`` on, JAX explains
each miss of jit's tracing cache in a log record (jaxapi/logs.py reads the text of each version);
with ``jax_log_compiles`` on, it logs each compile with its arguments' shardings, which tells a
compile no tracing-cache miss explains (an input placed with another sharding on an Auto mesh).
A filter on JAX's logger takes each record as it is made, in the thread of the call, so the
stack still holds the project's frame that made the call. The records the flag adds are then
dropped (unless the user had the flag on), so the test run's logging is as without jaxlint; the
flags and the filters are put back when the watching stops. The host syncs (the conversions of a
device array to a Python value in a loop, JX309) come from syncs.py, which wraps the array's
conversion methods and counts the project's loops (loops.py) while a scope is set. Each source
runs only when a selected rule reads it (``Rule.run_events``).
"""
from __future__ import annotations

import contextlib
import linecache
import logging
import sys
from types import FrameType
from typing import Callable, Iterator, Sequence

from jaxlint.drivers import loops
from jaxlint.events import CacheMiss, CallPlace, Compile, Difference, RunEvents
from jaxlint.model import Finding, Settings, Span
from jaxlint.rules.base import Rule, RunContext, checks
from jaxlint.rules.runner import run_run_rules
from jaxlint.text import char_column


def run_sources(rules: Sequence[type[Rule]]) -> frozenset[str]:
    """The run-time events the selected rules read; the loops are counted from the project's
    import on when one reads host syncs (so call this before the project is imported)."""
    sources = frozenset(event for rule in checks(rules, "check_run") for event in rule.run_events)
    if "syncs" in sources:
        loops.enable()
    return sources


class _Filter(logging.Filter):
    """Hands each record of one JAX logger to ``take``, which says whether it goes on."""

    def __init__(self, take: Callable[[logging.LogRecord], bool]) -> None:
        super().__init__()
        self.take = take

    def filter(self, record: logging.LogRecord) -> bool:
        return self.take(record)


class RunWatcher:
    """Records JAX's run-time events while ``scope`` is set; ``project(path)``: the files whose
    frames are the project's (a call is placed at the innermost of them)."""

    def __init__(self, project: Callable[[str], bool], sources: frozenset[str] = frozenset({"compiles"})) -> None:
        from jaxlint.drivers.syncs import SyncWatcher

        self.project = project
        self.scopes: dict[str, RunEvents] = {}
        self._scope: str | None = None
        self.compiles = "compiles" in sources
        self.syncs = SyncWatcher(project, _call_span) if "syncs" in sources else None
        self._installed: list[tuple[logging.Logger, logging.Filter]] = []
        self._user_explains = False  # the user had jax_explain_cache_misses on: their records stay
        self._user_logs_compiles = False  # the same for jax_log_compiles
        # The project functions compiled so far, by name: their last miss and argument shardings;
        # the one whose tracing-cache miss is compiling now (its compile record comes next).
        self._compiled: dict[str, tuple[CacheMiss, tuple[str, ...] | None]] = {}
        self._missed: str | None = None
        self._in_project: dict[str, bool] = {}
        # id -> (frame, invocation) of the project frames that made a compiling call and were
        # still running at the last one: held, so that no new frame can take the id meanwhile.
        self._running: dict[int, tuple[FrameType, int]] = {}
        self._invocations = 0

    @property
    def scope(self) -> str | None:
        return self._scope

    @scope.setter
    def scope(self, scope: str | None) -> None:
        self._scope = scope
        if self.syncs is not None:
            self.syncs.enter(None if scope is None else self.scopes.setdefault(scope, RunEvents(scope)))

    def start(self) -> None:
        """Turn JAX's explanations on and listen (nothing happens when already listening)."""
        if self.syncs is not None:
            self.syncs.install()
        if self._installed or not self.compiles:
            return
        from jaxlint.jaxapi import config_state, logs

        self._user_explains = config_state.explain_cache_misses(True)
        self._user_logs_compiles = config_state.log_compiles(True)
        for name in logs.CACHE_MISS_LOGGERS:
            self._install(name, self._take_miss)
        for name in logs.LOG_COMPILES_ONLY:
            self._install(name, self._take_logged)
        for name in logs.EXPLAIN_ONLY_LOGGERS:
            self._install(name, self._take_other)

    def stop(self) -> None:
        """Put JAX's flag, loggers and array methods back as they were."""
        if self.syncs is not None:
            self.syncs.uninstall()
        if not self._installed:
            return
        from jaxlint.jaxapi import config_state

        for logger, installed in self._installed:
            logger.removeFilter(installed)
        self._installed = []
        self._running.clear()
        self._compiled.clear()
        if not self._user_explains:
            config_state.explain_cache_misses(False)
        if not self._user_logs_compiles:
            config_state.log_compiles(False)

    @contextlib.contextmanager
    def scoped(self, scope: str) -> Iterator[None]:
        """Events inside the block belong to ``scope`` (a test's node id)."""
        previous, self.scope = self.scope, scope
        try:
            yield
        finally:
            self.scope = previous
            self._running.clear()

    def findings(self, rules: Sequence[type[Rule]], settings: Settings) -> list[Finding]:
        """The run-time rules' findings over each scope's events (a rule that raises is a JX906
        finding, as everywhere)."""
        codes = {rule.code for rule in rules}
        if self.syncs is not None:
            self.syncs.settle(self.scopes)
        found: list[Finding] = []
        for events in self.scopes.values():
            found += run_run_rules(rules, RunContext(events=events, settings=settings), codes)
        return found

    def _install(self, name: str, take: Callable[[logging.LogRecord], bool]) -> None:
        logger = logging.getLogger(name)
        installed = _Filter(take)
        logger.addFilter(installed)
        self._installed.append((logger, installed))

    def _take_miss(self, record: logging.LogRecord) -> bool:
        from jaxlint.jaxapi import logs, tracers

        try:
            message = record.getMessage()
        except Exception:  # a record that cannot format is not ours to judge
            return True
        if not message.startswith(logs.CACHE_MISS_PREFIX):
            return True
        if self.scope is not None and not tracers.under_jit():
            miss = logs.parse_cache_miss(message)
            if miss is not None:
                events = self.scopes.setdefault(self.scope, RunEvents(self.scope))
                events.compiles.append(Compile(miss, self._place(sys._getframe(1))))
                self._missed = miss.function
                self._compiled[miss.function] = (miss, self._compiled.get(miss.function, (miss, None))[1])
        return self._user_explains

    def _take_logged(self, record: logging.LogRecord) -> bool:
        """A record ``jax_log_compiles`` raised: a compile's (its shardings), or dispatch timings."""
        from jaxlint.jaxapi import logs, tracers

        try:
            message = record.getMessage()
        except Exception:
            return True
        prefixes = logs.LOG_COMPILES_ONLY.get(record.name, ())
        if not message.startswith(prefixes):
            return True
        logged = logs.parse_compile(message) if record.name == logs.COMPILE_LOGGER else None
        if logged is not None and self.scope is not None and not tracers.under_jit():
            self._take_compile(*logged)
        return self._user_logs_compiles or record.levelno != logging.WARNING

    def _take_compile(self, function: str, shardings: tuple[str, ...]) -> None:
        """A compile of a project function its tracing-cache miss did not announce, with inputs
        sharded otherwise than at its last compile: a compile the shardings caused."""
        missed, self._missed = self._missed, None
        known = self._compiled.get(function)
        if known is None:
            return  # JAX's own helpers: no miss of theirs is the project's
        miss, before = known
        self._compiled[function] = (miss, shardings)
        if missed == function or before is None or len(before) != len(shardings) or before == shardings:
            return
        differences = tuple(Difference("sharding", f"input {i}", old, new, f"input {i}: {old} -> {new}")
                            for i, (old, new) in enumerate(zip(before, shardings)) if old != new)
        events = self.scopes.setdefault(self.scope or "", RunEvents(self.scope or ""))
        events.compiles.append(Compile(CacheMiss(miss.function, miss.defined_at, False, differences),
                                       self._place(sys._getframe(3))))

    def _take_other(self, record: logging.LogRecord) -> bool:
        from jaxlint.jaxapi import logs

        if self._user_explains or record.levelno != logging.WARNING:
            return True
        try:
            return not record.getMessage().startswith(logs.EXPLAIN_ONLY_PREFIXES)
        except Exception:
            return True

    def _place(self, frame: FrameType | None) -> CallPlace | None:
        """The innermost frame of ``frame``'s stack in a project file, the span of the call it is
        making (``co_positions``: byte columns, made characters) and which run of its function."""
        stack: list[FrameType] = []
        while frame is not None:
            stack.append(frame)
            frame = frame.f_back
        # A frame that made an earlier compiling call and is no longer on the stack has returned.
        running = {id(f) for f in stack}
        self._running = {key: held for key, held in self._running.items() if key in running}
        for frame in stack:
            path = frame.f_code.co_filename
            inside = self._in_project.get(path)
            if inside is None:
                inside = self._in_project[path] = self.project(path)
            if inside:
                held = self._running.get(id(frame))
                if held is None:
                    self._invocations += 1
                    held = self._running[id(frame)] = (frame, self._invocations)
                name = getattr(frame.f_code, "co_qualname", frame.f_code.co_name)
                return CallPlace(path, _call_span(frame), name, held[1])
        return None


def _call_span(frame: FrameType) -> Span:
    line = frame.f_lineno
    positions = getattr(frame.f_code, "co_positions", None)  # Python 3.11
    if positions is not None and frame.f_lasti >= 0:
        for index, position in enumerate(positions()):
            if index == frame.f_lasti // 2:
                start_line, end_line, start_col, end_col = position
                if start_line is not None and start_col is not None:
                    end_line = end_line if end_line is not None else start_line
                    end_col = end_col if end_col is not None else start_col
                    path = frame.f_code.co_filename
                    return Span(start_line, char_column(linecache.getline(path, start_line), start_col),
                                end_line, char_column(linecache.getline(path, end_line), end_col))
                break
    text = linecache.getline(frame.f_code.co_filename, line)
    indent = len(text) - len(text.lstrip())
    return Span(line, indent, line, len(text.rstrip("\r\n")))
