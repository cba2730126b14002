"""The optimized HLO as the report shows it: every instruction that runs (fusion bodies and loop
bodies included, reducer computations not), with its fusion, the user line it came from, the
trip count of its loops and its FLOPs by XLA's conventions."""
from __future__ import annotations

import math
from dataclasses import dataclass
from typing import Any

from jaxlint.ir import hlo

CHEAP_ELEMENTWISE = frozenset({
    "add", "subtract", "multiply", "divide", "maximum", "minimum", "negate", "abs", "compare",
    "select", "and", "or", "xor", "not", "clamp", "floor", "ceil", "round-nearest-afz",
    "round-nearest-even", "sign", "convert", "remainder", "shift-left", "shift-right-logical",
    "shift-right-arithmetic", "popcnt", "is-finite", "real", "imag", "complex", "count-leading-zeros"})
# XLA counts these in "transcendentals", not in "flops".
TRANSCENDENTAL = frozenset({
    "exponential", "exponential-minus-one", "log", "log-plus-one", "tanh", "logistic", "sine",
    "cosine", "tan", "power", "sqrt", "rsqrt", "cbrt", "atan2", "erf"})
EXPENSIVE = TRANSCENDENTAL | {"dot", "convolution", "reduce", "reduce-window", "select-and-scatter",
                              "fft", "triangular-solve", "cholesky", "sort", "custom-call", "scatter"}
DATA_MOVEMENT = frozenset({
    "broadcast", "reshape", "transpose", "slice", "dynamic-slice", "dynamic-update-slice",
    "concatenate", "pad", "iota", "copy", "bitcast", "reverse", "bitcast-convert", "gather",
    "get-dimension-size", "copy-start", "copy-done"})
# Structure, not computation: never "an operation computed twice".
STRUCTURAL = frozenset({"parameter", "constant", "tuple", "get-tuple-element", "fusion", "call",
                        "while", "conditional", "opt-barrier", "after-all", "partition-id",
                        "replica-id", "add-dependency", "domain"})
_CALLERS_WITH_BODIES = ("calls", "body", "condition", "branch", "true_computation", "false_computation")


@dataclass
class Placed:
    """An instruction where it runs: its fusion, its loop, and how many times per call."""

    instruction: hlo.Instruction
    id: str
    fusion: str | None  # the fusion instruction whose computation holds it
    loop: str | None  # the innermost while loop around it
    trips: int | None  # runs per call: the product of known trip counts (None: a count unknown)


def place(module: hlo.Module) -> list[Placed]:
    """The instructions that run, in the module's text order, with where they run."""
    roles: dict[str, tuple[str | None, str | None, int | None]] = {module.entry: (None, None, 1)}
    pending = [module.entry]
    while pending:
        name = pending.pop()
        fusion, loop, trips = roles[name]
        for instruction in module.computations[name].instructions:
            for role, callee in hlo.called(instruction):
                if callee not in module.computations or callee in roles:
                    continue
                if role == "calls" or (role == "to_apply" and instruction.opcode == "call"):
                    roles[callee] = (instruction.name if instruction.opcode == "fusion" else fusion, loop, trips)
                elif role in ("body", "condition"):
                    count = hlo.trip_count(instruction)
                    inner = None if trips is None or count is None else trips * count
                    roles[callee] = (fusion, instruction.name, inner)
                elif role in _CALLERS_WITH_BODIES:
                    roles[callee] = (fusion, loop, trips)
                else:
                    continue  # reducers and comparators: described by their caller
                pending.append(callee)
    placed = []
    for computation in module.computations.values():
        if computation.name not in roles:
            continue
        fusion, loop, trips = roles[computation.name]
        for instruction in computation.instructions:
            placed.append(Placed(instruction, f"h{len(placed)}", fusion, loop, trips))
    return placed


def shapes(module: hlo.Module) -> dict[str, str]:
    return {i.name: i.shape for i in module.instructions().values()}


