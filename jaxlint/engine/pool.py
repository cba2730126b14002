"""Runs analysis jobs in worker processes, with a time limit per module.

A module that hangs or kills its worker costs only itself: the worker is replaced and the
remaining modules go on. JAX is imported once per worker.
"""
from __future__ import annotations

import json
import os
import re
import selectors
import signal
import subprocess
import tempfile
import threading
import time
import weakref
from typing import Any

from jaxlint.config import DEFAULT_TIMEOUT
from jaxlint.model import Job, Result
from jaxlint.processes import OwnTime, descendants, kill_all, kill_group, module_command

STARTUP_TIMEOUT = 180.0  # importing JAX on a busy machine
DUMP_WAIT = 2.0  # how long a hung worker gets to print where it is stuck
DEVICE_COUNT_FLAG = "--xla_force_host_platform_device_count"  # read when JAX starts its CPU backend
# A line of a faulthandler dump (the worker prints one on a fatal signal or on SIGUSR1).
_DUMP_FRAME = re.compile(r'^\s*File "(?P<file>.+)", line (?P<line>\d+) in ')
_DUMP_NOISE = re.compile(r"^\s*(File \".+\", line \d+ in |(Current thread|Thread) 0x[0-9a-fA-F]+ |"
                         r"Stack \(most recent call first\)|Extension modules: |<no Python frame>)")


def dumped_name(path: str) -> str:
    """``path`` as faulthandler writes it: ASCII, other characters as backslash escapes (which
    backslashreplace writes the same way); it cuts names over 500 characters, ending them in "..."."""
    return path.encode("ascii", "backslashreplace").decode("ascii")


def xla_flags(devices: int | None, flags: str | None = None) -> str | None:
    """The worker's XLA_FLAGS for ``devices`` CPU devices (None: JAX's default): the user's
    (``flags``, else this process's) with the device count appended, unless they set one."""
    flags = os.environ.get("XLA_FLAGS") if flags is None else flags
    if devices is None or (flags and DEVICE_COUNT_FLAG in flags):
        return flags
    return f"{flags or ''} {DEVICE_COUNT_FLAG}={devices}".strip()


class WorkerFailure(Exception):
    def __init__(self, kind: str, detail: str, line: int | None = None,
                 progress: dict[str, Any] | None = None) -> None:
        super().__init__(detail)
        self.kind = kind  # "timeout" or "crash"
        self.detail = detail
        self.line = line  # the analyzed file's line the worker was running, when known
        # What the worker last said it was doing (worker/progress.py): "target" (its qualname, None
        # between targets) and "guess" (a trace with guessed arguments was running).
        self.progress = progress or {}

    @property
    def target(self) -> str | None:
        """The target the worker was analyzing when it failed; None outside any."""
        return self.progress.get("target")


