"""Operations the optimized HLO computes more than once, and why.

Two instructions compute the same value when they have the same opcode, shape and attributes and
their operands are the same values (value numbering across fusion boundaries: a fused
computation's parameter is the fusion's operand). A recomputation by ``jax.checkpoint`` in a
backward loop has other operands (the loop's), so it is matched by origin instead: JAX names the
recomputed equations ``rematted_computation``, and the copy keeps the primal's source location.
"""
from __future__ import annotations

from typing import Any

from jaxlint.explain import hlomap
from jaxlint.ir import hlo

_COMMUTATIVE = frozenset({"add", "multiply", "maximum", "minimum", "and", "or", "xor"})
_IDENTITY = frozenset({"copy", "opt-barrier"})  # same value out as in
_EFFECTFUL = frozenset({"rng", "rng-bit-generator", "rng-get-and-update-state", "infeed", "outfeed",
                        "send", "recv", "send-done", "recv-done", "custom-call", "all-reduce",
                        "all-gather", "collective-permute", "all-to-all", "reduce-scatter"})
REMAT_MARK = "rematted_computation"


class _Numbering:
    """Value numbers for every instruction executed from the entry computation."""

    def __init__(self, module: hlo.Module) -> None:
        self.module = module
        self.keys: dict[Any, int] = {}
        self.signatures: dict[str, tuple] = {}
        self.occurrences: dict[int, dict[str, hlo.Instruction]] = {}

    def number(self, key: Any) -> int:
        return self.keys.setdefault(key, len(self.keys))

    def signature(self, name: str) -> tuple:
        """A called computation (a reducer) by its content, not its name."""
        if name not in self.signatures:
            computation = self.module.computations.get(name)
            self.signatures[name] = () if computation is None else tuple(
                (i.opcode, hlo.plain_shape(i.shape)) for i in computation.instructions)
        return self.signatures[name]

    def evaluate(self, name: str, params: list[Any], depth: int = 0) -> Any:
        computation = self.module.computations[name]
        values: dict[str, Any] = {}
        for instruction in computation.instructions:
            values[instruction.name] = self._value(instruction, values, params, depth)
        root = computation.root
        return values.get(root.name) if root is not None else None

    def _value(self, instruction: hlo.Instruction, values: dict[str, Any], params: list[Any], depth: int) -> Any:
        opcode = instruction.opcode
        operands = [values.get(name, ("unknown", name)) for name in instruction.operands]
        calls = dict(hlo.called(instruction))
        if opcode == "parameter":
            index = int(instruction.literal) if (instruction.literal or "").isdigit() else -1
            return params[index] if 0 <= index < len(params) else self.number(("param", instruction.name))
        if opcode == "constant":
            return self.number(("constant", hlo.plain_shape(instruction.shape), instruction.literal))
        if opcode == "tuple":
            return tuple(operands)
        if opcode == "get-tuple-element":
            index = int(instruction.attrs.get("index", "-1"))
            source = operands[0] if operands else None
            if isinstance(source, tuple) and 0 <= index < len(source):
                return source[index]
            return self.number(("gte", source, index))
        if opcode in _IDENTITY and operands:
            return operands[0] if len(operands) == 1 else tuple(operands)
        if depth < 50 and (opcode == "fusion" or opcode == "call") and (calls.get("calls") or calls.get("to_apply")):
            return self.evaluate(calls.get("calls") or calls["to_apply"], operands, depth + 1)
        if opcode in ("while", "conditional"):
            opaque = self.number(("opaque", instruction.name))
            for role, callee in hlo.called(instruction):
                if callee in self.module.computations and depth < 50:
                    self.evaluate(callee, [self.number((role, instruction.name, i)) for i in range(len(operands) + 1)],
                                  depth + 1)
            return opaque
        if opcode in _EFFECTFUL:
            key: Any = ("effect", instruction.name)
        else:
            attrs = tuple(sorted((k, self.signature(v.lstrip("%")) if k == "to_apply" else v)
                                 for k, v in instruction.attrs.items() if k not in hlo.NON_SEMANTIC))
            ordered = tuple(sorted(operands, key=repr)) if opcode in _COMMUTATIVE else tuple(operands)
            key = (opcode, hlo.plain_shape(instruction.shape), attrs, ordered)
        number = self.number(key)
        if opcode not in hlomap.STRUCTURAL and opcode not in hlomap.DATA_MOVEMENT:
            self.occurrences.setdefault(number, {})[instruction.name] = instruction
        return number


def _origin_key(module: hlo.Module, instruction: hlo.Instruction) -> tuple | None:
    """What source operation an instruction implements: a remat copy shares it with the primal."""
    location = module.location(instruction)
    if location is None:
        return None
    op_name = instruction.metadata.get("op_name", "")
    attrs = tuple(sorted((k, v) for k, v in instruction.attrs.items()
                         if k not in hlo.NON_SEMANTIC and k not in ("to_apply", "calls")))
    return (instruction.opcode, hlo.plain_shape(instruction.shape), attrs, location, op_name.rsplit("/", 1)[-1])


def find(module: hlo.Module, placed: list[hlomap.Placed]) -> list[list[hlomap.Placed]]:
    """Groups (two or more) of placed instructions that compute one operation, in text order."""
    numbering = _Numbering(module)
    numbering.evaluate(module.entry, [])
    by_name = {entry.instruction.name: entry for entry in placed}
    parent = {entry.instruction.name: entry.instruction.name for entry in placed}

    def root(name: str) -> str:
        while parent[name] != name:
            parent[name] = parent[parent[name]]
            name = parent[name]
        return name

    def join(names: list[str]) -> None:
        names = [n for n in names if n in parent]
        for name in names[1:]:
            parent[root(name)] = root(names[0])

    for found in numbering.occurrences.values():
        if len(found) > 1:
            join(list(found))
    origins: dict[tuple, list[str]] = {}
    for entry in placed:
        instruction = entry.instruction
        if instruction.opcode in hlomap.STRUCTURAL or instruction.opcode in hlomap.DATA_MOVEMENT:
            continue
        key = _origin_key(module, instruction)
        if key is not None:
            origins.setdefault(key, []).append(instruction.name)
    for names in origins.values():
        remat = [n for n in names if REMAT_MARK in by_name[n].instruction.metadata.get("op_name", "")]
        if remat and len(remat) < len(names):
            join(names)
    groups: dict[str, list[hlomap.Placed]] = {}
    for entry in placed:
        groups.setdefault(root(entry.instruction.name), []).append(entry)
    return [group for group in groups.values() if len(group) > 1]
