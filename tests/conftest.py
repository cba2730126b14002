"""The suite runs on the CPU: its own processes and every subprocess it starts (jaxlint's workers,
pytest runs, programs) inherit JAX_PLATFORMS=cpu, so a libtpu installed for the TPU-target tests
(jaxlint[tpu]) never makes JAX look for a TPU at start-up. TPU targets compile through libtpu's
compile-only devices, which do not need the TPU platform (jaxlint/ir/target_devices.py)."""
import os

import pytest

os.environ.setdefault("JAX_PLATFORMS", "cpu")


@pytest.fixture(scope="module")
def explain_jobs_in_process():
    """For the explain test files whose report is what they read, not the worker process:
    explain's jobs run in the test process (helpers.in_process_workers), without a worker's JAX
    import each. test_explain_html.py and test_explain_communication.py run explain with real
    workers."""
    from helpers import in_process_workers

    with in_process_workers():
        yield
