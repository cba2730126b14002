"""At what precision the compiled program multiplies matrices (JX709), JAX-free: the products of
XLA's optimized module (``dot`` and ``convolution`` instructions, fused ones included) with the
precision XLA gives each and the user frames that made it, read from the HLO text
(jaxlint.ir.hlo). The worker compiles (jaxlint.ir.compile, kind "precision"); rules see only these
facts, through ``Program.compiled``.

On a TPU a float32 product without ``operand_precision`` (or with ``{default,default}``) runs as
one bfloat16 pass on the matrix unit (8 bits of mantissa); ``{high,high}`` as three passes
(bfloat16_3x, about 16 bits); ``{highest,highest}`` as six (float32's 24 bits). A product
``precision=HIGHEST`` asked for, or ``jax.default_matmul_precision("float32")`` around the trace,
shows ``operand_precision={highest,highest}``. XLA may round float32 operands to bfloat16 with
``convert`` instructions of its own before a product at default precision (seen in a loop body),
and give a product that feeds another at default precision a bfloat16 result, so a product's
operands or result may read bf16 where the user's operands were float32. XLA may also compute a
product without the matrix unit (a matrix-vector product becomes a multiply and a reduce in
float32): then no instruction of that line is a product, and nothing is reduced.
"""
from __future__ import annotations

from dataclasses import dataclass

from jaxlint.ir import hlo

PRODUCTS = ("dot", "convolution")
_ROUNDED = ("f32", "bf16")


@dataclass(frozen=True)
class Product:
    """One product instruction of the optimized module."""

    opcode: str  # "dot" or "convolution"
    dtypes: tuple[str, ...]  # of its operands, as HLO writes them ("f32", "bf16")
    result: str  # its result's dtype
    precision: tuple[str, ...]  # ``operand_precision`` per operand; () when XLA prints none (default)
    algorithm: str  # ``algorithm=`` (a dot algorithm preset chosen by the user), "" when none
    frames: tuple[tuple[str, int, int | None], ...]  # (file, line, column) of its user frames, innermost first

    @property
    def default_precision(self) -> bool:
        """XLA's default precision: no ``operand_precision`` beyond ``default`` and no algorithm."""
        return not self.algorithm and all(p == "default" for p in self.precision)

    @property
    def one_pass(self) -> bool:
        """A product of float32 or bfloat16 numbers at default precision: on a TPU, one bfloat16
        pass. Whether the user's operands were float32 is the jaxpr's to say: XLA writes the
        rounding of float32 operands as ``convert`` instructions of its own (a product in a loop
        body), and gives a product that feeds another at default precision a bfloat16 result."""
        return self.default_precision and self.result in _ROUNDED and all(d in _ROUNDED for d in self.dtypes)

    def made_at(self, path: str, line: int, column: int | None = None) -> bool:
        """Whether one of its user frames is ``path:line`` (at ``column``, 0-based UTF-8 bytes,
        where both it and the frame say one: JAX 0.4.35 writes the line alone)."""
        return any(f == path and n == line and (column is None or c is None or c == column)
                   for f, n, c in self.frames)


def products(text: str) -> list[Product]:
    """Every product instruction of the module's text; [] when it is not HLO text this reads."""
    try:
        module = hlo.parse(text)
    except ValueError:
        return []
    found = []
    for computation in module.computations.values():
        shapes = {i.name: i.shape for i in computation.instructions}
        for instruction in computation.instructions:
            if instruction.opcode not in PRODUCTS:
                continue
            dtypes = tuple(_dtype(shapes.get(name, "")) for name in instruction.operands[:2])
            frames = tuple((f.file, f.line, f.column) for f in module.stack(instruction))
            found.append(Product(instruction.opcode, dtypes, _dtype(instruction.shape),
                                 operand_precision(instruction.attrs.get("operand_precision", "")),
                                 instruction.attrs.get("algorithm", ""), frames))
    return found


def operand_precision(text: str) -> tuple[str, ...]:
    """``{highest,highest}`` -> ("highest", "highest"); "" -> ()."""
    return tuple(p.strip().lower() for p in text.strip().strip("{}").split(",") if p.strip())


def _dtype(shape: str) -> str:
    arrays = hlo.arrays(shape)
    return arrays[0][0] if arrays else ""


def one_pass_at(found: list[Product], path: str, line: int, column: int | None = None) -> list[Product]:
    """The products run as one bfloat16 pass made at ``path:line`` (and ``column``)."""
    return [p for p in found if p.one_pass and p.made_at(path, line, column)]
