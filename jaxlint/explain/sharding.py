"""The worker side of explain's communication section: the mesh a compiled program is partitioned
over and the shardings of its arguments and outputs, read from ``Compiled.input_shardings`` and
``output_shardings``, with the unsharded argument and output bytes from the traced avals; plain
JSON. The collectives themselves are read from the HLO text in the jaxlint process
(jaxlint/explain/communication.py)."""
from __future__ import annotations

import math
from typing import Any

import jax
import numpy as np


def sharding_facts(compiled: Any, closed: Any) -> dict[str, Any]:
    """{"mesh": {"axis_names", "shape"} or None, "arguments"/"outputs": a PartitionSpec text per
    array leaf ("P('data', None)"; None for a sharding XLA chose, which has no mesh), "unsharded":
    the global argument and output bytes}. JAX gives the outputs the mesh of a sharding constraint
    inside the function when no argument has one."""
    inputs = _leaves(compiled.input_shardings)
    outputs = _leaves(compiled.output_shardings)
    mesh = next((s.mesh for s in inputs + outputs if _named(s)), None)
    facts: dict[str, Any] = {
        "mesh": None if mesh is None else {"axis_names": [str(n) for n in mesh.axis_names],
                                           "shape": [int(n) for n in mesh.devices.shape]},
        "arguments": [spec_text(s.spec) if _named(s) else None for s in inputs],
        "outputs": [spec_text(s.spec) if _named(s) else None for s in outputs],
        "unsharded": {"argument_bytes": _bytes(closed.in_avals), "output_bytes": _bytes(closed.out_avals)},
    }
    return facts


def spec_text(spec: Any) -> str:
    """A PartitionSpec as users write it, the same on every JAX version: ``P('data', None)``,
    ``P(('x', 'y'), None)``; ``P()`` replicated."""
    def entry(item: Any) -> str:
        if isinstance(item, (tuple, list)):
            return "(" + ", ".join(repr(str(name)) for name in item) + ("," if len(item) == 1 else "") + ")"
        return "None" if item is None else repr(str(item))
    return "P(" + ", ".join(entry(item) for item in tuple(spec)) + ")"


def _leaves(shardings: Any) -> list[Any]:
    return jax.tree_util.tree_leaves(shardings, is_leaf=lambda s: hasattr(s, "device_set"))


def _named(sharding: Any) -> bool:
    return hasattr(sharding, "mesh") and hasattr(sharding, "spec") and hasattr(sharding.mesh, "devices")


def _bytes(avals: Any) -> int:
    total = 0
    for aval in avals:
        shape, dtype = getattr(aval, "shape", None), getattr(aval, "dtype", None)
        if shape is None or dtype is None or not all(isinstance(d, int) for d in shape):
            continue
        total += math.prod(shape) * np.dtype(dtype).itemsize
    return total
