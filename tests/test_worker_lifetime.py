"""A worker never outlives jaxlint (issue 30): when the jaxlint process that started it ends,
however it ends (SIGKILL included), the worker and every process its module started end within
two seconds; the same for the editor server (killed, or its stdin closed without ``shutdown``)
and for the test run of ``jaxlint record``. A worker whose parent is stuck ends itself when its
job runs far past the time limit it was given. Through real processes, found in /proc."""
from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
import time
from pathlib import Path

import pytest
from helpers import gone

from jaxlint import scan
from jaxlint.engine.jobs import make_job
from jaxlint.engine.pool import Worker
from jaxlint.model import Settings
from jaxlint.processes import descendants
from jaxlint.text import read_source

pytestmark = pytest.mark.skipif(not Path("/proc").is_dir(), reason="process checks read /proc")

GONE_WITHIN = 2.0  # seconds, as the issue asks

# Loops forever at import, once it has written its worker's pid to pids.txt.
LOOPS = '''\
import os

import jax

with open("pids.txt", "w") as out:
    out.write(f"{os.getpid()}")
while True:
    pass


# jaxlint: args x=f32[3]
@jax.jit
def f(x):
    return x + 1
'''

# Starts a process that leaves the worker's session (as a daemon does), then loops.
STARTS_A_PROCESS = '''\
import os
import subprocess
import sys

import jax

child = subprocess.Popen([sys.executable, "-c", "import time; time.sleep(600)"], start_new_session=True)
with open("pids.txt", "w") as out:
    out.write(f"{os.getpid()} {child.pid}")
while True:
    pass


# jaxlint: args x=f32[3]
@jax.jit
def f(x):
    return x + 1
'''

MODULES = {"loops": (LOOPS, 1), "starts a process": (STARTS_A_PROCESS, 2)}


def module_pids(folder: Path, count: int, process: subprocess.Popen) -> list[int]:
    """The pids the module wrote once it runs (its worker has started and imported it)."""
    path = folder / "pids.txt"
    for _ in range(2400):
        if path.exists() and len(path.read_text().split()) == count:
            return [int(pid) for pid in path.read_text().split()]
        assert process.poll() is None, process.communicate()
        time.sleep(0.05)
    raise AssertionError("the module never ran")


def assert_all_gone(pids: list[int]) -> None:
    deadline = time.monotonic() + GONE_WITHIN
    while time.monotonic() < deadline and not all(gone(pid) for pid in pids):
        time.sleep(0.01)
    left = [pid for pid in pids if not gone(pid)]
    for pid in left:  # not left behind by a failed test
        os.kill(pid, signal.SIGKILL)
    assert left == [], f"still running {GONE_WITHIN} s later: {left} of {pids}"


def descendants_with(process: subprocess.Popen, pids: list[int]) -> list[int]:
    """Every process below ``process``, which must include the module's own ``pids``."""
    below = descendants(process.pid)
    assert set(pids) <= set(below), (pids, below)
    return below


