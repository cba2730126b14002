"""The compile target (`target` / ``--target``): the chip jaxlint compiles every function for.
JAX-free, so the parent can check the setting and name the target without importing JAX.

``cpu`` is the machine jaxlint runs on. A TPU target is compiled for without a TPU: libtpu
describes the chips of a topology (``jax.experimental.topologies``) and XLA's TPU compiler
builds the program a real chip would run (``jaxlint/ir/target_devices.py``); nothing opens a chip.
"""
from __future__ import annotations

import re
from dataclasses import dataclass

# What libtpu's topology names call each generation, the devices of one chip, and the chip's
# published peaks (jax._src.pallas.mosaic.tpu_info.get_tpu_info_for_chip; tests compare them).
# The HBM the compiler may use is read from the compiler itself (target_devices.available_hbm).


@dataclass(frozen=True)
class _Generation:
    label: str  # "TPU v5e"
    topology_name: str  # libtpu's: v5p is "v5"
    dimensions: int  # 2 for a v5e/v6e slice ("2x4"), 3 for v4/v5p ("2x2x1")
    megacore: bool  # two TensorCores run as one device (chip_config_name "megacore")
    bf16_flops: float  # per chip, per second
    hbm_bandwidth: float  # bytes per second, per chip


GENERATIONS: dict[str, _Generation] = {
    "v5e": _Generation("TPU v5e", "v5e", 2, False, 1.97e14, 8.2e11),
    "v6e": _Generation("TPU v6e", "v6e", 2, False, 9.2e14, 1.64e12),
    "v5p": _Generation("TPU v5p", "v5", 3, True, 4.59e14, 2.46e12),
    "v4": _Generation("TPU v4", "v4", 3, True, 2.75e14, 1.23e12),
}
FORMS = ("cpu", *(f"tpu-{g}" for g in GENERATIONS), "tpu-v5e:2x4", "tpu-v5p:2x2x1")
_NAME = re.compile(r"tpu-(?P<generation>[a-z0-9]+)(?::(?P<topology>[0-9x]+))?")


class TargetError(ValueError):
    """An unknown target, or one this installation cannot compile for (exit 2, one line)."""


@dataclass(frozen=True)
class Target:
    """Where the compiled figures come from: ``cpu``, one TPU chip, or a TPU slice."""

    name: str  # as written: "cpu", "tpu-v5e", "tpu-v5e:2x4"
    generation: str = ""  # "v5e"; "" for the CPU
    shape: tuple[int, ...] = ()  # the slice's chips per axis; () for the CPU

    @property
    def is_tpu(self) -> bool:
        return bool(self.generation)

    @property
    def chips(self) -> int:
        count = 1
        for size in self.shape:
            count *= size
        return count

    @property
    def label(self) -> str:
        """How messages name it: "CPU", "TPU v5e", "TPU v5e 2x4 slice (8 chips)"."""
        if not self.is_tpu:
            return "CPU"
        base = GENERATIONS[self.generation].label
        if self.chips == 1:
            return base
        return f"{base} {'x'.join(map(str, self.shape))} slice ({self.chips} chips)"

    @property
    def chip_label(self) -> str:
        """One chip of it: "TPU v5e" (the slice's label without its shape), "CPU"."""
        return GENERATIONS[self.generation].label if self.is_tpu else "CPU"

    @property
    def topology(self) -> str:
        """libtpu's topology name: "v5e:1x1", "v5:2x2x1"."""
        generation = GENERATIONS[self.generation]
        return f"{generation.topology_name}:{'x'.join(map(str, self.shape))}"

    @property
    def megacore(self) -> bool:
        return self.is_tpu and GENERATIONS[self.generation].megacore

    @property
    def bf16_flops(self) -> float:
        """Peak bfloat16 FLOP/s of one chip (0 for the CPU: not estimated)."""
        return GENERATIONS[self.generation].bf16_flops if self.is_tpu else 0.0

    @property
    def hbm_bandwidth(self) -> float:
        """Peak HBM bytes/s of one chip (0 for the CPU)."""
        return GENERATIONS[self.generation].hbm_bandwidth if self.is_tpu else 0.0


