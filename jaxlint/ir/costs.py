"""Cost estimates from the IR's shapes ("shapes" basis), trip-count aware.

XLA's ``Compiled.cost_analysis()`` counts a loop body once whatever its trip count; these
estimates multiply a scan body by its ``length``. A while loop's trip count is unknown: its body
is counted once and the caller says so. FLOPs follow XLA's conventions closely enough to rank
waste: a dot is 2*M*N*K, an elementwise op one per output element, a reduction one per input.
"""
from __future__ import annotations

import math
from typing import Any, Iterable

from jaxlint.ir.primitives import DATA_MOVEMENT, REDUCTIONS, TRANSCENDENTAL, traits

__all__ = ["DATA_MOVEMENT", "REDUCTIONS", "TRANSCENDENTAL", "elements_text", "executions", "format_flops",
           "nbytes", "op_flops", "ops_flops", "region_flops", "size", "trip_count"]


def size(value: Any) -> int | None:
    """Elements of a value, or None when a dimension is symbolic."""
    try:
        return int(math.prod(int(d) for d in value.shape))
    except (TypeError, ValueError, Exception):
        return None


def nbytes(value: Any) -> int | None:
    elements = size(value)
    itemsize = getattr(getattr(value, "dtype", None), "itemsize", None)
    if elements is None or itemsize is None:
        return None
    return elements * itemsize


def op_flops(op: Any) -> float | None:
    """FLOPs of one execution of ``op`` (its regions excluded), or None when unknown/symbolic."""
    prim = op.primitive
    if prim == "dot_general":
        (lhs_contract, _), _ = op.params["dimension_numbers"]
        lhs = op.inputs[0].shape
        try:
            contracted = math.prod(int(lhs[d]) for d in lhs_contract)
        except (TypeError, ValueError):
            return None
        out = size(op.outputs[0])
        return None if out is None else 2.0 * out * contracted
    if prim == "conv_general_dilated":
        out, kernel = size(op.outputs[0]), size(op.inputs[1])
        if out is None or kernel is None:
            return None
        out_features = op.outputs[0].shape[op.params["dimension_numbers"].out_spec[1]]
        return 2.0 * out * kernel / max(int(out_features), 1)
    cost = traits(prim).cost
    if cost == "reduction":
        elements = size(op.inputs[0])
        return None if elements is None else float(elements)
    if cost == "data" or op.regions:
        return 0.0
    elements = size(op.outputs[0]) if op.outputs else 0
    return None if elements is None else float(elements)


def trip_count(op: Any) -> int | None:
    """How often a loop op runs its body: a scan's length; None for a while loop or a symbolic
    length (a shape-polymorphic trace)."""
    length = op.params["length"] if op.primitive == "scan" else None
    return length if isinstance(length, int) else None


def region_flops(region: Any) -> float | None:
    """FLOPs of one execution of a region, nested loops multiplied by their trip counts."""
    return ops_flops(region.ops)


def ops_flops(ops: Iterable[Any]) -> float | None:
    """FLOPs of ``ops`` run once, nested loops multiplied by their trip counts; None if unknown."""
    total = 0.0
    for op in ops:
        flops = op_flops(op)
        if flops is None:
            return None
        total += flops
        if op.regions:
            inner = [region_flops(r) for r in op.regions]
            if any(f is None for f in inner):
                return None
            if op.primitive == "cond":
                total += max(inner)  # one branch runs
            else:
                total += sum(inner) * (trip_count(op) or 1)
    return total


def executions(op: Any) -> tuple[int, bool]:
    """How often ``op`` runs per call: the product of enclosing scan lengths; False if a while encloses it."""
    count, known = 1, True
    region = op.region
    while region is not None and region.parent is not None:
        trips = trip_count(region.parent)
        if trips is not None:
            count *= trips
        elif region.parent.primitive == "while":
            known = False
        region = region.parent.region
    return count, known


def elements_text(value: Any) -> str:
    """The number of elements of ``value``, or its dimensions joined by `` x `` when symbolic."""
    n = size(value)
    return str(n) if n is not None else " x ".join(str(d) for d in value.shape)


def format_flops(flops: float) -> str:
    return f"{flops:.3g}" if flops >= 1e6 else f"{int(flops)}"
