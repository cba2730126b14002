"""Interrupted runs stop cleanly: SIGTERM (CI cancelling, ``timeout``) and Ctrl-C stop every worker
and what its modules started, print what had finished, exit 143 or 130, no traceback. After each
module, the worker ends the processes it started and gives the next module its standard streams
back. Through the real command line and real worker processes."""
from __future__ import annotations

import signal
import subprocess
import sys
import time
from pathlib import Path

import pytest
from helpers import gone

REPO = Path(__file__).resolve().parent.parent
FOUNDING = (REPO / "examples" / "founding.py").read_text()

# Started at import: a process that would run for a long time, its pid written down, then the
# module itself hangs at full CPU.
HANGING = '''\
import os
import subprocess
import sys

import jax

child = subprocess.Popen([sys.executable, "-c", "import time; time.sleep(600)"])
with open("pids.txt", "w") as out:
    out.write(f"{os.getpid()} {child.pid}")
while True:
    pass


# jaxlint: args x=f32[3]
@jax.jit
def f(x):
    return x + 1
'''


def wait_for(path: Path, process: subprocess.Popen) -> list[int]:
    """The pids the module wrote once it runs (the worker has started and imported it)."""
    for _ in range(1200):
        if path.exists() and len(path.read_text().split()) == 2:
            return [int(pid) for pid in path.read_text().split()]
        assert process.poll() is None, process.communicate()
        time.sleep(0.05)
    raise AssertionError("the module never ran")


@pytest.mark.skipif(not Path("/proc").is_dir(), reason="process checks read /proc")
@pytest.mark.parametrize("signum, status, name", [(signal.SIGTERM, 143, "SIGTERM"), (signal.SIGINT, 130, "SIGINT")])
def test_a_signal_stops_the_run_and_every_process_it_started(tmp_path: Path, signum: int, status: int,
                                                             name: str) -> None:
    (tmp_path / "hang.py").write_text(HANGING)
    (tmp_path / "fine.py").write_text(FOUNDING)
    # As a terminal's foreground process gets it: a background job (this suite run with `&` by a
    # shell without job control) inherits SIGINT ignored, and Python then never raises
    # KeyboardInterrupt.
    process = subprocess.Popen([sys.executable, "-m", "jaxlint", "check", "--jobs", "1", "hang.py", "fine.py"],
                               cwd=tmp_path, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True,
                               preexec_fn=lambda: signal.signal(signal.SIGINT, signal.SIG_DFL))
    worker, child = wait_for(tmp_path / "pids.txt", process)
    process.send_signal(signum)
    out, err = process.communicate(timeout=120)  # a guard against a hang, not a speed limit
    assert process.returncode == status, err
    # Files go in sorted order: fine.py was analyzed, hang.py was running.
    assert f"jaxlint: interrupted ({name}) after analyzing 1 of 2 modules; no report" in err
    assert "Traceback" not in err and out == ""
    for _ in range(200):  # SIGKILL is delivered at once; the kernel may take a moment to reap
        if gone(worker) and gone(child):
            break
        time.sleep(0.05)
    assert gone(worker) and gone(child)


# Loops at import at full CPU once it has written its worker's pid to NAME.txt.
LOOPS = '''\
import os

import jax

with open(__name__ + ".txt", "w") as out:
    out.write(str(os.getpid()))
while True:
    pass


# jaxlint: args x=f32[3]
@jax.jit
def f(x):
    return x + 1
'''


