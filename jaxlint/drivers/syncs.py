"""The host syncs the project's code makes in loops, for JX309: each conversion of a device array
to a Python value (``float(loss)``, ``if jnp.any(x)``, ``.item()``, an f-string), placed at the
innermost project frame that asked for it, and the counted loop (loops.py) that frame, or a
project frame around it, was going round.

Why wrap methods: on CPU the transfer guard does not fire for ``float(loss)``, so JAX reports no
event for it. The conversion methods of JAX's array class are wrapped while the watcher is on;
each wrapper calls the original with the same arguments and returns its value unchanged (the
test sees what it would see), and the originals are put back at ``uninstall``.

What counts: a conversion whose caller is a project file, or JAX or NumPy called from one
(``jnp.zeros(n)`` with an array ``n``). One a test file makes (an ``assert float(x) == 1``), or
another library (a logging call formatting its arguments, pytest showing a failure), is the
test's or the library's business and is not counted; nor is one ``jax.device_get`` makes, the
batched read the rule recommends (numpyro's ``svi.run`` reads its losses that way every
``num_steps // 20`` steps: on every step in a test of 20 steps).
"""
from __future__ import annotations

import collections
import functools
import inspect
import sys
import threading
import types
from types import CodeType, FrameType
from typing import Any, Callable

from jaxlint.drivers import loops
from jaxlint.events import CallPlace, HostSyncs, LoopRuns, RunEvents
from jaxlint.model import Span

MAX_DEPTH = 32  # project frames looked through for the loop around a conversion
RESOLVE_TRIES = 3  # looks for the jitted callee of one loop per scope: its names are bound once it ran
_COMPREHENSIONS = frozenset({"<listcomp>", "<dictcomp>", "<setcomp>", "<genexpr>", "<lambda>"})


