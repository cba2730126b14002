"""Safeguards for running a library's code that jaxlint calls on its own (a factory's call,
worker/closures.py; a plain class's ``__init__``, worker/plain_classes.py): what it prints is
discarded, the module's globals, ``os.environ`` and JAX's configuration are put back, and a
real-time limit raises ``TimeUp``. A trace with guessed arguments has a limit of its own
(``guess_limit``), so that a guess that runs away cannot take the module's whole time."""
from __future__ import annotations

import contextlib
import io
import os
import signal
import sys
import threading
import time
from typing import Any, Iterator

from jaxlint.jaxapi import config_state
from jaxlint.worker import lifeline, progress

GUESS_SECONDS = 15.0  # one trace with guessed arguments (a module has 60 s by default, --timeout)
GUESS_MARGIN = 8.0  # seconds of the module's limit no guess may take: what was found is returned


class TimeUp(BaseException):
    """A guarded call's time limit passed (a BaseException: user code's ``except Exception`` lets it by)."""


@contextlib.contextmanager
def without_side_effects(module: Any) -> Iterator[None]:
    """Run user code and keep none of what it changes that jaxlint can put back: the module's
    globals (rebound, added or deleted names; an object changed in place stays changed), the
    environment, JAX's configuration; what it prints is discarded."""
    namespace = vars(module)
    saved, environment = dict(namespace), dict(os.environ)
    configuration = config_state.config_snapshot()
    try:
        with contextlib.redirect_stdout(io.StringIO()), contextlib.redirect_stderr(io.StringIO()):
            yield
    finally:
        for name in set(namespace) - set(saved):
            del namespace[name]
        namespace.update(saved)
        if os.environ != environment:
            os.environ.clear()
            os.environ.update(environment)
        if config_state.restore_config(configuration):
            import jax

            jax.clear_caches()


def _timers_reach() -> bool:
    return threading.current_thread() is threading.main_thread() and hasattr(signal, "setitimer")


class Limit:
    """One ``time_limit``: ``fired`` once its own timer raised TimeUp (an outer limit's TimeUp,
    passing through the block, is not this one's: its catcher raises it on)."""

    fired = False


@contextlib.contextmanager
def time_limit(seconds: float) -> Iterator[Limit]:
    """Raise TimeUp in the block after ``seconds``, from a real-time timer: only in the main
    thread (the worker's), which signals reach; elsewhere the module's own limit is all there is.
    Inside another limit that ends sooner this one adds nothing (the outer one fires, as its own);
    a later one's timer is put back afterwards, less the time the block took."""
    limit = Limit()
    if not _timers_reach() or 0 < signal.getitimer(signal.ITIMER_REAL)[0] <= seconds:
        yield limit
        return

    def up(signum: int, frame: Any) -> None:
        limit.fired = True
        raise TimeUp()

    started = time.monotonic()
    previous = signal.signal(signal.SIGALRM, up)
    left = signal.setitimer(signal.ITIMER_REAL, seconds)[0]  # an outer limit's, or the user's: put back after
    try:
        yield limit
    finally:
        signal.signal(signal.SIGALRM, signal.SIG_IGN)  # a firing after the block's end is no TimeUp of it
        signal.setitimer(signal.ITIMER_REAL, 0)
        signal.signal(signal.SIGALRM, previous)
        if left:
            signal.setitimer(signal.ITIMER_REAL, max(left - (time.monotonic() - started), 0.001))


class _LoadDependence:
    """Whether a limit of jaxlint's own fired in the user's code during the job (a built instance's
    ``__init__`` or ``__post_init__``, a module imported for its classes), which the worker then
    counts as not linted: the job's result depends on the machine's load (analyze.py reads it)."""

    fired = False


LOAD_DEPENDENT = _LoadDependence()


class GuessTimeUp(BaseException):
    """A trace with guessed arguments ran past GUESS_SECONDS (guess_limit): its own, never an
    outer limit's TimeUp, which goes on to whoever set that one."""


@contextlib.contextmanager
def guessed_call_limit(seconds: float) -> Iterator[Any]:
    """``time_limit(seconds)`` for jaxlint's own call of the user's code on values it guessed (an
    ``__init__``, a ``__post_init__``, a class's maker, a factory): told to the parent as a guess
    (progress.py; a runaway there is no error of the user's code) and stopped by the watchdog where
    it loops inside C code."""
    with progress.guessing(seconds), time_limit(seconds) as limit:
        yield limit


