"""The worker never outlives the jaxlint process that started it, nor runs far past its job's limit.

The time limit per module is enforced by the parent, so a worker whose parent is gone (``kill -9``,
a killed editor, a cancelled CI job) would have none, and a module looping at import would spin on.
Three guards end the worker and every process its modules started. All three run Python code,
so a module stuck in C code that holds the GIL delays them until it lets go:

- the lifeline: a pipe whose write end only the parent holds; a thread waits for its end of file,
  which comes however the parent ends (SIGKILL included), on every platform;
- on Linux, the kernel's parent-death signal (SIGHUP), a second watch independent of the first;
- the job clock: a job running past twice its time limit plus two seconds (a stuck parent that
  never kills it), counted in the worker's own time as the parent counts it, ends the worker too.
"""
from __future__ import annotations

import os
import signal
import threading
from typing import Any, NoReturn

from jaxlint.processes import OwnTime, descendants, kill_all, set_parent_death_signal

SELF_LIMIT_FACTOR = 2.0
SELF_LIMIT_MARGIN = 2.0  # seconds: the parent's own kill, with its stack dump, comes first


_CLOCK: JobClock | None = None  # the worker's (process.py makes it)


def self_limit(timeout: float) -> float:
    """How long the worker lets one job run before it ends itself: well past the parent's limit,
    so the parent's timeout (and its finding, with the stuck line) always comes first."""
    return SELF_LIMIT_FACTOR * timeout + SELF_LIMIT_MARGIN


def end_worker() -> NoReturn:
    """Kill what the user's modules started (found in /proc, even those that left the group),
    then the worker's process group, the worker with it."""
    kill_all(descendants(os.getpid()))
    try:
        if os.getpgid(0) == os.getpid():  # started in a session of its own, as the pool does
            os.killpg(0, signal.SIGKILL)
    except OSError:
        pass
    os.kill(os.getpid(), signal.SIGKILL)
    raise SystemExit(1)  # not reached: for the type checker


def hold(lifeline_fd: int, parent: int) -> None:
    """End the worker when ``parent`` ends: on the lifeline's end of file, and on Linux on the
    parent-death signal. Called once, at the worker's start."""
    os.set_inheritable(lifeline_fd, False)  # the processes a module starts need not hold it
    signal.signal(signal.SIGHUP, _on_parent_death)
    set_parent_death_signal(signal.SIGHUP)
    if os.getppid() != parent:  # the parent died before the signal was asked for
        end_worker()
    threading.Thread(target=_watch, args=(lifeline_fd,), name="jaxlint-lifeline", daemon=True).start()


def _on_parent_death(signum: int, frame: Any) -> None:
    end_worker()


def _watch(fd: int) -> None:
    """Block until the parent's end of the pipe is closed (the parent never writes to it)."""
    while True:
        try:
            if not os.read(fd, 4096):
                break
        except InterruptedError:
            continue
        except OSError:  # the descriptor is unusable: the parent-death signal is all that is left
            return
    end_worker()


def job_time_left() -> float | None:
    """The running job's seconds left before the parent's limit (JobClock.left); None outside a
    worker's job (a test's own process) or without a limit."""
    return _CLOCK.left() if _CLOCK is not None else None


class JobClock:
    """The worker's own limit on a job: a thread that ends the worker when a job started with
    ``start`` has not been ``stop``-ped within its self limit, counted as the parent counts its
    limit (``OwnTime``: time spent waiting for a CPU other processes held is left out)."""

    def __init__(self) -> None:
        global _CLOCK
        self._job: tuple[OwnTime, float] | None = None  # the job's clock and its self limit
        self._timeout: float | None = None  # the parent's limit for the job
        self._changed = threading.Condition()
        threading.Thread(target=self._run, name="jaxlint-job-clock", daemon=True).start()
        _CLOCK = self

    def start(self, timeout: float | None) -> None:
        """A job begins; ``timeout`` is the parent's limit for it (None: no limit)."""
        with self._changed:
            self._job = None if timeout is None else (OwnTime(os.getpid()), self_limit(timeout))
            self._timeout = timeout
            self._changed.notify()

    def stop(self) -> None:
        with self._changed:
            self._job = None
            self._changed.notify()

    def left(self) -> float | None:
        """Seconds of the parent's limit the job has left, counted as the parent counts; None
        without a limit."""
        job, timeout = self._job, self._timeout
        return None if job is None or timeout is None else job[0].left(timeout)

    def _run(self) -> None:
        with self._changed:
            while True:
                if self._job is None:
                    self._changed.wait()
                    continue
                clock, limit = self._job
                remaining = clock.left(limit)
                if remaining <= 0:
                    end_worker()
                self._changed.wait(remaining)