@pytest.mark.slow
@pytest.mark.parametrize("module", sorted(MODULES))
def test_a_killed_check_leaves_no_process(tmp_path: Path, module: str) -> None:
    text, count = MODULES[module]
    (tmp_path / "mod.py").write_text(text)
    process = subprocess.Popen([sys.executable, "-m", "jaxlint", "check", "--timeout", "30", "mod.py"],
                               cwd=tmp_path, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    try:
        below = descendants_with(process, module_pids(tmp_path, count, process))
    finally:
        process.kill()
        process.wait()
    assert_all_gone(below)


def _message(body: dict) -> bytes:
    data = json.dumps(body).encode()
    return b"Content-Length: %d\r\n\r\n" % len(data) + data


def start_server(folder: Path) -> subprocess.Popen:
    """``jaxlint server`` with mod.py opened in it: its check runs the module in the warm worker."""
    pytest.importorskip("pygls")
    server = subprocess.Popen([sys.executable, "-m", "jaxlint", "server"], cwd=folder, stdin=subprocess.PIPE,
                              stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    path = folder / "mod.py"
    for body in ({"jsonrpc": "2.0", "id": 1, "method": "initialize",
                  # The editor trusts its workspace: the server runs code only in trusted folders.
                  "params": {"processId": None, "rootUri": folder.as_uri(), "capabilities": {},
                             "initializationOptions": {"trusted": True}}},
                 {"jsonrpc": "2.0", "method": "initialized", "params": {}},
                 {"jsonrpc": "2.0", "method": "textDocument/didOpen",
                  "params": {"textDocument": {"uri": path.as_uri(), "languageId": "python", "version": 1,
                                              "text": path.read_text()}}}):
        server.stdin.write(_message(body))
    server.stdin.flush()
    return server


@pytest.mark.slow
@pytest.mark.parametrize("how", ["killed", "stdin closed", "shutdown request"])
def test_the_editor_server_leaves_no_process(tmp_path: Path, how: str) -> None:
    (tmp_path / "mod.py").write_text(STARTS_A_PROCESS)
    server = start_server(tmp_path)
    try:
        below = descendants_with(server, module_pids(tmp_path, 2, server))
        if how == "killed":
            server.kill()
        elif how == "stdin closed":  # the editor died without `shutdown`
            server.stdin.close()
        else:  # in the middle of the check: its worker is killed, not waited for until its time limit
            server.stdin.write(_message({"jsonrpc": "2.0", "id": 2, "method": "shutdown"}))
            server.stdin.flush()
        assert_all_gone(below)
        if how == "stdin closed":  # and the server itself ends (a guard against a hang, not a speed limit)
            assert server.wait(timeout=60) == 0
    finally:
        server.kill()
        server.wait()


@pytest.mark.slow
def test_the_test_run_of_record_ends_with_jaxlint(tmp_path: Path) -> None:
    (tmp_path / "test_sleeps.py").write_text(
        "import os\nimport time\n\n\ndef test_sleeps():\n"
        "    with open('pids.txt', 'w') as out:\n        out.write(str(os.getpid()))\n"
        "    time.sleep(600)\n")
    record = subprocess.Popen([sys.executable, "-m", "jaxlint", "record", "--isolated", "--", sys.executable,
                               "-m", "pytest", "-q", "-p", "no:cacheprovider", "test_sleeps.py"],
                              cwd=tmp_path, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    try:
        below = descendants_with(record, module_pids(tmp_path, 1, record))
    finally:
        record.kill()
        record.wait()
    assert_all_gone(below)


@pytest.mark.slow
def test_a_worker_ends_itself_far_past_its_time_limit(tmp_path: Path) -> None:
    """The parent sends the job and then never reads the result nor kills the worker (stuck)."""
    (tmp_path / "mod.py").write_text(STARTS_A_PROCESS)
    path = str(tmp_path / "mod.py")
    job = make_job(read_source(path), scan.scan_source(path, STARTS_A_PROCESS), ["JX101"], Settings())
    cwd = os.getcwd()
    os.chdir(tmp_path)  # the module writes pids.txt where it runs
    try:
        worker = Worker()
    finally:
        os.chdir(cwd)
    try:
        worker.jobs.write(json.dumps({"job": job.to_json(), "timeout": 0.5}) + "\n")
        worker.jobs.flush()
        pids = module_pids(tmp_path, 2, worker.process)
        # Its own limit is 2 x 0.5 + 2 s; the bound is a guard against a worker that never ends.
        assert worker.process.wait(timeout=60) == -signal.SIGKILL
        assert_all_gone(pids)
    finally:
        worker.kill()
        worker.close()


@pytest.mark.slow
def test_the_program_of_jaxlint_run_ends_with_jaxlint(tmp_path: Path) -> None:
    (tmp_path / "sleeps.py").write_text(
        "import os\nimport subprocess\nimport sys\nimport time\n\n"
        "child = subprocess.Popen([sys.executable, '-c', 'import time; time.sleep(600)'], start_new_session=True)\n"
        "with open('pids.txt', 'w') as out:\n    out.write(f'{os.getpid()} {child.pid}')\n"
        "time.sleep(600)\n")
    run = subprocess.Popen([sys.executable, "-m", "jaxlint", "run", "--isolated", "--", "python", "sleeps.py"],
                           cwd=tmp_path, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    try:
        below = descendants_with(run, module_pids(tmp_path, 2, run))
    finally:
        run.kill()
        run.wait()
    assert_all_gone(below)
