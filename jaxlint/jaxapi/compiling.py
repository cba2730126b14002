"""Compiling a traced program for the memory rules and explain (jaxlint.ir.compile): optimized
HLO, the arguments kept, donation warnings, XLA's temporary memory, cost analysis."""
from __future__ import annotations

from typing import Any

import jax

from jaxlint.ir import target_devices


def compiled_costs(compiled: Any) -> dict[str, Any]:
    """FLOPs and bytes from ``Compiled.cost_analysis()`` (a one-element list before 0.4.38, a
    dict after, possibly None) and buffer sizes from ``memory_analysis()``. Note: XLA counts a
    loop body once, whatever its trip count."""
    analysis = compiled.cost_analysis()
    if isinstance(analysis, (list, tuple)):
        analysis = analysis[0] if analysis else None
    analysis = analysis or {}
    memory = compiled.memory_analysis()
    field = lambda name: getattr(memory, name, None) if memory is not None else None  # noqa: E731
    return {"flops": analysis.get("flops"), "bytes": analysis.get("bytes accessed"),
            "transcendentals": analysis.get("transcendentals"),
            "temp_bytes": field("temp_size_in_bytes"), "argument_bytes": field("argument_size_in_bytes"),
            "output_bytes": field("output_size_in_bytes"), "alias_bytes": field("alias_size_in_bytes")}


def compiled_devices(compiled: Any) -> int:
    """The devices a compiled program runs on (its inputs' shardings span them; 1 without inputs):
    above 1, its cost and memory figures are one device's share of a partitioned program."""
    try:
        shardings = jax.tree_util.tree_leaves(compiled.input_shardings)
        return max((len(s.device_set) for s in shardings), default=1)
    except Exception:  # noqa: BLE001 - a compiled object that cannot say
        return 1


# --- compiling a jaxpr for the memory rules (jaxlint.ir.compile) ---------------------------------

DONATION_WARNING = "Some donated buffers were not usable"


def compile_jaxpr(closed: Any, donated: tuple[bool, ...] = (), keep_unused: bool = False,
                  in_shardings: tuple[Any, ...] | None = None) -> tuple[str, list[int], list[str], int | None]:
    """(optimized HLO text, the argument indices the executable kept, the donation warnings JAX
    gave, XLA's temporary memory in bytes or None) of a ClosedJaxpr compiled the way ``jax.jit``
    compiles it, with ``donated`` (one flag per input) donated. JAX >= 0.5 leaves aliasing to XLA
    (by buffer size, ``buffer_donor`` for the rest); 0.4.35 matches donations to outputs itself,
    by shape and dtype, and warns for the rest. ``in_shardings``: one sharding (or None: left to
    XLA) per input, the shardings the traced arguments carried or the user's jit gives them: the
    partitioned program, whose HLO shapes and sizes are per device."""
    import warnings

    avals = [v.aval for v in closed.jaxpr.invars]
    args = [jax.ShapeDtypeStruct(a.shape, a.dtype) for a in avals]
    donate = tuple(i for i, d in enumerate(donated) if d)
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        placed = {"in_shardings": in_shardings} if in_shardings is not None else {}
        lowered = target_devices.lower_jaxpr(closed, args, donate_argnums=donate, keep_unused=keep_unused,
                                             **placed)
        compiled = lowered.compile()
    compile_args = getattr(getattr(lowered, "_lowering", None), "compile_args", {}) or {}
    kept = compile_args.get("kept_var_idx")
    kept_list = sorted(kept) if kept is not None else list(range(len(avals)))
    if compile_args.get("tuple_args"):
        kept_list = []  # one tuple parameter: the alias map's numbers are not argument numbers
    found = [str(w.message).split("\n")[0] for w in caught if DONATION_WARNING in str(w.message)]
    temp = getattr(compiled.memory_analysis(), "temp_size_in_bytes", None)
    return compiled.as_text(), kept_list, found, int(temp) if temp is not None else None


def temp_bytes(fun: Any, avals: list[Any], shardings: tuple[Any, ...] | None = None) -> int | None:
    """XLA's temporary memory (``memory_analysis().temp_size_in_bytes``) of ``fun`` jitted and
    compiled for arguments of ``avals`` placed with ``shardings`` (as compile_jaxpr places them);
    None when the backend does not say."""
    args = [jax.ShapeDtypeStruct(a.shape, a.dtype) if s is None else jax.ShapeDtypeStruct(a.shape, a.dtype, sharding=s)
            for a, s in zip(avals, shardings or [None] * len(avals))]
    size = getattr(target_devices.lower(fun, args).compile().memory_analysis(), "temp_size_in_bytes", None)
    return int(size) if size is not None else None
