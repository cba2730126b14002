"""Explain's communication section, built in the jaxlint process: every collective of a partitioned
compiled program (kind, bytes, the mesh axes it runs over, the source line or the sharding that
made it, its loop and its runs per call) and the per-device memory next to the unsharded figures.
The mesh and the shardings come from the worker (jaxlint/explain/sharding.py)."""
from __future__ import annotations

import re
from typing import Any

from jaxlint.explain import hlomap
from jaxlint.ir import hlo
from jaxlint.ir.replica_groups import device_groups, mesh_axes_of_groups, mesh_axes_of_pairs

KINDS = ("all-gather", "all-reduce", "reduce-scatter", "all-to-all", "collective-permute",
         "ragged-all-to-all", "collective-broadcast")
_PARTITIONS = re.compile(r"\bnum_partitions=(\d+)")
# A collective without metadata is traced back to a parameter through these.
_PASS_THROUGH = frozenset({"bitcast", "copy", "reshape", "transpose", "get-tuple-element", "slice",
                           "dynamic-slice", "fusion", "call", "convert"})
BYTES_LABEL = ("of one run on one device: the gathered result of an all-gather, the operand of a "
               "reduce-scatter, the buffer exchanged by the others (operand and result are the same size)")
UNSHARDED_LABEL = ("unsharded: the global argument and output sizes from the traced avals (what one "
                   "device holds without sharding); temporaries have no unsharded figure")


def partitions(hlo_text: str) -> int:
    """The devices the compiled program is partitioned over (``num_partitions``; 1 when absent)."""
    match = _PARTITIONS.search(hlo_text.split("\n", 1)[0])
    return int(match[1]) if match else 1


def section(module: hlo.Module, placed: list[hlomap.Placed], hlo_text: str, path: str,
            data: dict[str, Any]) -> dict[str, Any]:
    """The communication section of a compiled function: ``sharded`` False (and nothing else to
    say) when its program runs on one device."""
    devices = partitions(hlo_text)
    facts = data.get("sharding") or {}
    if devices <= 1:
        return {"sharded": False, "devices": devices, "mesh": None, "collectives": [], "memory": None}
    mesh = facts.get("mesh")
    shape_of = hlomap.shapes(module)
    by_name = module.instructions()
    loops = {entry.instruction.name: entry.instruction for entry in placed if entry.instruction.opcode == "while"}
    collectives = []
    for entry in placed:
        instruction = entry.instruction
        kind = _kind(instruction.opcode)
        if kind is None:
            continue
        result_shape = _result_shape(instruction, placed)
        if kind == "reduce-scatter":
            nbytes = sum(hlo.nbytes(shape_of.get(name, "")) for name in instruction.operands)
        else:
            nbytes = hlo.nbytes(result_shape)
        frame_path, line = _source(module, instruction, path)
        loop = loops.get(entry.loop or "")
        runs = entry.trips
        collectives.append({
            "kind": kind, "name": instruction.name, "shape": _shape_text(result_shape), "bytes": nbytes,
            "axes": _axes(kind, instruction, devices, mesh),
            "groups": instruction.attrs.get("replica_groups") or instruction.attrs.get("source_target_pairs"),
            "path": frame_path, "line": line, "op_name": instruction.metadata.get("op_name"),
            "cause": None if line is not None else _cause(module, instruction, by_name, facts),
            "in_loop": entry.loop is not None,
            "loop_line": module.line_in(loop, path) if loop is not None else None,
            "runs_per_call": runs, "bytes_per_call": nbytes * runs if runs is not None else None})
    collectives.sort(key=lambda c: (c["line"] is None, c["line"] or 0))
    compiled = data.get("compiled") or {}
    unsharded = facts.get("unsharded") or {}
    return {"sharded": True, "devices": devices, "mesh": mesh,
            "arguments": facts.get("arguments", []), "outputs": facts.get("outputs", []),
            "collectives": collectives, "bytes_label": BYTES_LABEL,
            "memory": {"per_device": {key: compiled.get(key) for key in ("argument_bytes", "output_bytes", "temp_bytes")},
                       "unsharded": {"argument_bytes": unsharded.get("argument_bytes"),
                                     "output_bytes": unsharded.get("output_bytes")},
                       "unsharded_label": UNSHARDED_LABEL}}


def _kind(opcode: str) -> str | None:
    """The collective an opcode is: its async ``-start`` counts, its ``-done`` does not."""
    base = opcode[:-len("-start")] if opcode.endswith("-start") else opcode
    return base if base in KINDS else None


def _result_shape(instruction: hlo.Instruction, placed: list[hlomap.Placed]) -> str:
    """The shape a collective produces: an async start's tuple holds its operands too, so the
    matching ``-done`` says it."""
    if not instruction.opcode.endswith("-start"):
        return instruction.shape
    done = instruction.opcode[:-len("start")] + "done"
    return next((e.instruction.shape for e in placed if e.instruction.opcode == done
                 and e.instruction.operands[:1] == [instruction.name]), instruction.shape)


