"""The TPU target against a real chip: what jaxlint compiles deviceless for ``tpu-v5e`` (no TPU,
libtpu's compile-only device) against what the chip itself compiles and runs.

    python bench/tpu_chip.py deviceless OUT.json  # JAX_PLATFORMS=cpu: jaxlint explain --target tpu-v5e
                                                  # per program, and each compiled deviceless
    python bench/tpu_chip.py chip OUT.json        # on a v5e chip: compiled there, and timed
    python bench/tpu_chip.py compare DEVICELESS.json CHIP.json   # the table for docs/performance.md

Programs: bench/tpu_programs.py. Time on the chip: the median of 20 calls after 3 warm-up calls,
each call waited for (block_until_ready), and 50 calls queued with one wait at the end (the
host's dispatch overlapped, as in a training loop; the figure the estimate is compared with). Deviceless and chip programs are compared by their
HLO text with metadata, file tables and backend_config removed (tpu-facts.md: only those differ).
"""
from __future__ import annotations

import hashlib
import json
import os
import re
import statistics
import subprocess
import sys
import time
from typing import Any

HERE = os.path.dirname(os.path.abspath(__file__))
REPO = os.path.dirname(HERE)


def _normalized(hlo: str) -> str:
    """The program without what says where it came from: metadata, the file tables, the module
    name, and each instruction's annotations after its operands (sharding, frontend attributes,
    backend_config: a committed deviceless input says `sharding={replicated}` where the chip's
    uncommitted one says nothing, and backend_config's JSON keys come in another order)."""
    text = re.sub(r"^(FileNames|FunctionNames|FileLocations|StackFrames)\n(.+\n)*\n", "", hlo, flags=re.M)
    lines = []
    for line in text.splitlines():
        if line.startswith("HloModule"):
            line = "HloModule " + (re.search(r"entry_computation_layout=\{.*?\}(?=, )", line) or [""])[0]
        line = re.sub(r", metadata=\{[^}]*\}", "", line)
        line = re.split(r", (?:sharding|frontend_attributes|backend_config)=|,\{\"|,\"", line)[0]
        lines.append(line)
    return "\n".join(lines)


def _figures(compiled: Any) -> dict[str, Any]:
    cost = compiled.cost_analysis()
    cost = (cost[0] if isinstance(cost, (list, tuple)) else cost) or {}
    memory = compiled.memory_analysis()
    text = _normalized(compiled.as_text())
    return {"flops": cost.get("flops"), "bytes": cost.get("bytes accessed"),
            "optimal_seconds": cost.get("optimal_seconds"),
            "memory": {name: getattr(memory, name) for name in ("argument_size_in_bytes", "output_size_in_bytes",
                                                                  "temp_size_in_bytes", "alias_size_in_bytes")},
            "hlo_sha256": hashlib.sha256(text.encode()).hexdigest()[:16], "hlo": text,
            "hlo_instructions": sum(1 for line in text.splitlines() if " = " in line)}


def deviceless(out: str) -> None:
    sys.path[:0] = [REPO, HERE]
    from tpu_programs import PROGRAMS

    from jaxlint.chips import parse_target
    from jaxlint.ir import target_devices

    target_devices.use(parse_target("tpu-v5e"))
    results: dict[str, Any] = {}
    for name, (function, args) in PROGRAMS.items():
        started = time.perf_counter()
        explained = subprocess.run([sys.executable, "-m", "jaxlint", "explain", "--target", "tpu-v5e", "--format",
                                    "json", f"{os.path.join(HERE, 'tpu_programs.py')}::{name}"],
                                   capture_output=True, text=True, cwd=REPO)
        explain_seconds = time.perf_counter() - started
        report = json.loads(explained.stdout) if explained.returncode == 0 else {}
        # Lowered as the chip lowers it (the jit's own lower), its inputs on the compile-only chip.
        compiled = function.lower(*target_devices.place_tree(list(args))).compile()
        results[name] = {**_figures(compiled), "estimate": (report.get("cost") or {}).get("time"),
                         "hbm": (report.get("memory") or {}).get("hbm"), "explain_seconds": explain_seconds,
                         "explain_error": explained.stderr[-500:] if explained.returncode else None}
        print(name, json.dumps(results[name]["estimate"]), flush=True)
    with open(out, "w") as handle:
        json.dump(results, handle, indent=1)


def chip(out: str) -> None:
    sys.path[:0] = [HERE]
    import jax
    import numpy as np
    from tpu_programs import PROGRAMS

    assert jax.devices()[0].platform == "tpu", jax.devices()
    results: dict[str, Any] = {}
    rng = np.random.default_rng(0)
    for name, (function, args) in PROGRAMS.items():
        values = jax.tree_util.tree_map(
            lambda s: jax.device_put(rng.standard_normal(s.shape, dtype=np.float32).astype(s.dtype)), list(args))
        compiled = function.lower(*values).compile()
        for _ in range(3):
            jax.block_until_ready(compiled(*values))
        seconds = []
        for _ in range(20):
            started = time.perf_counter()
            jax.block_until_ready(compiled(*values))
            seconds.append(time.perf_counter() - started)
        # 50 calls queued, one wait: what a training loop sees, the host's dispatch overlapped.
        started = time.perf_counter()
        outputs = [compiled(*values) for _ in range(50)]
        jax.block_until_ready(outputs)
        pipelined = (time.perf_counter() - started) / 50
        del outputs
        results[name] = {**_figures(compiled), "seconds": statistics.median(seconds), "min_seconds": min(seconds),
                         "pipelined_seconds": pipelined}
        print(name, results[name]["seconds"], flush=True)
    with open(out, "w") as handle:
        json.dump(results, handle, indent=1)


def compare(deviceless_path: str, chip_path: str) -> None:
    with open(deviceless_path) as handle:
        free = json.load(handle)
    with open(chip_path) as handle:
        real = json.load(handle)
    print("| program | HLO equal | memory equal | cost equal | estimate (bound) | chip, one call | chip, queued | "
          "queued / estimate |")
    print("|---|---|---|---|---|---|---|---|")
    for name, here in free.items():
        there = real.get(name)
        if there is None:
            continue
        for side in (here, there):  # figures written by an older _normalized: the same cut again
            side["hlo_sha256"] = hashlib.sha256(_normalized(side["hlo"]).encode()).hexdigest()[:16]
        estimate = here.get("estimate") or {}
        queued = there.get("pipelined_seconds", float("nan"))
        ratio = queued / estimate["seconds"] if estimate.get("seconds") else float("nan")
        print(f"| {name} | {here['hlo_sha256'] == there['hlo_sha256']} ({there['hlo_instructions']} instr.) | "
              f"{here['memory'] == there['memory']} | "
              f"{(here['flops'], here['bytes']) == (there['flops'], there['bytes'])} | "
              f"{estimate.get('seconds', float('nan')) * 1e3:.3f} ms ({estimate.get('bound')}) | "
              f"{there['seconds'] * 1e3:.3f} ms | {queued * 1e3:.3f} ms | {ratio:.2f}x |")


if __name__ == "__main__":
    {"deviceless": deviceless, "chip": chip, "compare": compare}[sys.argv[1]](*sys.argv[2:])