def flops(instruction: hlo.Instruction, shape_of: dict[str, str]) -> tuple[int | None, int]:
    """(FLOPs, transcendentals) of one execution, by XLA's cost-analysis conventions."""
    opcode = instruction.opcode
    out = hlo.elements(instruction.shape)
    if opcode in CHEAP_ELEMENTWISE:
        return out, 0
    if opcode in TRANSCENDENTAL:
        return 0, out
    if opcode == "dot" and instruction.operands:
        lhs = hlo.arrays(shape_of.get(instruction.operands[0], ""))
        dims = [int(d) for d in instruction.attrs.get("lhs_contracting_dims", "{}").strip("{}").split(",")
                if d.strip().isdigit()]
        if not lhs:
            return None, 0
        contracted = math.prod(lhs[0][1][d] for d in dims if d < len(lhs[0][1]))
        return 2 * out * contracted, 0
    if opcode == "reduce" and instruction.operands:
        inputs = instruction.operands[:max(len(instruction.operands) // 2, 1)]
        return sum(hlo.elements(shape_of.get(name, "")) for name in inputs), 0
    if opcode in DATA_MOVEMENT or opcode in STRUCTURAL:
        return 0, 0
    return None, 0


def operand_bytes(instruction: hlo.Instruction, shape_of: dict[str, str]) -> int:
    return sum(hlo.nbytes(shape_of.get(name, "")) for name in instruction.operands)


def hlo_section(module: hlo.Module, placed: list[Placed], path: str) -> dict[str, Any]:
    """The report's ``hlo`` section without its duplicates."""
    shape_of = shapes(module)
    instructions, members = [], {}
    for entry in placed:
        instruction = entry.instruction
        count, transcendentals = flops(instruction, shape_of)
        stack = module.stack(instruction)
        instructions.append({
            "id": entry.id, "name": instruction.name, "opcode": instruction.opcode,
            "computation": instruction.computation, "fusion": entry.fusion, "text": instruction.text,
            "line": module.line_in(instruction, path), "flops": count,
            "transcendentals": transcendentals, "shape": hlo.plain_shape(instruction.shape),
            "op_name": instruction.metadata.get("op_name"), "loop": entry.loop, "trips": entry.trips,
            "origin": f"{stack[0].file}:{stack[0].line}" if stack else None})
        if entry.fusion is not None:
            members.setdefault(entry.fusion, []).append(entry.id)
    by_name = {e.instruction.name: e for e in placed}
    fusions = []
    for name, ids in members.items():
        fusion = by_name.get(name)
        if fusion is None:
            continue
        fusions.append({"name": name, "id": fusion.id, "kind": fusion.instruction.attrs.get("kind", ""),
                        "instruction_ids": ids, "line": module.line_in(fusion.instruction, path)})
    return {"module_name": module.name, "instructions": instructions, "fusions": fusions}


def uncounted_bytes(module: hlo.Module, placed: list[Placed]) -> tuple[int, bool]:
    """(bytes XLA's ``bytes accessed`` leaves out, whether a trip count was unknown): XLA counts
    every instruction once, so an instruction run N times in loops misses N - 1 of its reads and
    writes at fusion boundaries."""
    shape_of = shapes(module)
    missing, unknown = 0, False
    for entry in placed:
        instruction = entry.instruction
        if entry.loop is None or entry.fusion is not None or instruction.opcode in (
                "parameter", "constant", "tuple", "get-tuple-element", "bitcast", "while", "copy"):
            continue
        if entry.trips is None:
            unknown = True
            continue
        missing += (entry.trips - 1) * boundary_bytes(module, instruction, shape_of)
    return missing, unknown


_SLICING = frozenset({"dynamic-slice", "slice", "gather"})


def boundary_bytes(module: hlo.Module, instruction: hlo.Instruction, shape_of: dict[str, str]) -> int:
    """Bytes one execution reads and writes in memory, as XLA counts them: a slice reads only the
    slice, an in-place dynamic-update-slice writes only the update."""
    opcode = instruction.opcode
    if opcode == "dynamic-update-slice" and len(instruction.operands) > 1:
        return 2 * hlo.nbytes(shape_of.get(instruction.operands[1], ""))
    if opcode in _SLICING:
        return 2 * hlo.nbytes(instruction.shape)
    callee = next((name for role, name in hlo.called(instruction) if role == "calls"), None)
    fused = module.computations.get(callee) if opcode == "fusion" and callee else None
    if fused is None:
        return operand_bytes(instruction, shape_of) + hlo.nbytes(instruction.shape)
    users: dict[str, list[hlo.Instruction]] = {}
    for inner in fused.instructions:
        for operand in inner.operands:
            users.setdefault(operand, []).append(inner)
    root = _through_bitcasts(fused, fused.root)
    in_place = root is not None and root.opcode == "dynamic-update-slice"
    total = 0
    for index, operand in enumerate(instruction.operands):
        parameter = fused.parameter(index)
        uses = users.get(parameter.name, []) if parameter is not None else []
        if in_place and root.operands and _through_bitcasts(fused, _named(fused, root.operands[0])) is parameter:
            continue  # the buffer updated in place: neither read nor rewritten whole
        if uses and all(use.opcode in _SLICING for use in uses):
            total += sum(hlo.nbytes(use.shape) for use in uses)
        else:
            total += hlo.nbytes(shape_of.get(operand, ""))
    if in_place and len(root.operands) > 1:
        return total + hlo.nbytes(_named(fused, root.operands[1]).shape if _named(fused, root.operands[1]) else "")
    return total + hlo.nbytes(instruction.shape)


def _named(computation: hlo.Computation, name: str) -> hlo.Instruction | None:
    return next((i for i in computation.instructions if i.name == name), None)


def _through_bitcasts(computation: hlo.Computation, instruction: hlo.Instruction | None) -> hlo.Instruction | None:
    while instruction is not None and instruction.opcode == "bitcast" and instruction.operands:
        instruction = _named(computation, instruction.operands[0])
    return instruction
