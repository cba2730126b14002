"""Cost estimates from the IR's shapes ("shapes" basis), trip-count aware.

XLA's ``Compiled.cost_analysis()`` counts a loop body once whatever its trip count; these
estimates multiply a scan body by its ``length``. A while loop's trip count is unknown: its body
is counted once and the caller says so. FLOPs follow XLA's conventions closely enough to rank
waste: a dot is 2*M*N*K, an elementwise op one per output element, a reduction one per input.
"""
from __future__ import annotations

import math
from typing import Any

# Elementwise transcendental ops XLA treats as expensive (never duplicated by fusion).
TRANSCENDENTAL = frozenset({
    "exp", "exp2", "expm1", "log", "log1p", "tanh", "logistic", "sin", "cos", "tan", "asin",
    "acos", "atan", "atan2", "sinh", "cosh", "asinh", "acosh", "atanh", "pow", "erf", "erfc",
    "erf_inv", "lgamma", "digamma", "rsqrt", "sqrt", "cbrt"})
REDUCTIONS = frozenset({"reduce_sum", "reduce_max", "reduce_min", "reduce_prod", "reduce_and",
                        "reduce_or", "reduce_xor", "argmax", "argmin", "cumsum", "cumprod",
                        "cummax", "cummin", "cumlogsumexp"})
# Ops that move or view data without arithmetic.
DATA_MOVEMENT = frozenset({"broadcast_in_dim", "reshape", "squeeze", "expand_dims", "transpose",
                           "slice", "dynamic_slice", "dynamic_update_slice", "concatenate", "pad",
                           "gather", "scatter", "select_n", "convert_element_type", "copy",
                           "copy_p", "rev", "iota", "bitcast_convert_type"})


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
    if prim in REDUCTIONS:
        elements = size(op.inputs[0])
        return None if elements is None else float(elements)
    if prim in DATA_MOVEMENT or op.regions:
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
    total = 0.0
    for op in region.ops:
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