class Worker:
    """One worker process. Jobs go in and results come out on pipes of their own: the user's
    code gets /dev/null as stdin and stdout, and its stderr goes to a file read only on failure.
    A third pipe is its lifeline: nothing is written to it, and the worker ends itself when it
    reads its end of file, that is when this process has closed it or ended, however it ended."""

    def __init__(self, devices: int | None = None, wait: bool = True) -> None:
        """Start the worker; with ``wait``, until it has imported JAX (``wait_ready`` later otherwise)."""
        self.devices = devices  # the CPU devices asked for (None: JAX's default)
        job_read, job_write = os.pipe()
        result_read, result_write = os.pipe()
        lifeline_read, self.lifeline = os.pipe()  # non-inheritable: no other child holds it open
        self.lifeline_lock = threading.Lock()
        self.stderr = tempfile.TemporaryFile()
        env = dict(os.environ)
        env["JAX_PLATFORMS"] = "cpu"  # tracing needs no accelerator; never grab a GPU
        env["PYTHONUNBUFFERED"] = "1"
        flags = xla_flags(devices, env.get("XLA_FLAGS"))
        if flags is not None:  # before the worker imports JAX
            env["XLA_FLAGS"] = flags
        env["PYTHONDONTWRITEBYTECODE"] = "1"  # no __pycache__ in the user's tree, even from subprocesses
        package_parent = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
        env["PYTHONPATH"] = os.pathsep.join(p for p in (env.get("PYTHONPATH"), package_parent) if p)
        # A new session: a timeout kills the worker with every process the user's code started.
        # On Linux the worker also asks for the parent-death signal, which the kernel sends when
        # the *thread* that started it ends: a worker serves the thread that started it (a lane,
        # the server's thread pool) and is closed when that thread is done.
        try:
            self.process = subprocess.Popen(
                [*module_command("jaxlint.worker"), str(job_read), str(result_write), str(lifeline_read),
                 str(os.getpid())],
                stdin=subprocess.DEVNULL, stdout=subprocess.DEVNULL, stderr=self.stderr,
                pass_fds=(job_read, result_write, lifeline_read), env=env, start_new_session=True)
        except BaseException:
            for fd in (job_write, result_read, self.lifeline):
                os.close(fd)
            raise
        finally:
            for fd in (job_read, result_write, lifeline_read):
                os.close(fd)
        _LIVE.add(self)
        self.jobs = os.fdopen(job_write, "w")
        self.results = os.fdopen(result_read, "rb")
        self.buffer = b""
        self.stderr_start = 0  # where the current job's stderr begins
        self.jax_import = 0.0
        self.progress: dict[str, Any] = {}  # what the worker said it is doing in the current job
        self.ready = False
        if wait:
            self.wait_ready()

    def wait_ready(self) -> None:
        """Wait until the worker has imported JAX. Raises WorkerFailure (the worker is then closed)."""
        if self.ready:
            return
        try:
            ready = self._read_line(STARTUP_TIMEOUT, None)
        except WorkerFailure:
            self.close()
            raise
        except BaseException:  # Ctrl-C or SIGTERM while it starts: no worker is left behind
            self.kill()
            raise
        self.jax_import = ready.get("jax_import", 0.0)
        self.ready = True

    def alive(self) -> bool:
        return self.process.poll() is None

    def run(self, job: Job, timeout: float) -> Result:
        self.stderr_start = os.fstat(self.stderr.fileno()).st_size
        self.progress = {}
        try:
            # The timeout goes along: the worker ends itself well past it if this process never does.
            self.jobs.write(json.dumps({"job": job.to_json(), "timeout": timeout}) + "\n")
            self.jobs.flush()
        except OSError:  # BrokenPipeError: the worker is gone
            raise WorkerFailure("crash", self._death_reason(), self._stuck_line(job.path), self.progress) from None
        return Result.from_json(self._read_line(timeout, job.path))

    def _read_line(self, timeout: float, path: str | None) -> dict[str, Any]:
        """The worker's next line other than progress (which updates ``self.progress``)."""
        clock = OwnTime(self.process.pid)  # time the worker waited for a CPU others held is not counted
        with selectors.DefaultSelector() as selector:
            selector.register(self.results, selectors.EVENT_READ)
            while True:
                while b"\n" not in self.buffer:
                    remaining = clock.left(timeout)
                    if remaining <= 0:
                        self._dump_stack()
                        self.kill()
                        raise WorkerFailure("timeout", f"no result within {timeout:g} s", self._stuck_line(path),
                                            self.progress)
                    if not selector.select(remaining):
                        continue  # the wall clock's share is spent: how much was the worker's own?
                    chunk = os.read(self.results.fileno(), 1 << 20)
                    if not chunk:
                        raise WorkerFailure("crash", self._death_reason(), self._stuck_line(path), self.progress)
                    self.buffer += chunk
                line, _, self.buffer = self.buffer.partition(b"\n")
                message = json.loads(line)
                if "progress" not in message:
                    return message
                self.progress.update(message["progress"])

    def _job_stderr(self) -> str:
        """What the worker wrote to stderr since the current job started.

        pread, not seek: the worker shares this file's offset while it is alive.
        """
        fd = self.stderr.fileno()
        size = os.fstat(fd).st_size - self.stderr_start
        return os.pread(fd, max(size, 0), self.stderr_start).decode(errors="replace")

    def _dump_stack(self) -> None:
        """Ask a hung worker (faulthandler, on SIGUSR1) to print its Python stack to stderr."""
        try:
            os.kill(self.process.pid, signal.SIGUSR1)
        except (ProcessLookupError, PermissionError):
            return
        # The dump is written from a signal handler; wait until stderr stops growing.
        deadline, size, stable_since = time.monotonic() + DUMP_WAIT, -1, time.monotonic()
        while time.monotonic() < deadline and self.alive():
            now_size = os.fstat(self.stderr.fileno()).st_size
            if now_size != size:
                size, stable_since = now_size, time.monotonic()
            elif time.monotonic() - stable_since > 0.2:
                return
            time.sleep(0.02)

    def _stuck_line(self, path: str | None) -> int | None:
        """The innermost line of ``path`` in the last stack dump of the current job, if any."""
        if path is None:
            return None
        shown = dumped_name(path)
        # One dump per job at most (a fatal signal or a timeout), innermost frame first.
        for text in self._job_stderr().splitlines():
            match = _DUMP_FRAME.match(text)
            if match and (match["file"] == shown or match["file"].endswith("...")
                          and len(match["file"]) > 3 and shown.startswith(match["file"][:-3])):
                return int(match["line"])
        return None

    def _death_reason(self) -> str:
        code = self.process.wait()
        if code < 0:
            try:
                reason = f"killed by signal {signal.Signals(-code).name}"
            except ValueError:
                reason = f"killed by signal {-code}"
        else:
            reason = f"exited with status {code}"
        # The job's own last words, without faulthandler's stack dump (the finding's line has it).
        tail = [line.strip() for line in self._job_stderr().splitlines()
                if line.strip() and not _DUMP_NOISE.match(line)][-3:]
        return reason + (": " + " | ".join(tail) if tail else "")

    def kill(self) -> None:
        """The worker and what its modules started: its process group outlives it when a module
        started a process that left the worker's own children (a daemon); first those that left
        its group too (setsid), while /proc still shows them below the worker."""
        if self.alive():
            kill_all(descendants(self.process.pid))
        if not kill_group(self.process.pid) and self.alive():
            self.process.kill()
        self.process.wait()
        self._cut_lifeline()
        _LIVE.discard(self)

    def _cut_lifeline(self) -> None:
        # Once only: an interrupted run kills from the main thread while a lane may close.
        with self.lifeline_lock:
            if self.lifeline >= 0:
                os.close(self.lifeline)
                self.lifeline = -1

    def close(self) -> None:
        if self.alive() and self.ready:  # one still importing JAX (prestarted, never used) is killed
            try:
                self.jobs.close()  # end of jobs: the worker exits
                self.process.wait(timeout=10)
            except (subprocess.TimeoutExpired, OSError):
                pass
        self.kill()
        for handle in (self.jobs, self.results, self.stderr):
            try:
                handle.close()
            except OSError:
                pass