@pytest.mark.slow
@pytest.mark.skipif(not Path("/proc").is_dir(), reason="process checks read /proc")
@pytest.mark.parametrize("signum, status, name", [(signal.SIGTERM, 143, "SIGTERM"), (signal.SIGINT, 130, "SIGINT")])
def test_a_signal_stops_every_busy_worker_at_once(tmp_path: Path, signum: int, status: int, name: str) -> None:
    """Two workers busy (--jobs 2): the signal stops both, not when their modules time out."""
    for module in ("loop_a", "loop_b"):
        (tmp_path / f"{module}.py").write_text(LOOPS)
    process = subprocess.Popen([sys.executable, "-m", "jaxlint", "check", "--jobs", "2", "--timeout", "600",
                                "loop_a.py", "loop_b.py"],
                               cwd=tmp_path, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True,
                               preexec_fn=lambda: signal.signal(signal.SIGINT, signal.SIG_DFL))
    workers = []
    for module in ("loop_a", "loop_b"):
        for _ in range(2400):
            text = (tmp_path / f"{module}.txt").read_text() if (tmp_path / f"{module}.txt").exists() else ""
            if text:
                workers.append(int(text))
                break
            assert process.poll() is None, process.communicate()
            time.sleep(0.05)
    assert len(workers) == 2, "the modules never ran"
    process.send_signal(signum)
    try:  # both modules would run until their 600 s limit: far longer than this bound
        out, err = process.communicate(timeout=30)
    finally:
        process.kill()  # a failed run is not left behind
    assert process.returncode == status, err
    assert f"jaxlint: interrupted ({name}) after analyzing 0 of 2 modules; no report" in err
    for _ in range(100):
        if all(gone(pid) for pid in workers):
            break
        time.sleep(0.02)
    assert all(gone(pid) for pid in workers)
    cached = [path.read_text(errors="replace") for path in (tmp_path / ".jaxlint_cache").rglob("*")
              if path.is_file() and "scans" not in path.parts]
    assert not any("JX903" in text for text in cached)  # the interrupt's kill is no crash to remember


STARTS_A_PROCESS = FOUNDING + '''
import subprocess as _subprocess
import sys as _sys

_child = _subprocess.Popen([_sys.executable, "-c", "import time; time.sleep(600)"])
with open("child.txt", "w") as _out:
    _out.write(str(_child.pid))
'''

# Closes the worker's standard output and error, then defines a finding of its own.
CLOSES_STREAMS = '''\
import os
import sys

import jax

sys.stdout.close()
os.close(1)
os.close(2)


# jaxlint: args x=f32[3], y=f32[4,3]
@jax.jit
def closed(x, y):
    x, y = jax.vmap(lambda a, b: (a + 1, a * b), in_axes=(None, 0))(x, y)
    return x[0], y
'''


@pytest.mark.skipif(not Path("/proc").is_dir(), reason="process checks read /proc")
def test_a_process_a_module_starts_ends_with_its_job(tmp_path: Path) -> None:
    (tmp_path / "starts.py").write_text(STARTS_A_PROCESS)
    run = subprocess.run([sys.executable, "-m", "jaxlint", "check", "starts.py"], cwd=tmp_path,
                         capture_output=True, text=True, timeout=600)
    assert "JX101" in run.stdout, run.stderr
    pid = int((tmp_path / "child.txt").read_text())
    for _ in range(200):
        if gone(pid):
            break
        time.sleep(0.05)
    assert gone(pid)


def test_a_module_that_closes_stdout_and_stderr_does_not_break_the_next(tmp_path: Path) -> None:
    (tmp_path / "a_closes.py").write_text(CLOSES_STREAMS)
    (tmp_path / "b_founding.py").write_text(FOUNDING)
    (tmp_path / "c_prints.py").write_text(FOUNDING.replace("import jax\n", "import jax\nprint('hello')\n", 1))
    run = subprocess.run([sys.executable, "-m", "jaxlint", "check", "--jobs", "1", "--output-format", "concise",
                          "a_closes.py", "b_founding.py", "c_prints.py"],
                         cwd=tmp_path, capture_output=True, text=True, timeout=600)
    codes = sorted(line.split(": ")[1].split()[0] for line in run.stdout.splitlines() if ": JX" in line)
    assert codes == ["JX101", "JX101", "JX101"], run.stdout + run.stderr  # no JX901 "Bad file descriptor"


def test_fresh_workers_started_ahead_and_never_used_are_killed_on_close() -> None:
    """--fix starts the verifier's fresh workers before it knows whether anything is fixable: the
    ones never taken (still importing JAX, or ready) must not outlive the run."""
    from jaxlint.engine.pool import FreshWorkers

    fresh = FreshWorkers(timeout=60, count=2)
    taken = fresh.take()
    taken.warm()  # one waited for: ready, then closed as a used pool is
    spare = fresh.spares[0].worker.process
    assert spare.poll() is None
    fresh.close()
    taken.close()
    assert spare.wait(timeout=10) is not None and fresh.spares == []
    assert taken.worker is None
