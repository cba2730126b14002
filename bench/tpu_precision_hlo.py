"""JX709's evidence on a real chip: the precision of every product in tests/data/precision/solves.py
as the v5e chip compiles it, against jaxlint's deviceless compile for ``tpu-v5e``.

    python bench/tpu_precision_hlo.py chip OUT.json          # on the chip (the `device` tool)
    JAX_PLATFORMS=cpu python bench/tpu_precision_hlo.py deviceless OUT.json   # here, with libtpu
    python bench/tpu_precision_hlo.py compare DEVICELESS.json CHIP.json

Each function the module lowers is compiled; for each ``dot`` and ``convolution`` of the optimized
HLO the record is (the case file's line, its operand_precision or "default", its operand dtypes).
JX709 reports a product whose compiled dots are "default" with float32 operands (or that XLA
rounds to bfloat16 itself); the two compiles must agree for the rule's verdict to be the chip's.
"""
from __future__ import annotations

import json
import os
import re
import sys
from typing import Any

REPO = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
CASES = os.path.join(REPO, "tests", "data", "precision", "solves.py")
_DOT = re.compile(r"=\s+(\S+)\s+(dot|convolution)\((.*?)\)(.*)$")
_PRECISION = re.compile(r"operand_precision=\{([^}]*)\}")


def lowered_functions() -> list[tuple[str, Any, Any, Any]]:
    """(name, jitted function, args, kwargs) of every ``.lower(...)`` the case module makes."""
    import jax

    real_jit = jax.jit
    found: list[tuple[str, Any, Any, Any]] = []

    class Recorded:
        def __init__(self, function: Any, **options: Any) -> None:
            self.function, self.jitted = function, real_jit(function, **options)

        def __call__(self, *args: Any, **kwargs: Any) -> Any:
            return self.jitted(*args, **kwargs)

        def lower(self, *args: Any, **kwargs: Any) -> Any:
            found.append((getattr(self.function, "__name__", "?"), self.jitted, args, kwargs))
            return self.jitted.lower(*args, **kwargs)

    jax.jit = Recorded  # type: ignore[assignment]
    try:
        source = open(CASES, encoding="utf-8").read()
        exec(compile(source, CASES, "exec"), {"__name__": "solves", "__file__": CASES})
    finally:
        jax.jit = real_jit
    return found


def products(text: str) -> list[tuple[int, str, str]]:
    """(line in the case file, operand_precision, the dot's result shape) of every dot/convolution."""
    from jaxlint.ir import hlo

    module = hlo.parse(text)
    found = []
    for computation in module.computations.values():
        for instruction in computation.instructions:
            if instruction.opcode not in ("dot", "convolution"):
                continue
            line = next((f.line for f in module.stack(instruction) if f.file == CASES), 0)
            precision = _PRECISION.search(instruction.text)
            found.append((line, precision.group(1) if precision else "default", hlo.plain_shape(instruction.shape)))
    return sorted(found)


def compiled_texts(mode: str) -> dict[str, str]:
    import jax

    texts = {}
    for index, (name, jitted, args, kwargs) in enumerate(lowered_functions()):
        if mode == "chip":
            text = jitted.lower(*args, **kwargs).compile().as_text()
        else:
            from jaxlint.chips import parse_target
            from jaxlint.ir import target_devices

            target_devices.use(parse_target("tpu-v5e"))
            text = target_devices.lower_function(jitted, list(args)).compile().as_text()
        texts[f"{index}:{name}"] = text
    texts["_devices"] = str(jax.devices())
    return texts


def main() -> None:
    mode = sys.argv[1]
    if mode == "compare":
        deviceless, chip = (json.load(open(path, encoding="utf-8")) for path in sys.argv[2:4])
        same = 0
        for name in sorted(k for k in chip if not k.startswith("_")):
            agree = deviceless.get(name) == chip[name]
            same += agree
            print(f"{'same' if agree else 'DIFFERENT'}  {name}: chip {chip[name]}"
                  + ("" if agree else f"; deviceless {deviceless.get(name)}"))
        print(f"{same} of {len([k for k in chip if not k.startswith('_')])} programs: the same products and precisions")
        return
    texts = compiled_texts(mode)
    report = {name: products(text) if not name.startswith("_") else text for name, text in texts.items()}
    with open(sys.argv[2], "w", encoding="utf-8") as out:
        json.dump(report, out, indent=1)
    print(json.dumps(report, indent=1))


if __name__ == "__main__":
    main()
