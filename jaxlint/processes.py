"""Process helpers the jaxlint process and its workers share: finding a process's descendants,
killing a process group, the kernel's parent-death signal, and a job's own time.

No process jaxlint starts may outlive it (a killed editor, a cancelled CI job, ``kill -9``): the
worker watches a pipe from its parent (worker/lifeline.py) and, on Linux, also asks the kernel
for a signal when its parent dies. Everything here is best effort and never raises for a process
that is already gone.
"""
from __future__ import annotations

import ctypes
import ctypes.util
import os
import signal
import sys
import threading
import time

_PR_SET_PDEATHSIG = 1  # linux/prctl.h
# A job's limit counts its own time (OwnTime); on a machine so loaded that it waits for a CPU more
# than it runs, the wall clock still ends it at this many times the limit.
STARVED_LIMIT_FACTOR = 10.0


def module_command(module: str) -> list[str]:
    """``python -m module`` without the current folder on ``sys.path``: ``-m`` puts it first,
    before the module's own imports (json, typing, dataclasses), so a ``typing.py`` in the folder
    jaxlint is started from (a project, a repository the editor opened) would run in jaxlint's
    process. ``-c`` puts '' there instead, taken out here before anything else is imported."""
    launch = ("import sys; sys.path[:1] = [p for p in sys.path[:1] if p != '']; import runpy; "
              f"runpy.run_module({module!r}, run_name='__main__', alter_sys=True)")
    return [sys.executable, "-c", launch]


def set_parent_death_signal(signum: int) -> bool:
    """Ask the kernel to send ``signum`` to this process when the thread that started it ends
    (Linux: prctl PR_SET_PDEATHSIG). False where that does not exist or fails."""
    if not sys.platform.startswith("linux"):
        return False
    try:
        libc = ctypes.CDLL(ctypes.util.find_library("c") or "libc.so.6", use_errno=True)
        return libc.prctl(_PR_SET_PDEATHSIG, int(signum), 0, 0, 0) == 0
    except (OSError, AttributeError):  # no libc to load, or no prctl in it
        return False


def descendants(pid: int) -> list[int]:
    """Every process below ``pid`` (children first, then theirs), read from /proc on Linux;
    empty elsewhere, where a process group is all there is to kill."""
    found: list[int] = []
    try:
        tasks = os.listdir(f"/proc/{pid}/task")
    except OSError:
        return found
    for task in tasks:
        try:
            with open(f"/proc/{pid}/task/{task}/children") as handle:
                children = [int(child) for child in handle.read().split()]
        except (OSError, ValueError):
            continue
        for child in children:
            found.append(child)
            found.extend(descendants(child))
    return found


def kill_all(pids: list[int]) -> None:
    """SIGKILL each of ``pids``; those already gone are skipped."""
    for pid in pids:
        try:
            os.kill(pid, signal.SIGKILL)
        except OSError:
            pass


def kill_group(leader: int) -> bool:
    """SIGKILL the process group led by ``leader`` (a process started with a session of its
    own); False if there is no such group left or it is not ours to kill."""
    try:
        os.killpg(leader, signal.SIGKILL)
    except (ProcessLookupError, PermissionError):
        return False
    return True


def watch_parent(parent: int, every: float = 0.25) -> None:
    """End this process, with what it started, once ``parent`` (the jaxlint that started it:
    ``jaxlint record``'s test run, ``jaxlint run``'s program) has ended, however it ended: on
    every platform, where the parent-death signal jaxlint also asks for is Linux's only."""
    started_by = os.getppid()  # when it is ``parent``: a change means it died (a zombie still answers kill)

    def watch() -> None:
        while True:
            time.sleep(every)
            if started_by == parent and os.getppid() != parent:
                break
            try:
                os.kill(parent, 0)
            except ProcessLookupError:
                break
            except OSError:  # alive, another user's: not ours to ask
                continue
        kill_all(descendants(os.getpid()))
        os.kill(os.getpid(), signal.SIGTERM)

    threading.Thread(target=watch, name="jaxlint-parent-watch", daemon=True).start()


def run_queue_wait(pid: int) -> float | None:
    """Seconds the main thread of process ``pid`` has spent ready to run but waiting for a CPU
    (Linux's schedstat); None where the kernel does not say."""
    try:
        with open(f"/proc/{pid}/task/{pid}/schedstat") as handle:
            return int(handle.read().split()[1]) / 1e9
    except (OSError, ValueError, IndexError):
        return None


class OwnTime:
    """The time a process has had since this clock started: the wall time, less what its main
    thread spent waiting for a CPU that other processes held. On a loaded machine a module that
    imports in 20 s alone takes minutes of wall time, and a limit on wall time would call it hung;
    time it spends asleep or blocked on its own (a hang) still counts. Wall time where the kernel
    does not say (not Linux)."""

    def __init__(self, pid: int) -> None:
        self.pid = pid
        self.started = time.monotonic()
        self.waited = run_queue_wait(pid)

    def wall(self) -> float:
        return time.monotonic() - self.started

    def elapsed(self) -> float:
        wall = self.wall()
        waited = run_queue_wait(self.pid) if self.waited is not None else None
        if self.waited is None or waited is None:
            return wall
        return wall - max(0.0, waited - self.waited)

    def left(self, limit: float) -> float:
        """Seconds until ``limit`` of own time is spent (at the earliest: own time grows no faster
        than the wall clock), or the wall clock reaches STARVED_LIMIT_FACTOR times it."""
        return min(limit - self.elapsed(), STARVED_LIMIT_FACTOR * limit - self.wall())
