"""The first call the module made to the function while it was imported.

When the module called the target object through a stack of wrappers (a jit of a vmap, a
custom_jvp of a jit, a vmap), the arguments are those it passed to the outermost one: the
function itself received what the wrappers made of them (a vmap gives it one row), which the
stack would refuse. A single wrapper right over the function (a jit, a custom_jvp, a checkpoint)
passes them on with the same shapes, so the function's own arguments are used, as always: they
show which values the wrapper traced (a Python ``1`` a jit traces is ``i32[]``, not static).
A call through a wrapper the module made in its expression (``jax.vmap(f)(xs)``) gives f the
arguments f received, one row: f is traced alone. Through a single wrapper, an argument the
module passed sharded (a sharded array, a ``ShapeDtypeStruct(..., sharding=...)``) keeps that
sharding: the function itself received a tracer, which has none to give."""
from __future__ import annotations

import inspect
from typing import Any

import jax

from jaxlint.worker.argsources import ArgumentRequest, ArgumentSet


def arguments(request: ArgumentRequest) -> list[ArgumentSet]:
    call = request.recorded_call(request.function)
    if call is None:
        return []
    outer = call.outer
    if outer is not None and outer.callee is request.function and _is_stack(request.function):
        return [ArgumentSet("import-call", tuple(outer.args), outer.kwargs)]
    args, kwargs = call.args, call.kwargs
    if outer is not None and outer.callee is request.function:
        args, kwargs = _placed(args, tuple(outer.args)), _placed(kwargs, outer.kwargs)
    if inspect.ismethod(request.function) and args:
        # A classmethod resolves to a bound method; the recorded call includes ``cls``.
        args = args[1:]
    return [ArgumentSet("import-call", args, kwargs)]


def _placed(own: Any, passed: Any) -> Any:
    """``own`` (what the function received) with the sharding of each leaf the module passed
    sharded, where the two have the same structure, shape and dtype."""
    own_leaves, tree = jax.tree_util.tree_flatten(own)
    passed_leaves, passed_tree = jax.tree_util.tree_flatten(passed)
    if tree != passed_tree:
        return own
    leaves = []
    for mine, theirs in zip(own_leaves, passed_leaves):
        sharding = getattr(theirs, "sharding", None) if isinstance(theirs, jax.ShapeDtypeStruct) else None
        if sharding is not None and isinstance(mine, jax.ShapeDtypeStruct) and \
                (mine.shape, mine.dtype) == (theirs.shape, theirs.dtype):
            mine = jax.ShapeDtypeStruct(mine.shape, mine.dtype, weak_type=mine.weak_type, sharding=sharding)
        leaves.append(mine)
    return jax.tree_util.tree_unflatten(tree, leaves)


def _is_stack(function: Any) -> bool:
    """A wrapper over another wrapper (a jit over a vmap; functools.wraps keeps the chain). A bare
    vmap is one too: jaxlint's instrumented vmap wraps JAX's."""
    wrapped = getattr(function, "__wrapped__", None)
    return wrapped is not None and getattr(wrapped, "__wrapped__", None) is not None
