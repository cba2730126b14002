"""Building the IR (jaxlint.ir) from a traced ClosedJaxpr, in the worker."""
from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from jaxlint.ir import MARKER_PREFIX, Location, Op, Program, Region, Value, VmapLeaf, compat, primitives
from jaxlint.model import Span


@dataclass(frozen=True)
class _Context:
    transforms: tuple[str, ...]
    scopes: tuple[str, ...]
    location: Location | None  # fallback for equations without a user frame
    under_jit: bool
    # Inside a JAX library jit on JAX < 0.7: the user frame of the call into it. An equation whose
    # traceback does not pass through it was cached from another call and takes ``location``.
    call_site: tuple[str, str, int] | None = None
    source_info: Any = None  # the source info behind ``location``


def build_program(closed_jaxpr: Any) -> Program:
    jaxpr, consts = compat.open_jaxpr(closed_jaxpr)
    inputs = [Value(v.aval) for v in jaxpr.invars]
    top = Region("top", inputs)
    program = Program(top, stale_library_tracebacks=compat.STALE_LIBRARY_TRACEBACKS, read_stack=compat.user_stack)
    const_values = [Value(v.aval, const=True) for v in jaxpr.constvars]
    env = dict(zip(jaxpr.constvars, const_values)) | dict(zip(jaxpr.invars, inputs))
    for value in inputs:
        value.region_input = top
    ctx = _Context((), (), None, False)
    _walk(program, jaxpr, env, top, ctx)
    top.outputs = [_read(env, v) for v in jaxpr.outvars]
    return program


def _read(env: dict, atom: Any) -> Value:
    if compat.is_literal(atom):
        return Value(atom.aval, literal=atom.val)
    return env[atom]


def _walk(program: Program, jaxpr: Any, env: dict, region: Region, ctx: _Context) -> None:
    for eqn in jaxpr.eqns:
        name_stack = compat.name_stack_entries(eqn.source_info)
        transforms = ctx.transforms + tuple(n for k, n in name_stack if k == "transform")
        scopes = ctx.scopes + tuple(n for k, n in name_stack if k == "scope")
        found = compat.user_location(eqn.source_info)
        if ctx.call_site is not None and ctx.call_site not in compat.user_frames(eqn.source_info)[1:]:
            found = None  # not user code called back from this call: another call's cached equation
        location = Location(found[0], Span(*found[1:])) if found else ctx.location
        source_info = eqn.source_info if found else ctx.source_info
        inputs = [_read(env, v) for v in eqn.invars]
        prim = eqn.primitive.name
        subs = list(compat.subjaxprs(eqn.params))

        marker = next((s for s in reversed(scopes) if s.startswith(MARKER_PREFIX)), None)
        if prim == "optimization_barrier" and marker is not None:
            # jaxlint's own marker: transparent, its outputs are its inputs.
            marked = program.vmap_outputs.setdefault(VmapLeaf.from_scope(marker), [])
            for out_var, value in zip(eqn.outvars, inputs):
                env[out_var] = value
                marked.append(value)
            continue

        if prim in primitives.CALLS and subs:
            inner_jaxpr, inner_consts = compat.open_jaxpr(subs[0][1])
            if len(inner_jaxpr.invars) == len(inputs):
                inner_env = {v: Value(v.aval, const=True) for v in inner_jaxpr.constvars}
                inner_env.update(zip(inner_jaxpr.invars, inputs))
                call_site = ctx.call_site
                if call_site is None and compat.STALE_LIBRARY_TRACEBACKS and compat.is_library_jaxpr(inner_jaxpr):
                    call_site = next(iter(compat.user_frames(eqn.source_info)), None)
                inner_ctx = _Context(transforms, scopes, location,
                                     ctx.under_jit or prim in primitives.JITS, call_site, source_info)
                _walk(program, inner_jaxpr, inner_env, region, inner_ctx)
                for out_var, inner_out in zip(eqn.outvars, inner_jaxpr.outvars):
                    env[out_var] = _read(inner_env, inner_out)
                continue

        outputs = [Value(v.aval) for v in eqn.outvars]
        params = {k: v for k, v in eqn.params.items()}
        op = Op(prim, params, inputs, outputs, location, transforms, scopes, ctx.under_jit, region,
                source_info=source_info)
        for value in inputs:
            value.uses.append(op)
        for out_var, value in zip(eqn.outvars, outputs):
            value.producer = op
            env[out_var] = value
        for sub_name, sub in subs:
            sub_jaxpr, _ = compat.open_jaxpr(sub)
            sub_inputs = [Value(v.aval) for v in sub_jaxpr.invars]
            sub_region = Region(sub_name, sub_inputs, parent=op)
            for value in sub_inputs:
                value.region_input = sub_region
            sub_env = {v: Value(v.aval, const=True) for v in sub_jaxpr.constvars}
            sub_env.update(zip(sub_jaxpr.invars, sub_inputs))
            sub_ctx = _Context(transforms, scopes, location, ctx.under_jit, ctx.call_site, source_info)
            _walk(program, sub_jaxpr, sub_env, sub_region, sub_ctx)
            sub_region.outputs = [_read(sub_env, v) for v in sub_jaxpr.outvars]
            op.regions.append(sub_region)
        region.ops.append(op)