def _shape_text(shape: str) -> str:
    """The shape without layouts; a tuple of equal arrays (an all-to-all's pieces) as ``4 x f32[128,1,128]``."""
    plain = hlo.plain_shape(shape)
    if plain.startswith("("):
        parts = [part.strip() for part in plain.strip("()").split(", ") if part.strip()]
        if len(parts) > 1 and len(set(parts)) == 1:
            return f"{len(parts)} x {parts[0]}"
    return plain


def _source(module: hlo.Module, instruction: hlo.Instruction, path: str) -> tuple[str | None, int | None]:
    """(file, line) that made the collective: the innermost frame in the explained file, else the
    innermost user frame; (None, None) without metadata."""
    stack = module.stack(instruction)
    frame = next((f for f in stack if f.file == path), stack[0] if stack else None)
    if frame is None or not frame.line:
        return None, None
    return frame.file, frame.line


def _axes(kind: str, instruction: hlo.Instruction, devices: int, mesh: dict[str, Any] | None) -> list[str] | None:
    if mesh is None:
        return None
    shape, names = tuple(mesh["shape"]), tuple(mesh["axis_names"])
    if kind == "collective-permute":
        return mesh_axes_of_pairs(instruction.attrs.get("source_target_pairs", ""), shape, names)
    groups = device_groups(instruction.attrs.get("replica_groups", ""), devices)
    return None if groups is None else mesh_axes_of_groups(groups, shape, names)


def _cause(module: hlo.Module, instruction: hlo.Instruction, by_name: dict[str, hlo.Instruction],
           facts: dict[str, Any]) -> str | None:
    """What made a collective XLA left no metadata on: the sharding of the output it makes (a
    collective at the root reshards the result to ``out_shardings``) and of the argument it reads."""
    output = _output_index(module, instruction)
    argument = _argument_index(module, instruction, by_name)
    arguments, outputs = facts.get("arguments") or [], facts.get("outputs") or []
    argument_text = None if argument is None else f"argument {argument}" + (
        f" (sharded {arguments[argument]})" if argument < len(arguments) and arguments[argument] else "")
    if output is not None:
        spec = outputs[output] if output < len(outputs) and outputs[output] else None
        what = "the output's sharding" if len(outputs) <= 1 else f"output {output}'s sharding"
        made = f"{what} {spec}" if spec else what
        return f"{made}, from {argument_text}" if argument_text else made
    return f"{argument_text}'s sharding" if argument_text else None


def _output_index(module: hlo.Module, instruction: hlo.Instruction) -> int | None:
    """Which output of the entry computation the collective is (None: not an output)."""
    root = module.computations[module.entry].root
    if root is None:
        return None
    if root.name == instruction.name:
        return 0
    if root.opcode == "tuple" and instruction.name in root.operands:
        return root.operands.index(instruction.name)
    return None


def _argument_index(module: hlo.Module, instruction: hlo.Instruction, by_name: dict[str, hlo.Instruction]) -> int | None:
    """The entry parameter the collective reads, through copies, reshapes and fusions."""
    pending, seen = list(instruction.operands), set()
    while pending:
        name = pending.pop()
        if name in seen or name not in by_name:
            continue
        seen.add(name)
        operand = by_name[name]
        if operand.opcode == "parameter" and operand.computation == module.entry:
            return int(operand.literal) if (operand.literal or "").isdigit() else None
        if operand.opcode in _PASS_THROUGH:
            pending.extend(operand.operands)
    return None


def summary(section: dict[str, Any] | None, path: str) -> list[str]:
    """Summary sentences: each collective that runs more than once per call, inside a loop body."""
    if not section or not section["sharded"]:
        return []
    sentences = []
    for c in section["collectives"]:
        if not c["in_loop"] or not c["runs_per_call"] or c["runs_per_call"] < 2:
            continue
        where = f" of line {c['line']}" if c["line"] is not None and c["path"] == path else ""
        loop = f" at line {c['loop_line']}" if c["loop_line"] else ""
        axes = f" over {', '.join(c['axes'])}" if c["axes"] else ""
        sentences.append(f"The {c['kind']}{where} ({c['shape']}{axes}) is inside the loop body{loop}: it runs "
                         f"{c['runs_per_call']:,} times per call, {_size(c['bytes_per_call'])} per device in all.")
    return sentences


def _size(nbytes: int) -> str:
    for unit, scale in (("GiB", 2**30), ("MiB", 2**20), ("KiB", 2**10)):
        if nbytes >= scale:
            return f"{nbytes / scale:.1f} {unit}"
    return f"{nbytes:,} B"