CPU = Target("cpu")


def parse_target(text: str) -> Target:
    """``text`` as a Target; TargetError naming the valid forms for anything else."""
    name = text.strip().lower() if isinstance(text, str) else text
    if name == "cpu":
        return CPU
    match = _NAME.fullmatch(name) if isinstance(name, str) else None
    forms = (f"valid targets are {', '.join(FORMS[:1 + len(GENERATIONS)])} (one chip), or a slice by "
             f"topology such as tpu-v5e:2x4 or tpu-v5p:2x2x1")
    if match is None or match["generation"] not in GENERATIONS:
        raise TargetError(f"unknown target {text!r}: {forms}")
    generation = GENERATIONS[match["generation"]]
    if match["topology"] is None:
        return Target(name, match["generation"], (1,) * generation.dimensions)
    parts = match["topology"].split("x")
    if len(parts) != generation.dimensions or not all(p.isdigit() and int(p) > 0 for p in parts):
        example = "2x4" if generation.dimensions == 2 else "2x2x1"
        raise TargetError(f"unknown topology {match['topology']!r} for {generation.label}: a slice of it is "
                          f"{generation.dimensions} sizes, e.g. tpu-{match['generation']}:{example}; {forms}")
    return Target(name, match["generation"], tuple(int(p) for p in parts))


def libtpu_pin() -> str | None:
    """The libtpu requirement the installed JAX declares for its ``tpu`` extra (``libtpu==0.0.42.*``);
    None when JAX is not installed or declares none."""
    import importlib.metadata  # here: a warm re-check on the CPU target imports no more than it needs

    try:
        requires = importlib.metadata.requires("jax") or []
    except importlib.metadata.PackageNotFoundError:
        return None
    for requirement in requires:
        spec, _, marker = requirement.partition(";")
        name = re.match(r"[A-Za-z0-9_.-]+", spec.strip())
        if name and name.group(0) == "libtpu" and "tpu" in marker:
            return spec.strip().replace(" ", "")
    return None


def install_line(pin: str | None) -> str:
    """What to run to get the libtpu the installed JAX pins: that pin itself (never ``jaxlint[tpu]``:
    PyPI's ``jaxlint`` is another project, and JAX 0.4.35's own ``tpu`` extra also needs a
    ``libtpu-nightly`` that only Google's index has)."""
    return f'pip install "{pin}"' if pin else 'pip install "jax[tpu]"'


def check_installed(target: Target) -> None:
    """TargetError with the one line that says what to install, when ``target`` is a TPU and the
    libtpu the installed JAX pins is missing or another version."""
    if not target.is_tpu:
        return
    import importlib.metadata
    import importlib.util

    pin = libtpu_pin()
    try:
        jax_version = importlib.metadata.version("jax")
    except importlib.metadata.PackageNotFoundError:
        jax_version = "?"
    wanted = f' ({pin}, which jax {jax_version} pins)' if pin else ""
    if importlib.util.find_spec("libtpu") is None:
        raise TargetError(f"target {target.name} compiles with libtpu, which is not installed: "
                          f"{install_line(pin)}{wanted}")
    if pin and "==" in pin:
        try:
            installed = importlib.metadata.version("libtpu")
        except importlib.metadata.PackageNotFoundError:
            return  # a libtpu from elsewhere (a TPU VM image): let the compile say whether it works
        wanted_version = pin.split("==", 1)[1]
        if not _matches(installed, wanted_version):
            raise TargetError(f"target {target.name}: libtpu {installed} is installed but jax {jax_version} "
                              f"needs {pin}: {install_line(pin)}")


def _matches(version: str, pattern: str) -> bool:
    """``0.0.42.1`` against ``0.0.42.*`` (pip's prefix match) or an exact version."""
    if pattern.endswith(".*"):
        prefix = pattern[:-2]
        return version == prefix or version.startswith(prefix + ".")
    return version == pattern
