"""Running a target on generated inputs, for the fixer: the same seeds give the same inputs in the
worker that imports the original module and in the one that imports the fixed module, and the
parent compares what they return (engine/values.py).

Inputs: each abstract array of a traced signature becomes a concrete one of its shape (a symbolic
dimension evaluated with every symbol 4) and dtype,
from a NumPy generator seeded with (seed, position): floats standard normal, integers and
unsigned integers in [0, 4) (small enough to be indices and sizes), booleans half true, typed PRNG
keys all distinct; each placed with the sharding it was traced with (a sharded program runs on the
worker's devices as the module ran it). For the functions a numerics fix is in, a last "wide" run
multiplies the seed-0 floats by WIDE (1000): there the original overflows, and the fix must add no
infinity or NaN.
A weakly typed scalar (a Python scalar the code passed) is passed as a Python scalar of the same
value. Static arguments are used as they were traced. Outputs travel as float64, complex128,
int64 or bool bytes (base64), so the parent needs NumPy only.
"""
from __future__ import annotations

import base64
from typing import Any, Collection

import jax
import numpy as np

from jaxlint.jaxapi import jaxprs, shardings
from jaxlint.worker.errors import describe_error
from jaxlint.worker.trace import bind

SEEDS = (0, 1, 2)
WIDE = 1000.0
SIGNATURES = 2  # the first ones of each target: each run compiles the function


def run_values(traced_calls: list[tuple[str, Any, Any]], names: list[str],
               wide: Collection[str] = ()) -> dict[str, list[list[Any]]]:
    """qualname -> per signature (the first SIGNATURES), per seed: the outputs, or
    ``{"error": ...}`` when the call raised, or ``{"skipped": why}`` when it could not be made;
    for the ``wide`` ones a last ``{"wide": outputs}`` run too (only those: wide inputs may make a
    loop run far longer)."""
    wanted, values = set(names), {}
    jax.clear_caches()  # traces cached while jaxlint's vmap markers were active would run with them
    for qualname, function, arguments in traced_calls:
        runs = values.setdefault(qualname, []) if qualname in wanted else None
        if runs is None or len(runs) >= SIGNATURES:
            continue
        apply, inputs = bind(function, arguments)
        shapes = [jaxprs.concrete_shape(tuple(spec.shape)) for spec in inputs]
        if None in shapes:
            unknown = inputs[shapes.index(None)].shape
            runs.append([{"skipped": f"symbolic shape {unknown} with no size to give it"}])
            continue
        concrete = [jax.ShapeDtypeStruct(shape, spec.dtype, weak_type=bool(getattr(spec, "weak_type", False)),
                                         sharding=getattr(spec, "sharding", None))
                    for shape, spec in zip(shapes, inputs)]
        runs.append([_run(apply, concrete, seed) for seed in SEEDS]
                    + ([{"wide": _run(apply, concrete, 0, WIDE)}] if qualname in wide else []))
    return values


def _run(apply: Any, inputs: list[Any], seed: int, scale: float = 1.0) -> Any:
    try:
        concrete = [_concrete(spec, seed, position, scale) for position, spec in enumerate(inputs)]
        out = apply(*concrete)
        return [_encoded(leaf) for leaf in jax.tree_util.tree_leaves(out)]
    except Exception as error:  # the function's own error: the same one is expected after a fix
        return {"error": describe_error(error)}


def _concrete(spec: jax.ShapeDtypeStruct, seed: int, position: int, scale: float = 1.0) -> Any:
    dtype, shape = spec.dtype, tuple(spec.shape)
    if jax.dtypes.issubdtype(dtype, jax.dtypes.prng_key):
        return jaxprs.random_keys(dtype, shape, seed * 1000 + position)
    rng = np.random.default_rng([seed, position])
    if jax.dtypes.issubdtype(dtype, np.bool_):
        data = rng.random(shape) < 0.5
    elif jax.dtypes.issubdtype(dtype, np.integer):
        data = rng.integers(0, 4, shape)
    elif jax.dtypes.issubdtype(dtype, np.complexfloating):
        data = scale * (rng.standard_normal(shape) + 1j * rng.standard_normal(shape))
    else:
        data = scale * rng.standard_normal(shape)
    if getattr(spec, "weak_type", False) and shape == () and not jax.dtypes.issubdtype(dtype, np.bool_):
        # Traced weakly typed: the code passed a Python scalar, so run with one (a JAX array would
        # be strongly typed and take another promotion path). Rounded to the dtype, as jit would.
        return np.asarray(data, dtype=dtype).item()
    return shardings.placed(jax.numpy.asarray(data, dtype=dtype), spec)


def _encoded(leaf: Any) -> dict[str, Any]:
    """A leaf as the parent reads it: its dtype's name, shape and widened bytes."""
    if isinstance(leaf, jax.Array) and jax.dtypes.issubdtype(leaf.dtype, jax.dtypes.prng_key):
        name, leaf = str(leaf.dtype), jax.random.key_data(leaf)
    else:
        name = str(getattr(leaf, "dtype", type(leaf).__name__))
    array = np.asarray(leaf)
    kind = array.dtype.kind
    wide = {"b": np.bool_, "i": np.int64, "u": np.int64, "c": np.complex128}.get(kind, np.float64)
    array = array.astype(wide)
    return {"dtype": name, "shape": list(array.shape), "kind": np.dtype(wide).name,
            "data": base64.b64encode(array.tobytes()).decode("ascii")}