_LIVE: weakref.WeakSet[Worker] = weakref.WeakSet()  # started and not yet killed, in any pool


def kill_every_worker() -> None:
    """Kill every worker this process started and has not killed yet, in whatever pool (a lane's,
    the editor server's, the fix verifier's fresh ones): the process is stopping."""
    for worker in list(_LIVE):
        worker.kill()


class WorkerPool:
    """One live worker at a time, replaced after a timeout or crash, and by one with other CPU
    devices for a job that asks for them (``Job.devices``)."""

    def __init__(self, timeout: float = DEFAULT_TIMEOUT) -> None:
        self.timeout = timeout
        self.worker: Worker | None = None
        self.jax_import = 0.0
        self.started = 0  # workers started: zero means JAX was never imported

    def warm(self, devices: int | None = None) -> None:
        """A live worker with ``devices`` CPU devices, JAX imported (started now if there is none):
        the editor server's first save does not wait for the import. Raises WorkerFailure."""
        if self.worker is not None and xla_flags(self.worker.devices) != xla_flags(devices):
            self.close()  # JAX reads the device count once, when its backend starts
        if self.worker is not None and not self.worker.alive():
            # It died after its last result (e.g. a thread the previous module started):
            # not the next module's fault, so start afresh rather than blame it.
            self.close()
        if self.worker is None:
            self.prestart(devices)
        if not self.worker.ready:
            try:
                self.worker.wait_ready()
            except BaseException:
                self.worker = None
                raise
            self.jax_import += self.worker.jax_import

    def prestart(self, devices: int | None = None) -> None:
        """Start a worker now without waiting for its JAX import, so that the import runs while this
        process does something else (the fix verifier's fresh workers); ``warm`` waits for it."""
        if self.worker is None:
            self.started += 1
            self.worker = Worker(devices, wait=False)

    def run(self, job: Job) -> Result:
        """The job's result; raises WorkerFailure (the worker is then discarded)."""
        self.warm(job.devices)
        try:
            return self.worker.run(job, self.timeout)
        except WorkerFailure:
            self.close()
            raise

    def close(self) -> None:
        if self.worker is not None:
            self.worker.close()
            self.worker = None

    def kill(self) -> None:
        """Stop the worker now, with every process its modules started (an interrupted run)."""
        worker = self.worker
        if worker is not None:
            worker.kill()

    def __enter__(self) -> WorkerPool:
        return self

    def __exit__(self, kind: Any, *exc: Any) -> None:
        if kind is not None and not issubclass(kind, Exception):  # interrupted: no graceful wait
            self.kill()
        self.close()


class FreshWorkers:
    """Pools whose workers have run nothing (the fix verifier imports each fixed text in one, with
    no state left from an earlier import), started ahead of need: their JAX imports overlap the
    check's own work. Each pool is taken once; those never taken are killed on ``close``."""

    def __init__(self, timeout: float, count: int = 0, devices: int | None = None) -> None:
        self.timeout = timeout
        self.spares: list[WorkerPool] = []
        for _ in range(count):
            self.spares.append(self._started(devices))

    def _started(self, devices: int | None) -> WorkerPool:
        pool = WorkerPool(self.timeout)
        pool.prestart(devices)
        return pool

    def take(self, devices: int | None = None) -> WorkerPool:
        """A pool with a fresh worker, started earlier if one was, else now (not waited for); the
        caller closes it. A worker with other CPU devices is replaced when the job runs."""
        return self.spares.pop(0) if self.spares else self._started(devices)

    def kill(self) -> None:
        for pool in self.spares:
            pool.kill()

    def close(self) -> None:
        for pool in self.spares:
            pool.close()
        self.spares.clear()