class SyncWatcher:
    """Counts, per scope, each loop's iterations and the conversions made inside loops."""

    def __init__(self, project: Callable[[str], bool], call_span: Callable[[FrameType], Span]) -> None:
        self.project = project
        self.call_span = call_span
        self.events: RunEvents | None = None  # the scope's, while one is set
        self.iterations: dict[str, collections.Counter[int]] = {}  # scope -> loop -> iterations
        self._originals: dict[str, Any] = {}
        self._inside = threading.local()  # a conversion inside a conversion is the same one
        self._in_project: dict[str, bool] = {}
        self._machinery: dict[str, bool] = {}
        # Keyed by the code object's id (hashing a code object hashes its contents); the code is kept.
        self._spans: dict[tuple[int, int], tuple[CodeType, Span]] = {}  # (code, instruction) -> span
        self._syncs: dict[tuple[str, int, str, Span], HostSyncs] = {}  # (scope, loop, path, span) ->
        self._tries: dict[tuple[str, int], int] = {}
        self._counter: collections.Counter[int] | None = None  # the scope's iterations

    def install(self) -> None:
        from jaxlint.jaxapi import host_sync

        if self._originals:
            return
        array = host_sync.device_array_class()
        for name, kind in host_sync.ARRAY_CONVERSIONS.items():
            original = array.__dict__.get(name)
            if original is None:
                continue
            self._originals[name] = original
            setattr(array, name, self._wrapped(original, kind))

    def uninstall(self) -> None:
        from jaxlint.jaxapi import host_sync

        array = host_sync.device_array_class()
        for name, original in self._originals.items():
            setattr(array, name, original)
        self._originals = {}
        loops.count_with(None)
        self.events = None

    def enter(self, events: RunEvents | None) -> None:
        """Count into ``events``' scope from now on (None: count nothing)."""
        self.events = events
        self._counter = None
        if events is None:
            loops.count_with(None)
        else:
            counter = self._counter = self.iterations.setdefault(events.scope, collections.Counter())

            def counted(site: int) -> None:
                counter[site] += 1

            loops.count_with(counted)

    def settle(self, scopes: dict[str, RunEvents]) -> None:
        """Each scope's loops get the iterations counted."""
        for scope, events in scopes.items():
            counter = self.iterations.get(scope, collections.Counter())
            for site, runs in events.loops.items():
                runs.iterations = counter[site]

    def _wrapped(self, original: Callable[..., Any], kind: str) -> Callable[..., Any]:
        watcher = self

        @functools.wraps(original)
        def converted(array: Any, *args: Any, **kwargs: Any) -> Any:
            if watcher.events is None or getattr(watcher._inside, "active", False):
                return original(array, *args, **kwargs)
            watcher._inside.active = True
            try:
                try:
                    watcher._take(kind, sys._getframe(1))
                except Exception:  # watching must never break a test
                    pass
                return original(array, *args, **kwargs)
            finally:
                watcher._inside.active = False

        return converted

    def _take(self, kind: str, frame: FrameType | None) -> None:
        from jaxlint.jaxapi import host_sync

        while frame is not None:
            path = frame.f_code.co_filename
            machinery = self._machinery.get(path)
            if machinery is None:
                machinery = self._machinery[path] = host_sync.is_conversion_machinery(path)
            if not machinery:
                break
            if frame.f_code.co_name in host_sync.BATCHED_READS:
                return  # ``jax.device_get``: the batched read the rule recommends, not counted
            frame = frame.f_back
        if frame is None or not self._is_project(frame.f_code.co_filename):
            return
        found = self._loop(frame)
        events = self.events
        if found is None or events is None:
            return
        site, loop_frame = found
        runs = events.loops.get(site)
        if runs is None:
            runs = events.loops[site] = LoopRuns(loops.SITES[site])
        tried = self._tries.get((events.scope, site), 0)
        if not runs.jitted and tried < RESOLVE_TRIES:
            self._tries[(events.scope, site)] = tried + 1
            runs.jitted = _jitted_callees(loop_frame, runs.site.callees)
        code, lasti = frame.f_code, frame.f_lasti
        kept = self._spans.get((id(code), lasti))
        if kept is None:
            kept = self._spans[(id(code), lasti)] = (code, self.call_span(frame))
        span = kept[1]
        # By span: the instruction's offset of one call can change as Python specializes it.
        key = (events.scope, site, code.co_filename, span)
        syncs = self._syncs.get(key)
        if syncs is None:
            name = getattr(code, "co_qualname", code.co_name)
            syncs = self._syncs[key] = HostSyncs(CallPlace(code.co_filename, span, name), site)
            events.syncs.append(syncs)
        syncs.kinds[kind] = syncs.kinds.get(kind, 0) + 1
        iteration = self._counter[site] if self._counter is not None else 0
        if iteration != syncs.last_iteration:
            syncs.last_iteration = iteration
            syncs.count += 1

    def _is_project(self, path: str) -> bool:
        inside = self._in_project.get(path)
        if inside is None:
            inside = self._in_project[path] = self.project(path)
        return inside

    def _loop(self, frame: FrameType | None) -> tuple[int, FrameType] | None:
        """The counted loop the frame is going round, or the one a project frame around it is
        (a helper called in a loop); comprehensions are looked through."""
        for _ in range(MAX_DEPTH):
            if frame is None:
                return None
            code = frame.f_code
            if code.co_name not in _COMPREHENSIONS:
                if not self._is_project(code.co_filename):
                    return None
                site = loops.site_at(code.co_filename, code.co_firstlineno, frame.f_lineno)
                if site is not None:
                    return site, frame
            frame = frame.f_back
        return None


def _jitted_callees(frame: FrameType, callees: tuple[str, ...]) -> tuple[str, ...]:
    """The names among ``callees`` that are jitted functions where ``frame`` runs: bound so
    (``step = jax.jit(...)``, ``@jax.jit``), or a plain function whose globals or closure hold
    one it names (``train_step`` calling the jitted ``update``). Attributes are read without
    running properties (``inspect.getattr_static``)."""
    from jaxlint.jaxapi import tracers

    found: list[str] = []
    scopes = (frame.f_locals, frame.f_globals, frame.f_builtins)
    for dotted in callees:
        first, *rest = dotted.split(".")
        value = next((scope[first] for scope in scopes if first in scope), None)
        for attribute in rest:
            if value is None:
                break
            try:
                value = inspect.getattr_static(value, attribute)
            except AttributeError:
                value = None
        if isinstance(value, (staticmethod, classmethod)):
            value = value.__func__
        if value is None:
            continue
        if tracers.is_jitted(value):
            found.append(f"`{dotted}`")
        elif isinstance(value, types.FunctionType):
            inner = _jitted_names(value)
            if inner:
                found.append(f"`{dotted}` (which calls the jitted {', '.join(inner)})")
    return tuple(found)


def _jitted_names(function: types.FunctionType) -> list[str]:
    from jaxlint.jaxapi import tracers

    names = [f"`{name}`" for name in function.__code__.co_names
             if tracers.is_jitted(function.__globals__.get(name))]
    for name, cell in zip(function.__code__.co_freevars, function.__closure__ or ()):
        try:
            if tracers.is_jitted(cell.cell_contents):
                names.append(f"`{name}`")
        except ValueError:  # an empty cell
            pass
    return names
