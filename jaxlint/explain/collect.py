"""Worker side of ``jaxlint explain``: after analyze.py imported the module, traced the target and
ran the rules, trace it again without jaxlint's instrumentation, compile it on CPU and return what
the report is built from (plain JSON: the jaxpr listing, the optimized HLO text, XLA's costs, the
trip-count-aware estimate, what running it op by op materializes)."""
from __future__ import annotations

import inspect
import time
from typing import Any

import jax

from jaxlint.explain import memory
from jaxlint.explain.chip import chip_facts
from jaxlint.explain.listing import eager, listing
from jaxlint.explain.sharding import sharding_facts
from jaxlint.ir import costs, primitives, target_devices
from jaxlint.ir.build import build_program
from jaxlint.jaxapi import compiling, shardings
from jaxlint.model import Job
from jaxlint.scan import hints
from jaxlint.worker.errors import describe_error
from jaxlint.worker.trace import format_instance

_LONG_CONSTANT = 2000  # characters: a closure constant's literal is elided beyond this


def collect(job: Job, to_compile: list[tuple[str, Any, Any]]) -> dict[str, Any] | None:
    """The explain job kind's hook (``Job.kind`` names it; the worker calls it after tracing): the
    explain data for the job's one target, or None when it was not traced (the result's
    ``skipped`` entry says why). ``job.kind_options["mode"]``: "full", or "price" for a fixed copy
    (costs and HLO only)."""
    qualname = job.targets[0].qualname
    traced = [(function, arguments) for name, function, arguments in to_compile if name == qualname]
    if not traced:
        return None
    function, arguments = traced[0]
    mode = job.kind_options.get("mode", "full")
    started = time.perf_counter()
    # Traces cached while jaxlint's vmap markers were active would come back with them.
    jax.clear_caches()
    data: dict[str, Any] = {"arguments": {"source": arguments.source,
                                          "signature": signature(function, arguments)},
                            "chip": _chip()}
    try:
        closed, lower = _trace(function, arguments)
    except Exception as error:  # it traced for the rules; a second trace should too
        data["error"] = f"tracing again failed: {describe_error(error)}"
        return data
    program = build_program(closed) if mode == "full" else None
    if program is not None:
        data["jaxpr"] = listing(closed, job.path)
        data["memory"] = {"differentiated_loops": memory.differentiated_loops(program)}
        top = program.top
        flops, transcendentals = costs.region_flops(top), _transcendentals(top)
        if flops is not None and transcendentals is not None:
            flops -= transcendentals  # XLA counts them apart from FLOPs: so does the estimate
        data["estimate"] = {"flops": flops, "transcendentals": transcendentals,
                            "loops": _loops(data["jaxpr"]["lines"])}
    data["eager"] = eager(closed)
    data["timings"] = {"trace": time.perf_counter() - started}
    started = time.perf_counter()
    try:
        compiled = lower().compile()
    except Exception as error:  # symbolic shapes, a backend limit
        data["compile_error"] = describe_error(error)
        if _symbolic(arguments):
            data["compile_error"] = ("symbolic dimensions cannot be compiled: give concrete sizes "
                                     f"(e.g. with --args) to see the HLO and its cost ({data['compile_error']})")
        return data
    data["timings"]["compile"] = time.perf_counter() - started
    data["compiled"] = compiling.compiled_costs(compiled)
    if mode == "full":
        data["sharding"] = sharding_facts(compiled, closed)
    text = compiled.as_text() or ""
    if program is not None:
        data["memory"]["loop_copies"] = memory.loop_copies(program, text, job.path)
    data["hlo_text"] = _elide_constants(text)
    return data


def _chip() -> dict[str, Any]:
    target = target_devices.current()
    return chip_facts(target.name, target.label, target.chip_label, target.is_tpu, target_devices.available_hbm(), target.bf16_flops,
                      target.hbm_bandwidth, target.chips)


