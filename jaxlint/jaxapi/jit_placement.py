"""A jax.jit's placement (in_shardings, donations, static arguments), read from JAX's private frame
that traces the jit's function (drivers/placement.py)."""
from __future__ import annotations

from typing import Any

import jax

from jaxlint.jaxapi.install_dirs import JAX_DIR
from jaxlint.jaxapi.shardings import mesh_devices, sharding
from jaxlint.jaxapi.tracers import is_tracer, iterable_leaf

# --- a jax.jit's placement, read while the jit traces its function (jaxlint.drivers.placement) ---

# The JAX frame that traces a jit's function, holding the jit's PjitInfo as ``ji`` and what it was
# called with: ``_trace_for_jit`` (0.10: ``args``/``kwargs`` with the static arguments,
# ``donate_argnums`` counting them), ``_infer_params_impl`` (0.4.35: ``dyn_args``/``dyn_kwargs``
# without them; ``args`` is deleted). Both hold ``in_shardings_flat`` and ``donated_invars``, one
# entry per leaf of the dynamic arguments, before the function is traced.
_JIT_TRACING = frozenset({"_trace_for_jit", "_infer_params_impl"})
STATIC = object()  # stands for a static argument of a jit in JitPlacement.args and .kwargs


class JitPlacement:
    """What a ``jax.jit`` keeps of the placement of the call it is tracing. ``args``/``kwargs``:
    what it called the function with, each leaf of a dynamic argument an int (its position among
    the jit's flattened inputs), a static argument ``STATIC``. Per flattened input: ``in_shardings``
    (the jit's, else the sharding of a committed array over several devices, else None) and
    ``donated``. ``out_shardings``: the jit's, a prefix of the function's result (None: none given)."""

    def __init__(self, function: Any, args: tuple[Any, ...], kwargs: dict[str, Any], in_shardings: tuple[Any, ...],
                 donated: tuple[bool, ...], out_shardings: Any) -> None:
        self.function, self.args, self.kwargs = function, args, kwargs
        self.in_shardings, self.donated, self.out_shardings = in_shardings, donated, out_shardings


def jit_placement(frame: Any) -> JitPlacement | None:
    """The placement of the ``jax.jit`` whose trace called ``frame``'s function directly (only JAX's
    frames between them); None when a jit does not trace it that way (a helper it calls, a scan or
    vmap body, an eager call) or JAX keeps what it was given where this version cannot find it."""
    caller = frame.f_back
    while caller is not None and caller.f_code.co_filename.startswith(JAX_DIR):
        if caller.f_code.co_name in _JIT_TRACING and "ji" in caller.f_locals:
            try:
                return _placement(caller.f_locals, frame.f_code)
            except Exception:  # noqa: BLE001 - private state of another shape: traced without it
                return None
        caller = caller.f_back
    return None


def _placement(local: dict[str, Any], code: Any) -> JitPlacement | None:
    import functools

    from jax._src.sharding_impls import UnspecifiedValue

    info, function = local["ji"], local["fun"]
    target = function
    while isinstance(target, functools.partial):
        target = target.func
    if getattr(target, "__code__", None) is not code:
        return None  # jit traces a wrapper that calls this function: its arguments may differ
    static = tuple(info.static_argnums)
    if "dyn_args" in local:  # 0.4.35
        dynamic, dyn_kwargs = tuple(local["dyn_args"]), dict(local["dyn_kwargs"])
        if any(i < 0 for i in static):
            return None
        marked_args, marked_kwargs, leaves = _marked(dynamic, dyn_kwargs)
        args: list[Any] = list(marked_args)
        for position in sorted(static):
            args.insert(position, STATIC)
    else:  # 0.10: every argument, the static ones in place
        every = tuple(local["args"])
        static = tuple(i % len(every) for i in static) if every else ()
        dynamic = tuple(a for i, a in enumerate(every) if i not in static)
        dyn_kwargs = {k: v for k, v in local["kwargs"].items() if k not in info.static_argnames}
        marked_args, marked_kwargs, leaves = _marked(dynamic, dyn_kwargs)
        marked = iter(marked_args)
        args = [STATIC if i in static else next(marked) for i in range(len(every))]
    kwargs = dict(marked_kwargs)
    kwargs.update({k: STATIC for k in local["kwargs"] if k in info.static_argnames})
    given, donated = tuple(local["in_shardings_flat"]), tuple(bool(d) for d in local["donated_invars"])
    if len(given) != len(leaves) or len(donated) != len(leaves):
        return None
    # Only shardings over several devices, which a jit outside the test's mesh context can take (a
    # PartitionSpec needs the context): None lets the jit choose, as the user's None does.
    in_shardings = tuple(s if isinstance(s, jax.sharding.Sharding) and mesh_devices(s) > 1
                         else None if is_tracer(leaf) else sharding(leaf)
                         for s, leaf in zip(given, leaves))
    outs = info.out_shardings_leaves
    placed_outs = all(s is None or isinstance(s, (jax.sharding.Sharding, UnspecifiedValue)) for s in outs) \
        and any(isinstance(s, jax.sharding.Sharding) and mesh_devices(s) > 1 for s in outs)
    out_shardings = info.out_shardings_treedef.unflatten(outs) if placed_outs else None
    return JitPlacement(function, tuple(args), kwargs, in_shardings, donated, out_shardings)


def _marked(args: tuple[Any, ...], kwargs: dict[str, Any]) -> tuple[Any, dict[str, Any], list[Any]]:
    """``args`` and ``kwargs`` with each leaf replaced by its position among the jit's flattened
    inputs (JAX flattens ``(args, kwargs)``), and the leaves."""
    leaves, treedef = jax.tree_util.tree_flatten((args, kwargs), is_leaf=iterable_leaf)
    marked_args, marked_kwargs = jax.tree_util.tree_unflatten(treedef, list(range(len(leaves))))
    return marked_args, marked_kwargs, leaves


def broadcast_prefix(prefix: Any, full: Any) -> list[Any]:
    """Each leaf of ``prefix`` repeated over the leaves of ``full`` it covers (a None of ``prefix``
    is a leaf): how jit spreads ``out_shardings`` over a result."""
    from jax._src.tree_util import broadcast_prefix as broadcast

    return broadcast(prefix, full, is_leaf=lambda x: x is None)
