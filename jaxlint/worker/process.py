"""The worker process: imports user modules, traces their targets, runs the rules.

User code only ever runs here, never in the jaxlint process: it can crash, hang or print
without harming the report. Protocol: one JSON job per line on the file descriptor given as argv[1],
one JSON result per line on the one given as argv[2]; stdin and stdout are /dev/null, so code
that reads or prints cannot touch either stream. The JAX import happens once per worker; the
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


def main() -> None:
    job_fd, result_fd = int(sys.argv[1]), int(sys.argv[2])
    if sys.path and sys.path[0] == os.getcwd():
        del sys.path[0]  # put there by -m; user modules resolve from their project root only
    os.environ.setdefault("JAX_PLATFORMS", "cpu")
    sys.dont_write_bytecode = True  # never litter the user's tree with __pycache__
    # Python stacks on stderr, where the runner finds the line a module crashed or hung on:
    # on a fatal signal (a segfault), and on SIGUSR1 (sent when the time limit is up).
    faulthandler.enable()
    faulthandler.register(signal.SIGUSR1, all_threads=True)
    os._exit = _exit_with_stack
    started = time.perf_counter()
    importlib.import_module("jax")  # paid once per worker, before any job

    from jaxlint.ir import compat
    compat.exclude_from_user_frames()
    jax_import = time.perf_counter() - started
    with os.fdopen(job_fd) as jobs, os.fdopen(result_fd, "w") as results:
        results.write(json.dumps({"ready": True, "jax_import": jax_import}) + "\n")
        results.flush()
        for line in jobs:
            job = Job.from_json(json.loads(line))
            result = analyze_module(job)
            results.write(json.dumps(result.to_json()) + "\n")
            results.flush()
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
    from jaxlint.ir import compat
    from jaxlint.worker.analyze import analyze

    configuration = compat.config_snapshot()
    try:
        return analyze(job)
    except BaseException as error:  # jaxlint's own bug: report it, keep the worker alive
        return Result(job.path, internal_error="".join(
            traceback.format_exception(type(error), error, error.__traceback__)))
    finally:
        if compat.restore_config(configuration):
            import jax

            jax.clear_caches()  # traces cached under the module's configuration