def _trace(function: Any, arguments: Any) -> tuple[Any, Any]:
    """(ClosedJaxpr, a thunk lowering it). A jax.jit wrapper is traced through its own ``trace`` so
    its static_argnums and Python scalars behave as they do when the user calls it; anything else
    is wrapped in jit with the non-array leaves static, as check traces it."""
    from jaxlint.worker.trace import bind

    # On a TPU target the jaxpr is compiled (lower_jaxpr): the wrapper's own lowering would
    # place the program on the CPU devices its shardings name.
    tpu = target_devices.current().is_tpu
    if arguments.call is None and hasattr(function, "trace") and hasattr(function, "lower") and not tpu:
        try:
            traced = function.trace(*arguments.args, **arguments.kwargs)
            return traced.jaxpr, traced.lower
        except Exception:  # e.g. arguments its own jit rejects as given: trace it as check does
            jax.clear_caches()
    apply, inputs = bind(function, arguments)
    closed = jax.make_jaxpr(apply)(*inputs)
    if tpu:
        from jaxlint.ir.compile import placement

        return closed, lambda: target_devices.lower_jaxpr(closed, list(inputs), in_shardings=placement(closed))
    return closed, lambda: jax.jit(apply).lower(*inputs)


def signature(function: Any, arguments: Any) -> list[dict[str, str]]:
    """[{"name", "abstract"}] per argument: ``f32[8,128]`` for arrays (``f32[8@data,128]`` where a
    NamedSharding places it), ``static: 3`` for values."""
    try:
        bound = inspect.signature(function).bind_partial(*arguments.args, **arguments.kwargs)
        items = list(bound.arguments.items())
    except (TypeError, ValueError):  # no signature (a C callable) or one that does not fit
        items = [(f"arg{i}", a) for i, a in enumerate(arguments.args)] + list(arguments.kwargs.items())
    shown = []
    for name, value in items:
        leaves = jax.tree_util.tree_leaves(value)
        is_static = not any(isinstance(leaf, jax.ShapeDtypeStruct) for leaf in leaves)
        try:
            # An instance jaxlint built (a method's self, a parameter annotated with its class): its
            # class and fields by name, as findings show it.
            built = name == "self" or name in arguments.built
            text = (format_instance(value) if built and arguments.source == "inferred" else None) \
                or hints.format_abstract(jax.tree_util.tree_map(_with_mesh_axes, value))
        except Exception:  # an object whose repr fails
            text = f"<{type(value).__name__}>"
        shown.append({"name": name, "abstract": f"static: {text}" if is_static else text})
    return shown


def _with_mesh_axes(leaf: Any) -> Any:
    """An array a NamedSharding places, as the hint that states its mesh axes (``f32[8@data,4]``)."""
    shards = shardings.shards_of(getattr(leaf, "sharding", None)) if isinstance(leaf, jax.ShapeDtypeStruct) else None
    if not shards or not any(shards):
        return leaf
    return hints.sharded_spec(leaf, shards)


def _transcendentals(region: Any) -> float | None:
    """Transcendental evaluations (exp, tanh, ...) of one run of a region, loops times their trips."""
    total = 0.0
    for op in region.ops:
        if op.primitive in costs.TRANSCENDENTAL:
            elements = costs.size(op.outputs[0]) if op.outputs else 0
            if elements is None:
                return None
            total += elements
        inner = [_transcendentals(r) for r in op.regions]
        if any(count is None for count in inner):
            return None
        if inner:
            total += max(inner) if op.primitive == "cond" else sum(inner) * (costs.trip_count(op) or 1)
    return total


def _symbolic(arguments: Any) -> bool:
    leaves = jax.tree_util.tree_leaves((arguments.args, arguments.kwargs))
    return any(not isinstance(d, int) for leaf in leaves if isinstance(leaf, jax.ShapeDtypeStruct)
               for d in leaf.shape)


def _loops(lines: list[dict[str, Any]]) -> list[dict[str, Any]]:
    return [{"primitive": line["primitive"], "line": line["line"], "trips": line.get("trips")}
            for line in lines if line["primitive"] in primitives.LOOPS]


def _elide_constants(text: str) -> str:
    """Large closure constants print their whole literal: keep the HLO readable."""
    if len(text) < _LONG_CONSTANT:
        return text
    out = []
    for line in text.splitlines():
        start = line.find(" constant(")
        if len(line) > _LONG_CONSTANT and start >= 0:
            line = line[:start] + " constant({...})"
        out.append(line)
    return "\n".join(out)
