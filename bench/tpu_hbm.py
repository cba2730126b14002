"""JX311's cases on a real TPU v5e chip (run there with the `device` tool; tests/data/hbm/steps.py):
each function compiled as the module calls it (fits, or the compiler's refusal with its figures),
then the changes JX311 says make them fit, compiled and run on real arrays.

    python bench/tpu_hbm.py OUT.json

Compare with `jaxlint check --target tpu-v5e --select JX311 --timeout 300 tests/data/hbm/steps.py`
(deviceless): docs/performance.md has both.
"""
from __future__ import annotations

import json
import os
import sys
import time
from typing import Any

sys.path.insert(0, os.path.join(os.path.dirname(os.path.dirname(os.path.abspath(__file__))), "tests", "data", "hbm"))

import jax  # noqa: E402
import jax.numpy as jnp  # noqa: E402
import steps  # noqa: E402

CASES = {
    "huge_step": (steps.huge_step, (steps.layers(32768), steps.batch(65536, 32768)), {}),
    "slice_step": (steps.slice_step, (steps.layers(4096), steps.batch(262144, 4096)), {}),
    "small_step": (steps.small_step, (steps.layers(4096), steps.batch(65536, 4096)), {}),
    "full_step": (steps.full_step, (steps.layers(4096), steps.batch(237568, 4096)), {}),
    "sgd": (steps.sgd, (steps.batch(45056, 32768), steps.batch(45056, 32768)), {}),
    # What JX311 says makes them fit, run on the chip:
    "slice_step, half the batch": (steps.slice_step, (steps.layers(4096), steps.batch(131072, 4096)), {}),
    "sgd, w donated": (steps.sgd, (steps.batch(45056, 32768), steps.batch(45056, 32768)), {"donate_argnums": 0}),
}
RUN = ("small_step", "full_step", "slice_step, half the batch", "sgd, w donated")


def _compiled(function: Any, args: Any, options: dict[str, Any]) -> dict[str, Any]:
    try:
        compiled = jax.jit(function, **options).lower(*args).compile()
    except Exception as error:  # noqa: BLE001 - the refusal is the answer
        return {"compiled": False, "error": str(error).splitlines()[0][:300]}
    memory = compiled.memory_analysis()
    needed = (memory.argument_size_in_bytes + memory.output_size_in_bytes + memory.temp_size_in_bytes
              - memory.alias_size_in_bytes)
    return {"compiled": True, "needed_gib": round(needed / 2 ** 30, 2), "executable": compiled}


def main(out: str) -> None:
    results: dict[str, Any] = {}
    for name, (function, args, options) in CASES.items():
        found = _compiled(function, args, options)
        executable = found.pop("executable", None)
        if executable is not None and name in RUN:
            values = jax.tree_util.tree_map(lambda s: jnp.full(s.shape, 0.01, s.dtype), list(args))
            started = time.perf_counter()
            try:
                jax.block_until_ready(executable(*values))
                found["ran"] = f"{time.perf_counter() - started:.3f} s"
            except Exception as error:  # noqa: BLE001
                found["ran"] = f"failed: {str(error).splitlines()[0][:300]}"
            del values
        results[name] = found
        print(name, json.dumps(found), flush=True)
    with open(out, "w") as handle:
        json.dump(results, handle, indent=1)


if __name__ == "__main__":
    main(sys.argv[1])
