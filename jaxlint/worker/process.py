"""The worker process: imports user modules, traces their targets, runs the rules.

User code only ever runs here, never in the jaxlint process: it can crash, hang or print
without harming the report. Protocol: one JSON line per job, ``{"job": Job, "timeout": seconds}``,
on the file descriptor given as argv[1], one JSON result per line on the one given as argv[2];
stdin and stdout are /dev/null, so code that reads or prints cannot touch either stream. argv[3]
is the lifeline (a pipe the parent never writes to) and argv[4] the parent's pid: the worker
ends when its parent does, or when a job runs far past its timeout (lifeline.py). The JAX import happens once per worker; the
JAX configuration a module changes is put back after its job.
"""
from __future__ import annotations

import faulthandler
import importlib
import importlib.machinery
import importlib.util
import json
import os
import signal
import sys
import time
import traceback

from jaxlint.model import Job, Result
from jaxlint.processes import descendants, kill_all
from jaxlint.worker import lifeline, progress


def main() -> None:
    job_fd, result_fd = int(sys.argv[1]), int(sys.argv[2])
    lifeline.hold(int(sys.argv[3]), int(sys.argv[4]))  # before the slow JAX import
    clock = lifeline.JobClock()
    if sys.path and sys.path[0] == os.getcwd():
        # Put there by `python -m jaxlint.worker` (pool.py starts workers without it): user modules
        # resolve from their project root only.
        del sys.path[0]
    os.environ.setdefault("JAX_PLATFORMS", "cpu")
    sys.dont_write_bytecode = True  # never litter the user's tree with __pycache__
    # Python stacks on stderr, where the runner finds the line a module crashed or hung on:
    # on a fatal signal (a segfault), and on SIGUSR1 (sent when the time limit is up).
    # They go to the saved copy of descriptor 2: a module, or the compile step while it reads XLA's
    # log (jaxlint.ir.partitioner), may point descriptor 2 elsewhere for a while.
    _save_streams()
    stacks = os.fdopen(_SAVED_FDS[2], "w", closefd=False)  # faulthandler keeps a reference
    faulthandler.enable(file=stacks)
    faulthandler.register(signal.SIGUSR1, file=stacks, all_threads=True)
    os._exit = _exit_with_stack
    started = time.perf_counter()
    importlib.import_module("jax")  # paid once per worker, before any job

    from jaxlint.jaxapi import tracebacks
    tracebacks.exclude_from_user_frames()
    jax_import = time.perf_counter() - started
    with os.fdopen(job_fd) as jobs, os.fdopen(result_fd, "w") as results:
        results.write(json.dumps({"ready": True, "jax_import": jax_import}) + "\n")
        results.flush()
        progress.attach(results, stacks)  # what it is doing, told as it goes (a job that runs away)
        for line in jobs:
            message = json.loads(line)
            job = Job.from_json(message["job"])
            clock.start(message.get("timeout"))
            result = analyze_module(job)
            # The worker's process only (analyze_module also runs in tests' own process).
            _kill_children()
            _restore_streams()
            results.write(json.dumps(result.to_json()) + "\n")
            results.flush()
            clock.stop()
    # Done: skip the user's atexit handlers and never wait for threads their modules started.
    _real_exit(0)


_real_exit = os._exit


def _exit_with_stack(status: int) -> None:
    """os._exit for user code: first print where it was called, for the worker-crashed finding."""
    faulthandler.dump_traceback(all_threads=False)
    _real_exit(status)


def analyze_module(job: Job) -> Result:
    """One job; the JAX configuration the module changed (``jax.config.update`` at import) is
    put back afterwards, so the next module is analyzed with the worker's own, as if alone."""
    from jaxlint.jaxapi import config_state
    from jaxlint.worker.analyze import analyze

    configuration = config_state.config_snapshot()
    try:
        return analyze(job)
    except BaseException as error:  # jaxlint's own bug: report it, keep the worker alive
        return Result(job.path, internal_error="".join(
            traceback.format_exception(type(error), error, error.__traceback__)))
    finally:
        if config_state.restore_config(configuration):
            import jax

            jax.clear_caches()  # traces cached under the module's configuration


_SAVED_FDS: dict[int, int] = {}  # 0-2 -> a duplicate made when the worker started


def _save_streams() -> None:
    for fd in (0, 1, 2):
        _SAVED_FDS[fd] = os.dup(fd)


def _restore_streams() -> None:
    """Standard input, output and error as the worker started with them, for the next module:
    one that closed or replaced file descriptor 1 or 2, or ``sys.stdout``, made the next fail."""
    for fd, saved in _SAVED_FDS.items():
        try:
            same = os.path.sameopenfile(fd, saved)
        except OSError:  # closed
            same = False
        if not same:
            os.dup2(saved, fd)
    for name, fd in (("stdin", 0), ("stdout", 1), ("stderr", 2)):
        original = getattr(sys, f"__{name}__")
        if original is None or original.closed:
            original = os.fdopen(os.dup(fd), "r" if fd == 0 else "w", buffering=1 if fd else -1)
            setattr(sys, f"__{name}__", original)
        if getattr(sys, name) is not original:
            setattr(sys, name, original)


def _kill_children() -> None:
    """Processes a module started (and theirs) end with its job, not after jaxlint: found in
    /proc (Linux); elsewhere they end with the worker's process group."""
    pids = descendants(os.getpid())
    kill_all(pids)
    for pid in pids:
        try:
            os.waitpid(pid, 0)
        except OSError:  # not our child (a grandchild): init reaps it
            pass
