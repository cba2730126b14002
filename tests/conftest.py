"""The suite runs on the CPU: its own processes and every subprocess it starts (jaxlint's workers,
pytest runs, programs) inherit JAX_PLATFORMS=cpu, so a libtpu installed for the TPU-target tests
(jaxlint[tpu]) never makes JAX look for a TPU at start-up. TPU targets compile through libtpu's
compile-only devices, which do not need the TPU platform (jaxlint/ir/target_devices.py)."""
import compileall
import os
import sys
from pathlib import Path

import pytest

import jaxlint

os.environ.setdefault("JAX_PLATFORMS", "cpu")

# Where the environment says not to write bytecode (PYTHONDONTWRITEBYTECODE=1), and jaxlint's
# workers never write it (the user's tree is not theirs to litter), every process the suite starts
# (a `check`'s parent and workers, a pytest session's plugin) would compile jaxlint's modules from
# source again: ~0.2 s of CPU per `check`. They are compiled once here, as an install from a wheel
# has them; files already compiled are skipped (the suite's xdist workers load this file too).
if sys.flags.dont_write_bytecode:
    compileall.compile_dir(Path(jaxlint.__file__).parent, quiet=2)


@pytest.fixture(scope="module")
def explain_jobs_in_process():
    """For the explain test files whose report is what they read, not the worker process:
    explain's jobs run in the test process (helpers.in_process_workers), without a worker's JAX
    import each. test_explain_html.py and test_explain_communication.py run explain with real
    workers."""
    from helpers import in_process_workers

    with in_process_workers():
        yield


# The pytest sessions the tests start (`pytest --jaxlint`, `jaxlint record -- pytest`, check's
# --rerun-tests) load only jaxlint's plugin and xdist's, not every plugin the test extra installs:
# pytest's autoload of hypothesis, pytest-lsp, jaxtyping, anyio and the rest costs ~1.8 s of CPU
# per session (and per xdist worker of one) measured on an empty one, and ~5 s on a small
# `pytest --jaxlint` one here (7.6 s against 2.6 s), where pytest also rewrites the asserts of
# every module of a plugin's distribution, jaxlint's included, each session when no bytecode is
# written: more than many of those sessions' own work.
# A fixture, not a module-level setting: the suite's own xdist workers start before any test runs
# and keep the plugins the suite needs (pytest-asyncio, pytest-lsp, hypothesis).
# A session that needs the autoload (the `pytest11` entry point, as a user's `pytest --jaxlint` finds
# the plugin: tests/test_pytest_plugin.py; another plugin's flag or option: test_docs.py's pytest
# --help, test_target.py's pytest.ini) runs with helpers.with_plugin_autoload(env).
# xdist's for the sessions run with -n; loaded this way `-p no:xdist` does not block it, and without
# -n it does nothing.
SESSION_PLUGINS = "jaxlint.pytest_plugin.hooks,xdist.plugin"


@pytest.fixture(scope="session", autouse=True)
def inner_pytest_sessions_load_only_jaxlints_plugin():
    saved = {name: os.environ.get(name) for name in ("PYTEST_DISABLE_PLUGIN_AUTOLOAD", "PYTEST_PLUGINS")}
    os.environ["PYTEST_DISABLE_PLUGIN_AUTOLOAD"] = "1"
    os.environ["PYTEST_PLUGINS"] = SESSION_PLUGINS
    yield
    for name, value in saved.items():
        if value is None:
            os.environ.pop(name, None)
        else:
            os.environ[name] = value
