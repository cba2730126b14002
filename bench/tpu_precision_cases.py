"""Each of JX709's cases (tests/data/precision/solves.py) run on a real TPU v5e chip: the relative
error (2-norm over every output) of the function at default precision and with JX709's fix in
effect (traced inside ``jax.default_matmul_precision("float32")``, which gives every product
``precision=HIGHEST``), against the same function in float64 on the host's CPU, from the same
random inputs (standard normal).

    PYTHONPATH=$PYTHONPATH:$PWD python bench/tpu_precision_cases.py OUT.json   # on the chip

Eigenvectors are compared by their eigenvalues only (their signs are arbitrary).
"""
from __future__ import annotations

import json
import os
import sys
from typing import Any

import numpy as np

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from tpu_precision_hlo import lowered_functions  # noqa: E402


def _relative(found: list[Any], reference: list[Any]) -> float:
    found_flat = np.concatenate([np.ravel(np.asarray(a, dtype=np.float64)) for a in found])
    reference_flat = np.concatenate([np.ravel(np.asarray(a, dtype=np.float64)) for a in reference])
    return float(np.linalg.norm(found_flat - reference_flat) / np.linalg.norm(reference_flat))


def main() -> None:
    import jax

    cases = lowered_functions()
    rng = np.random.default_rng(0)
    inputs = {name: [rng.standard_normal(a.shape).astype(np.float32) for a in args] for name, _, args, _ in cases}

    def outputs(name: str, value: Any) -> list[Any]:
        leaves = jax.tree_util.tree_leaves(value)
        return leaves[:1] if "eigh" in name else leaves  # eigenvalues only

    results: dict[str, Any] = {"devices": str(jax.devices())}
    on_chip = {}
    for name, jitted, _, _ in cases:
        default = outputs(name, jitted(*inputs[name]))
        with jax.default_matmul_precision("float32"):
            fixed = outputs(name, jitted(*inputs[name]))
        on_chip[name] = (default, fixed)
    jax.config.update("jax_enable_x64", True)
    cpu = jax.devices("cpu")[0]
    for name, jitted, _, _ in cases:
        args = [jax.device_put(a.astype(np.float64), cpu) for a in inputs[name]]
        reference = outputs(name, jitted(*args))
        default, fixed = on_chip[name]
        results[name] = {"default": _relative(default, reference), "float32 (the fix)": _relative(fixed, reference)}
    with open(sys.argv[1], "w", encoding="utf-8") as out:
        json.dump(results, out, indent=1)
    print(json.dumps(results, indent=1))


if __name__ == "__main__":
    main()
