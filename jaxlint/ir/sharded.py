"""The shardings a traced program asks for, in the worker (JAX): whether it is sharded at all (the
gate before compiling it for the partitioner's warnings), and the partitioner's warnings read back
in the user's terms (jaxlint.ir.partitioner.Rematerialization): PartitionSpecs over the mesh axes,
the user's line, the constraint that asked for the sharding."""
from __future__ import annotations

import weakref
from typing import Any, Iterator

from jaxlint.ir import hlo, partitioner
from jaxlint.ir.memory import Frame
from jaxlint.jaxapi import jaxprs, tracebacks
from jaxlint.jaxapi.shardings import hlo_sharding_text, mesh_devices, partition_spec_text

# The shardings a trace's arguments carried (a ShapeDtypeStruct's ``sharding``), by traced program:
# a jaxpr keeps them only in its types, and only for Explicit mesh axes. id -> (the program, them).
_INPUTS: dict[int, tuple[weakref.ref, tuple[Any, ...]]] = {}
# Params that hold one sharding per input or output of their equation.
_PER_INPUT = ("in_shardings",)
_PER_OUTPUT = ("out_shardings",)
# Equations that ask for a sharding of their one output: the constraints a user writes.
_CONSTRAINTS = frozenset({"sharding_constraint", "reshard"})


def note_inputs(closed: Any, inputs: list[Any]) -> None:
    """Keep the shardings of the abstract arguments ``closed`` was traced with, for its compile."""
    shardings = tuple(getattr(leaf, "sharding", None) for leaf in inputs)
    if any(mesh_devices(s) > 1 for s in shardings) and len(shardings) == len(closed.jaxpr.invars):
        for key in [k for k, (ref, _) in _INPUTS.items() if ref() is None]:
            del _INPUTS[key]
        _INPUTS[id(closed)] = (weakref.ref(closed), shardings)


def input_shardings(closed: Any) -> tuple[Any, ...] | None:
    """The argument shardings ``note_inputs`` kept for ``closed`` (None: no input is sharded)."""
    ref, shardings = _INPUTS.get(id(closed), (None, None))
    return shardings if ref is not None and ref() is closed else None


def is_partitioned(closed: Any) -> bool:
    """Whether any sharding of the program spans more than one device: its arguments', a jit's
    in/out shardings, a sharding constraint, or a value's type (Explicit mesh axes)."""
    return input_shardings(closed) is not None or \
        any(mesh_devices(sharding) > 1 for sharding, _, _ in _shardings(jaxprs.open_jaxpr(closed)[0]))


def rematerializations(closed: Any, lines: list[str], text: str | None) -> list[partitioner.Rematerialization]:
    """The partitioner's warnings ``lines`` (captured while compiling ``closed`` to the optimized
    HLO ``text``), each with its user frames (resolved through ``text``'s stack frame tables, or
    the source file and line of older metadata) and its shardings as PartitionSpecs."""
    jaxpr = jaxprs.open_jaxpr(closed)[0]
    specs: dict[str, str] = {}
    constraints: dict[str, tuple[Frame, ...]] = {}
    arguments = [(s, len(v.aval.shape), None) for s, v in zip(input_shardings(closed) or (), jaxpr.invars)]
    for sharding, ndim, eqn in [*arguments, *_shardings(jaxpr)]:
        printed = hlo_sharding_text(sharding, ndim)
        spec = partition_spec_text(sharding)
        if printed is None:
            continue
        if spec is not None:
            specs.setdefault(printed, spec)
        if eqn is not None and printed not in constraints:
            constraints[printed] = tuple(Frame(path, line, column, end) for path, line, column, _, end
                                         in reversed(tracebacks.user_stack(eqn.source_info)))
    try:
        module = hlo.parse(text) if text else None
    except ValueError:
        module = None
    found = []
    for line in lines:
        warning = partitioner.parse(line)
        if warning is None:
            continue
        frames = tuple(Frame(f.file, f.line, f.column, f.end_column)
                       for f in (module.frames_of(warning.metadata) if module is not None else []) if f.line > 0)
        shape = partitioner.full_shape(warning.shard_shape, warning.source)
        found.append(partitioner.Rematerialization(
            warning.operation, warning.metadata.get("op_name", ""), warning.source, warning.target,
            specs.get(warning.source), specs.get(warning.target), shape, hlo.nbytes(shape), frames,
            constraints.get(warning.target, ())))
    return found


def _shardings(jaxpr: Any) -> Iterator[tuple[Any, int, Any]]:
    """(sharding, rank of the value it shards, the equation that computed the value a constraint or
    out sharding asks it for, else None) of every sharding in the jaxpr and its sub-jaxprs."""
    for var in jaxpr.invars:
        sharding = getattr(var.aval, "sharding", None)
        if sharding is not None and _names_an_axis(sharding):
            yield sharding, len(var.aval.shape), None
    # A constraint is placed where its operand was computed: the line whose value it reshards.
    producers = {id(var): eqn for eqn in jaxpr.eqns for var in eqn.outvars}
    for eqn in jaxpr.eqns:
        for name, values in eqn.params.items():
            if name in _PER_INPUT or name in _PER_OUTPUT:
                variables = eqn.invars if name in _PER_INPUT else eqn.outvars
                if isinstance(values, (tuple, list)) and len(values) == len(variables):
                    computed = _computed_by(eqn) if name in _PER_OUTPUT else [None] * len(values)
                    for sharding, var, producer in zip(values, variables, computed):
                        yield sharding, len(getattr(var.aval, "shape", ())), producer
            elif eqn.primitive.name in _CONSTRAINTS and len(eqn.outvars) == 1:
                operand = producers.get(id(eqn.invars[0]), eqn) if eqn.invars else eqn
                yield values, len(getattr(eqn.outvars[0].aval, "shape", ())), operand
        for var in eqn.outvars:
            sharding = getattr(getattr(var, "aval", None), "sharding", None)
            if sharding is not None and _names_an_axis(sharding):
                yield sharding, len(var.aval.shape), None
        for _, sub in jaxprs.subjaxprs(eqn.params):
            yield from _shardings(jaxprs.open_jaxpr(sub)[0])


def _computed_by(eqn: Any) -> list[Any]:
    """For each output of a jit equation, the equation of its body that computed it (the jit
    equation itself for an output that is an input passed through)."""
    inner = eqn.params.get("jaxpr")
    if inner is None:
        return [eqn] * len(eqn.outvars)
    body = jaxprs.open_jaxpr(inner)[0]
    producers = {id(var): e for e in body.eqns for var in e.outvars}
    return [producers.get(id(var), eqn) for var in body.outvars]


def _names_an_axis(sharding: Any) -> bool:
    """A type's sharding that partitions something (JAX 0.10 gives every type one, mostly empty)."""
    return any(entry is not None for entry in getattr(sharding, "spec", ()) or ())
