"""What the compile target adds to the explain report: the memory against the chip's HBM and an
estimated time per call from the chip's published peaks (a roofline: the larger of FLOPs at the
peak rate and bytes at the peak bandwidth). JAX-free; the worker sends the target's facts."""
from __future__ import annotations

from typing import Any

from jaxlint.ir import hbm

# Below this many seconds a call's fixed cost on the chip outweighs the estimate: the founding
# example, 30 ns by its peaks, took 0.18 ms a call on a v5e with calls queued (docs/performance.md).
TINY = 1e-4


def hbm_use(chip: dict[str, Any] | None, memory: dict[str, Any], partitions: int = 1) -> dict[str, Any] | None:
    """Peak bytes (arguments + outputs + temporaries - aliased, as XLA's memory_analysis gives
    them for one device) against the chip's available HBM; None on the CPU or without figures."""
    if not chip or not chip.get("is_tpu") or not chip.get("hbm_bytes"):
        return None
    parts = [memory.get(key) for key in ("argument_bytes", "output_bytes", "temp_bytes")]
    if any(part is None for part in parts):
        return None
    peak = sum(parts) - (memory.get("alias_bytes") or 0)
    share = peak / chip["hbm_bytes"]
    note = None
    figures = f"{hbm.gib(peak)} of the {hbm.gib(chip['hbm_bytes'])} of HBM one {chip['chip_label']} chip has ({share:.0%})"
    if share >= 1:
        note = f"needs {figures}: it does not fit (JX311 says what would)"
    elif share >= hbm.NEAR:  # JX311 reports only what does not fit; explain says what is close
        note = (f"needs {figures}: it fits, with {hbm.gib(chip['hbm_bytes'] - peak)} to spare; a larger batch or "
                "another buffer may not")
    return {"peak_bytes": peak, "hbm_bytes": chip["hbm_bytes"], "share": share, "per_device": partitions > 1,
            "note": note}


def time_estimate(chip: dict[str, Any] | None, flops: float | None, nbytes: float | None) -> dict[str, Any] | None:
    """Seconds per call on one chip of the target at its peaks, for one chip's ``flops`` and
    ``nbytes``, and which bound dominates; None on the CPU or without figures."""
    if not chip or not chip.get("is_tpu") or flops is None or nbytes is None:
        return None
    compute = flops / chip["bf16_flops"]
    memory = nbytes / chip["hbm_bandwidth"]
    bound = "memory" if memory >= compute else "compute"
    label = (f"at the peaks of one {chip['chip_label']} chip ({chip['bf16_flops'] / 1e12:.0f} TFLOP/s bf16, "
             f"{chip['hbm_bandwidth'] / 1e9:.0f} GB/s HBM): the larger of FLOPs / peak and bytes / bandwidth, "
             "from the trip-count-aware estimate")
    if max(compute, memory) < TINY:
        label += "; each call also costs the chip about 0.2 ms more (measured on a v5e), which dominates here"
    return {"seconds": max(compute, memory), "compute_seconds": compute, "memory_seconds": memory,
            "bound": bound, "label": label}


def chip_facts(name: str, label: str, chip_label: str, is_tpu: bool, hbm_bytes: int | None, bf16_flops: float,
               hbm_bandwidth: float, chips: int) -> dict[str, Any]:
    """The worker's description of its target for the report."""
    return {"name": name, "label": label, "chip_label": chip_label, "is_tpu": is_tpu, "hbm_bytes": hbm_bytes,
            "bf16_flops": bf16_flops, "hbm_bandwidth": hbm_bandwidth, "chips": chips}


def refused(chip: dict[str, Any] | None, compile_error: str | None) -> dict[str, Any] | None:
    """The HBM figures of XLA's refusal (RESOURCE_EXHAUSTED: what the program needs, what the chip
    has), as ``hbm_use`` gives them; None for another error."""
    found = hbm.parse_required(compile_error) if chip and chip.get("is_tpu") and compile_error else None
    if found is None:
        return None
    peak, available = found
    return {"peak_bytes": peak, "hbm_bytes": available, "share": peak / available, "per_device": False,
            "note": f"does not fit: XLA's compiler for {chip['chip_label']} refuses it, needing "
                    f"{hbm.gib(peak)} of the chip's {hbm.gib(available)} (JX311 says what would make it fit)"}
