"""Runs analysis jobs in worker processes, with a time limit per module.

A module that hangs or kills its worker costs only itself: the worker is replaced and the
remaining modules go on. JAX is imported once per worker.
"""
from __future__ import annotations

import json
import os
import selectors
import signal
import subprocess
import sys
import tempfile
import time
from typing import Any

DEFAULT_TIMEOUT = 60.0
STARTUP_TIMEOUT = 180.0  # importing JAX on a busy machine


class WorkerFailure(Exception):
    def __init__(self, kind: str, detail: str) -> None:
        super().__init__(detail)
        self.kind = kind  # "timeout" or "crash"
        self.detail = detail


class Worker:
    def __init__(self) -> None:
        read_fd, write_fd = os.pipe()
        self.stderr = tempfile.TemporaryFile()
        env = dict(os.environ)
        env.setdefault("JAX_PLATFORMS", "cpu")
        env["PYTHONUNBUFFERED"] = "1"
        package_parent = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
        env["PYTHONPATH"] = os.pathsep.join(p for p in (env.get("PYTHONPATH"), package_parent) if p)
        self.process = subprocess.Popen(
            [sys.executable, "-m", "jaxlint.worker", str(write_fd)],
            stdin=subprocess.PIPE, stdout=subprocess.DEVNULL, stderr=self.stderr,
            pass_fds=(write_fd,), env=env, start_new_session=True, text=True)
        os.close(write_fd)
        self.results = os.fdopen(read_fd, "rb")
        self.buffer = b""
        self.jax_import = 0.0
        ready = self._read_line(STARTUP_TIMEOUT)
        self.jax_import = ready.get("jax_import", 0.0)

    def run(self, job: dict[str, Any], timeout: float) -> dict[str, Any]:
        try:
            self.process.stdin.write(json.dumps(job) + "\n")
            self.process.stdin.flush()
        except (BrokenPipeError, OSError):
            raise WorkerFailure("crash", self._death_reason()) from None
        return self._read_line(timeout)

    def _read_line(self, timeout: float) -> dict[str, Any]:
        deadline = time.monotonic() + timeout
        with selectors.DefaultSelector() as selector:
            selector.register(self.results, selectors.EVENT_READ)
            while b"\n" not in self.buffer:
                remaining = deadline - time.monotonic()
                if remaining <= 0 or not selector.select(remaining):
                    self.kill()
                    raise WorkerFailure("timeout", f"no result within {timeout:g} s")
                chunk = os.read(self.results.fileno(), 1 << 20)
                if not chunk:
                    self.process.wait()
                    raise WorkerFailure("crash", self._death_reason())
                self.buffer += chunk
        line, _, self.buffer = self.buffer.partition(b"\n")
        return json.loads(line)

    def _death_reason(self) -> str:
        code = self.process.wait()
        if code < 0:
            try:
                reason = f"killed by signal {signal.Signals(-code).name}"
            except ValueError:
                reason = f"killed by signal {-code}"
        else:
            reason = f"exited with status {code}"
        self.stderr.seek(0)
        tail = self.stderr.read().decode(errors="replace").strip().splitlines()[-3:]
        return reason + (": " + " | ".join(tail) if tail else "")

    def kill(self) -> None:
        if self.process.poll() is None:
            try:
                os.killpg(self.process.pid, signal.SIGKILL)
            except (ProcessLookupError, PermissionError):
                self.process.kill()
            self.process.wait()

    def close(self) -> None:
        if self.process.poll() is None:
            try:
                self.process.stdin.close()
                self.process.wait(timeout=10)
            except (subprocess.TimeoutExpired, OSError):
                pass
        self.kill()
        self.results.close()
        self.stderr.close()


class WorkerPool:
    """One live worker at a time, replaced after a timeout or crash."""

    def __init__(self, timeout: float = DEFAULT_TIMEOUT) -> None:
        self.timeout = timeout
        self.worker: Worker | None = None
        self.jax_import = 0.0

    def run(self, job: dict[str, Any]) -> dict[str, Any]:
        """The job's result; raises WorkerFailure (the worker is then discarded)."""
        if self.worker is None:
            self.worker = Worker()
            self.jax_import += self.worker.jax_import
        try:
            return self.worker.run(job, self.timeout)
        except WorkerFailure:
            self.worker.close()
            self.worker = None
            raise

    def close(self) -> None:
        if self.worker is not None:
            self.worker.close()
            self.worker = None

    def __enter__(self) -> WorkerPool:
        return self

    def __exit__(self, *exc: Any) -> None:
        self.close()
