"""The JAX release this process imports, as a tuple of ints: what every version branch of jaxapi/ compares."""
from __future__ import annotations

import jax

JAX_VERSION: tuple[int, ...] = tuple(int(p) for p in jax.__version__.split(".")[:3] if p.isdigit())
