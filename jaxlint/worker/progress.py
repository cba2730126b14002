"""What the worker is doing, told to the parent as it goes, and a guess's limit that C code cannot
outrun: a target whose trace runs away must not take the module's other results with it.

The worker writes one ``{"progress": {...}}`` line on its result pipe when a target's analysis
starts (``target``, ``line``) and ends (``target`` None), and when a trace with guessed arguments
starts and ends (``guess``). When the module's limit passes, or the worker dies, the parent knows
the target it was in and analyzes the module once more without it (engine/jobs.py).

A loop in C code (``list(itertools.product(points, repeat=8))``) never lets Python handle the
guess's timer (guards.guess_limit): ``hard_limit`` arms faulthandler's watchdog, a C thread that
needs no Python, which ends the worker a few seconds past the guess's limit; the parent then
reruns the module without the target, sooner than the module's own limit would have let it.
Outside a worker (tests' own process, the pytest plugin) nothing is written and nothing armed.
"""
from __future__ import annotations

import contextlib
import faulthandler
import json
from typing import IO, Any, Iterator

HARD_MARGIN = 10.0  # seconds past a guess's limit before the watchdog ends the worker

_stream: IO[str] | None = None  # the result pipe (process.py attaches it)
_stacks: IO[str] | None = None  # where the watchdog writes the stack it found (the worker's stderr)
_armed = False  # a watchdog is running: an inner guess adds none


def attach(results: IO[str], stacks: IO[str]) -> None:
    """In the worker's process only: progress goes to ``results``, the watchdog's stack to ``stacks``."""
    global _stream, _stacks
    _stream, _stacks = results, stacks


def detach() -> None:
    global _stream, _stacks
    _stream = _stacks = None


def _tell(**fields: Any) -> None:
    if _stream is not None:
        _stream.write(json.dumps({"progress": fields}) + "\n")
        _stream.flush()


@contextlib.contextmanager
def analyzing(qualname: str, line: int) -> Iterator[None]:
    """A target's analysis: the parent knows it is the one running until it ends."""
    _tell(target=qualname, line=line)
    try:
        yield
    finally:
        _tell(target=None)


@contextlib.contextmanager
def guessing(seconds: float) -> Iterator[None]:
    """A trace with guessed arguments limited to ``seconds`` (guards.guess_limit): told to the
    parent, and stopped by the watchdog HARD_MARGIN seconds past it, even in C code."""
    global _armed
    if _stream is None or _stacks is None or _armed:
        yield
        return
    _tell(guess=True)
    faulthandler.dump_traceback_later(seconds + HARD_MARGIN, exit=True, file=_stacks)
    _armed = True
    try:
        yield
    finally:
        faulthandler.cancel_dump_traceback_later()
        _armed = False
        _tell(guess=False)
