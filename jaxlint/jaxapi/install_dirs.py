"""Where JAX's and jaxlint's own files are installed, found without importing JAX (the log parsers
of logs.py ask it and must not import JAX)."""
from __future__ import annotations

import importlib.util
import os

PACKAGE_DIR = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))  # jaxlint/
# The folder of the jax package as jax.__file__ gives it; find_spec reads it without importing jax.
JAX_DIR = os.path.join(os.path.dirname(os.path.abspath(importlib.util.find_spec("jax").origin or "")), "")


def is_jax_file(path: str) -> bool:
    """A file of the jax package."""
    return os.path.abspath(path).startswith(JAX_DIR)
