"""What JX309 watches: the conversion methods of JAX's array class that hand a value to Python,
the files that convert on the caller's behalf, and jax.device_get's batched read."""
from __future__ import annotations

import os

import jaxlib
import numpy as np

from jaxlint.jaxapi.install_dirs import JAX_DIR

# --- host syncs (JX309) ---------------------------------------------------------------------------
# The methods of a device array that hand its value to Python, and what the message calls each.
# ``ArrayImpl`` (``jax._src.array``, a C++ type with these Python methods set on it, in 0.4.35 and
# 0.10.2 alike) takes new ones with ``setattr`` and gives the originals back the same way.
# ``np.asarray``/``np.array`` read a CPU array through the buffer protocol, which no Python method
# sees; on an accelerator they call ``__array__``.
ARRAY_CONVERSIONS = {"__float__": "float", "__int__": "int", "__bool__": "bool", "__index__": "index",
                     "__complex__": "complex", "__format__": "format", "__str__": "str", "__repr__": "repr",
                     "item": ".item()", "tolist": ".tolist()", "__array__": "np.asarray"}
# Folders of the libraries that convert an array on the caller's behalf (``jax.device_get``,
# ``jnp.zeros(n)``): a conversion made in them is placed at the project's frame that called them.
_NUMPY_DIR = os.path.join(os.path.dirname(os.path.abspath(np.__file__)), "")
_JAXLIB_DIR = os.path.join(os.path.dirname(os.path.abspath(jaxlib.__file__)), "")


# The functions of ``jax.device_get`` (``jax._src.api``), through which a conversion is the batched
# read JX309 recommends: a whole list of values fetched at once, every k steps.
BATCHED_READS = frozenset({"device_get", "_device_get"})


def device_array_class() -> type:
    from jax._src.array import ArrayImpl

    return ArrayImpl


def is_conversion_machinery(path: str) -> bool:
    """A file of JAX, jaxlib or NumPy."""
    return path.startswith((JAX_DIR, _JAXLIB_DIR, _NUMPY_DIR))
