"""jax-md's prune_neighbor_list_dense gather (partition.py:942, JX312's finding in its tests) as a
standalone program at the tests' size (2500 particles, 135 neighbours), the same with the
coordinates first (positions stored (3, N)), and with one gather per coordinate.

    python bench/tpu_padding_gather.py chip       # on the chip: memory and median of 20 calls
    JAX_PLATFORMS=cpu python bench/tpu_padding_gather.py deviceless   # here, compiled for tpu-v5e
"""
import json
import statistics
import sys
import time

import jax
import jax.numpy as jnp
import numpy as np


def prune(position, idx):
    neigh_position = position[idx]
    dR = jnp.sum((position[:, None, :] - neigh_position) ** 2, axis=-1)
    mask = (dR < 1.0) & (idx < position.shape[0])
    return jnp.where(mask, idx, position.shape[0])

def prune_coordinates_first(position_t, idx):
    neigh = position_t[:, idx]  # (3, N, K): the small axis leads
    dR = jnp.sum((position_t[:, :, None] - neigh) ** 2, axis=0)
    mask = (dR < 1.0) & (idx < position_t.shape[1])
    return jnp.where(mask, idx, position_t.shape[1])

def prune_per_coordinate(position_t, idx):
    # one gather per coordinate: each result is (N, K), no axis of 3 among the two minor ones
    dR = sum((position_t[c][:, None] - position_t[c][idx]) ** 2 for c in range(position_t.shape[0]))
    mask = (dR < 1.0) & (idx < position_t.shape[1])
    return jnp.where(mask, idx, position_t.shape[1])

N, K = 2500, 135
report = {}
for name, fn, shape in (("prune", prune, (N, 3)), ("coordinates first", prune_coordinates_first, (3, N)),
                          ("one gather per coordinate", prune_per_coordinate, (3, N))):
    args = (jax.ShapeDtypeStruct(shape, jnp.float32), jax.ShapeDtypeStruct((N, K), jnp.int32))
    if sys.argv[1] == "chip":
        compiled = jax.jit(fn).lower(*args).compile()
    else:
        from jaxlint.chips import parse_target
        from jaxlint.ir import target_devices
        target_devices.use(parse_target("tpu-v5e"))
        compiled = target_devices.lower_function(fn, list(args)).compile()
    m = compiled.memory_analysis()
    entry = {"temp": m.temp_size_in_bytes, "argument": m.argument_size_in_bytes, "output": m.output_size_in_bytes}
    if sys.argv[1] == "chip":
        rng = np.random.default_rng(0)
        values = (jnp.asarray(rng.random(shape, dtype=np.float32) * 10),
                  jnp.asarray(rng.integers(0, N, (N, K), dtype=np.int32)))
        for _ in range(3):
            jax.block_until_ready(compiled(*values))
        times = []
        for _ in range(20):
            started = time.perf_counter()
            jax.block_until_ready(compiled(*values))
            times.append(time.perf_counter() - started)
        entry["median_ms"] = statistics.median(times) * 1e3
    report[name] = entry
print(json.dumps(report, indent=1))