@contextlib.contextmanager
def guess_limit(guessed: bool) -> Iterator[None]:
    """``time_limit(GUESS_SECONDS)`` for a trace with guessed arguments, raising GuessTimeUp, else
    no limit of its own: a loop in Python over jaxlint's sizes (``for p in itertools.product(points,
    repeat=len(m))`` at m of 8) can run for hours, and the module's limit would then leave every
    function of the module unlinted; at most the job's time left less GUESS_MARGIN (none left:
    GuessTimeUp at once). A loop inside C code (``list(itertools.product(...))``) is not
    interrupted: Python handles the timer's signal between bytecodes; in a worker, progress.py's
    watchdog ends the worker soon after, and the parent analyzes the module again without the
    target. Inside a limit that ends sooner, that one's TimeUp passes."""
    if not guessed or not _timers_reach():
        yield
        return
    seconds = GUESS_SECONDS
    left = lifeline.job_time_left()
    if left is not None:  # several runaway guesses must not spend the module's whole limit
        seconds = min(seconds, left - GUESS_MARGIN)
        if seconds <= 0:
            raise GuessTimeUp("not tried: the module's time was nearly spent")
    # progress.guessing: the parent knows a guess runs, and a watchdog stops one stuck in C code.
    with progress.guessing(seconds), _tripwires(), time_limit(seconds) as limit:  # inside a sooner limit it adds nothing
        try:
            yield
        except TimeUp:
            if not limit.fired:
                raise
    if limit.fired:
        raise GuessTimeUp(f"ran past {seconds:g} s")


class _Tripwires:
    """The lines of the analyzed file where a trace with guessed arguments ran away in an earlier
    run of the job (Job.runaway_lines): set for the job's analysis (analyze.py)."""

    path = ""
    lines: frozenset[int] = frozenset()
    codes: dict[Any, bool] = {}  # code object -> whether its own lines hold one of them


TRIPWIRES = _Tripwires()


def set_tripwires(path: str, lines: list[int]) -> None:
    TRIPWIRES.path, TRIPWIRES.lines, TRIPWIRES.codes = path, frozenset(lines), {}


@contextlib.contextmanager
def _tripwires() -> Iterator[None]:
    """A guess that calls the function where an earlier guess ran away (in C code, which no
    timer stops: progress.py's watchdog ended the worker) raises GuessTimeUp at the call: the
    same sizes would run away again, and each costs the module a run. A profile hook, only in a
    job that had a runaway."""
    if not TRIPWIRES.lines:
        yield
        return
    wires, previous = TRIPWIRES, sys.getprofile()

    def hook(frame: Any, event: str, arg: Any) -> None:
        if previous is not None:
            previous(frame, event, arg)
        code = frame.f_code
        if event != "call" or code.co_filename != wires.path:
            return
        tripped = wires.codes.get(code)
        if tripped is None:
            tripped = wires.codes[code] = any(line in wires.lines for _, _, line in code.co_lines())
        if tripped:
            raise GuessTimeUp(f"it reaches {getattr(code, 'co_qualname', code.co_name)}, where a trace with guessed arguments "
                              "ran away in an earlier run (not stopped by a time limit)")

    sys.setprofile(hook)
    try:
        yield
    finally:
        sys.setprofile(previous)


IMPORT_SECONDS = 5.0  # a module of the checked package imported for its classes (argsources)


def guarded_import(name: str) -> Any:
    """``importlib.import_module(name)`` for jaxlint's own purposes (a subclass's module, a forward
    reference's), under the safeguards of a factory's call: what the import prints, sets in the
    environment or in JAX's configuration (x64) is put back, and it runs under IMPORT_SECONDS.
    None where it fails or runs past the limit."""
    import importlib
    import types

    try:
        with without_side_effects(types.ModuleType("jaxlint_import")), time_limit(IMPORT_SECONDS) as limit:
            return importlib.import_module(name)
    except TimeUp:
        if not limit.fired:  # an outer limit's: its caller's
            raise
        LOAD_DEPENDENT.fired = True
        return None
    except (Exception, SystemExit):  # no such module (a class path's prefix), or one that fails
        return None
