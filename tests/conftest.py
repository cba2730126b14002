"""The suite runs on the CPU: its own processes and every subprocess it starts (jaxlint's workers,
pytest runs, programs) inherit JAX_PLATFORMS=cpu, so a libtpu installed for the TPU-target tests
(jaxlint[tpu]) never makes JAX look for a TPU at start-up. TPU targets compile through libtpu's
compile-only devices, which do not need the TPU platform (jaxlint/ir/target_devices.py)."""
import os

os.environ.setdefault("JAX_PLATFORMS", "cpu")
