"""JX312's rewrite, in the worker (JAX): a program whose padded line is a product of small matrices,
rebuilt with that line's ``dot_general`` written elementwise (a broadcast multiply and a sum, which
the TPU keeps in the arrays' own layouts), compiled for the target to measure what it needs, and
evaluated against the original on random inputs (on the host's CPU) to check the values agree."""
from __future__ import annotations

import math
from typing import Any, Callable

import jax
import jax.numpy as jnp
import numpy as np

from jaxlint.ir import padding, target_devices
from jaxlint.ir.fit import measure, run_inlined, structs
from jaxlint.jaxapi import jaxprs, tracebacks

# Inputs larger than this are not evaluated on the host to compare values (the rewrite is still compiled).
_EVALUATED_BYTES = 256 * 2**20
TEXT = "the contraction written elementwise (a broadcast multiply and a sum over the shared axis)"


def contract(lhs: Any, rhs: Any, dimension_numbers: Any, dtype: Any) -> Any:
    """``lax.dot_general(lhs, rhs, dimension_numbers)`` as a broadcast multiply and a sum."""
    (lhs_contract, rhs_contract), (lhs_batch, rhs_batch) = dimension_numbers
    lhs_free = [d for d in range(lhs.ndim) if d not in lhs_contract and d not in lhs_batch]
    rhs_free = [d for d in range(rhs.ndim) if d not in rhs_contract and d not in rhs_batch]
    left = jnp.transpose(lhs, (*lhs_batch, *lhs_free, *lhs_contract))
    right = jnp.transpose(rhs, (*rhs_batch, *rhs_free, *rhs_contract))
    batch, lf, rf, shared = len(lhs_batch), len(lhs_free), len(rhs_free), len(lhs_contract)
    left = jnp.expand_dims(left, tuple(range(batch + lf, batch + lf + rf)))
    right = jnp.expand_dims(right, tuple(range(batch, batch + lf)))
    product = jnp.multiply(left.astype(dtype), right.astype(dtype))
    return jnp.sum(product, axis=tuple(range(batch + lf + rf, batch + lf + rf + shared)), dtype=dtype)


def rewritten(closed: Any, lines: frozenset[tuple[str, int]], on_target: bool = True
              ) -> tuple[Callable[..., Any], int]:
    """(``closed`` with each ``dot_general`` that one of ``lines`` (path, line) made written elementwise,
    jits and custom derivatives inlined; how many it rewrote). A product inside a loop or branch
    is left as it is. ``on_target``: its meshes laid on the target's chips (to compile it there)."""
    count = [0]

    def made_here(eqn: Any) -> bool:
        return any((path, number) in lines for path, number, *_ in tracebacks.user_stack(eqn.source_info))

    def bind(eqn: Any, inputs: list[Any]) -> list[Any]:
        if eqn.primitive.name == "dot_general" and made_here(eqn):
            count[0] += 1
            return [contract(*inputs, eqn.params["dimension_numbers"], eqn.outvars[0].aval.dtype)]
        return jaxprs.bind_equation(eqn, inputs)

    jaxpr, consts = jaxprs.open_jaxpr(target_devices.retarget(closed) if on_target else closed)
    jax.make_jaxpr(lambda *a: run_inlined(jaxpr, consts, list(a), bind))(*structs(closed))  # counts the rewrites
    rewrites, count[0] = count[0], 0
    return (lambda *args: run_inlined(jaxpr, consts, list(args), bind)), rewrites


def measured(closed: Any, lines: frozenset[tuple[str, int]]) -> padding.Rewrite | None:
    """The rewrite of the products of ``lines`` compiled for the current target (bytes it needs) and
    compared on values; None when the line has no product to rewrite or it does not compile."""
    try:
        fun, count = rewritten(closed, lines)
        if not count:
            return None
        needed = measure(fun, structs(closed)).needed
        return padding.Rewrite(TEXT, needed, same_values=_same_values(closed, lines))
    except Exception:  # noqa: BLE001 - a program the rebuild or the compiler does not take: no rewrite
        return None


def _same_values(closed: Any, lines: frozenset[tuple[str, int]]) -> bool:
    """The original and the rewrite agree on random float inputs, evaluated on the host's CPU
    (where both run at float32), within float32 rounding of a sum."""
    try:
        return _compared(closed, lines)
    except Exception:  # noqa: BLE001 - a program the host cannot run (a mesh it lacks): not compared
        return False


def _compared(closed: Any, lines: frozenset[tuple[str, int]]) -> bool:
    avals = [v.aval for v in closed.jaxpr.invars]
    if any(not jnp.issubdtype(a.dtype, jnp.floating) for a in avals) or \
            sum(math.prod(a.shape) * a.dtype.itemsize for a in avals) > _EVALUATED_BYTES:
        return False
    rng = np.random.default_rng(0)
    args = [rng.standard_normal(a.shape).astype(a.dtype) for a in avals]
    fun, _ = rewritten(closed, lines, on_target=False)
    with jax.default_device(jax.devices("cpu")[0]):
        original = jax.jit(lambda *a: jaxprs.eval_closed(closed, list(a)))(*args)
        new = jax.jit(fun)(*args)
    for a, b in zip(jax.tree_util.tree_leaves(original), jax.tree_util.tree_leaves(new)):
        a, b = np.asarray(a, dtype=np.float64), np.asarray(b, dtype=np.float64)
        if a.shape != b.shape or not np.allclose(a, b, rtol=1e-4, atol=1e-4 * (np.abs(a).max(initial=0) + 1)):
            return False
    return True
