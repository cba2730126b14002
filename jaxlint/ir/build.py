"""Building the IR (jaxlint.ir) from a traced ClosedJaxpr, in the worker; the jaxpr walk it is
made with (``JaxprWalker``) also makes explain's listing.
(explain/build.py builds explain's report, not the IR.)"""
from __future__ import annotations

import functools
from dataclasses import dataclass
from typing import Any, Generic, TypeVar

from jaxlint.ir import MARKER_PREFIX, Location, Op, Program, Region, Value, VmapLeaf, primitives, target_devices
from jaxlint.ir.compile import checkpoint_memory, compiled_facts
from jaxlint.jaxapi import jaxprs, shardings, tracebacks
from jaxlint.model import Span

V = TypeVar("V")  # what a jaxpr variable stands for
C = TypeVar("C")  # what the walk carries into a nested or inlined jaxpr
E = TypeVar("E")  # what it knows of one equation (its place)


class JaxprWalker(Generic[V, C, E]):
    """One walk over a jaxpr's equations in order, nested jaxprs included. A call-like equation of
    ``inlined`` is walked in place, its body's inputs being the call's operands (unless its arity
    differs); any other equation is handed to ``equation``, and each jaxpr in its params is walked
    between ``enter_region`` and ``exit_region``. ``env`` maps the jaxpr's variables to ``V``."""

    inlined: frozenset[str] = primitives.CALLS

    def walk(self, jaxpr: Any, env: dict[Any, V], ctx: C) -> None:
        for eqn in jaxpr.eqns:
            here = self.place(eqn, ctx)
            inputs = [self.read(env, v) for v in eqn.invars]
            subs = list(jaxprs.subjaxprs(eqn.params))
            if eqn.primitive.name in self.inlined and subs:
                inner, consts = jaxprs.open_jaxpr(subs[0][1])
                if len(inner.invars) == len(inputs):
                    self.inline_inputs(eqn, inputs)
                    inner_env = dict(zip(inner.invars, inputs))
                    inner_env.update((v, self.constant(v, c)) for v, c in _with_values(inner.constvars, consts))
                    self.walk(inner, inner_env, self.inline_context(eqn, inner, here, ctx))
                    for out_var, inner_out in zip(eqn.outvars, inner.outvars):
                        env[out_var] = self.read(inner_env, inner_out)
                    continue
            outputs, node = self.equation(eqn, inputs, here, ctx)
            env.update(zip(eqn.outvars, outputs))
            for name, sub in subs:
                sub_jaxpr, consts = jaxprs.open_jaxpr(sub)
                invars, sub_ctx = self.enter_region(node, eqn, name, sub_jaxpr, inputs, here, ctx)
                sub_env = dict(zip(sub_jaxpr.invars, invars))
                sub_env.update((v, self.constant(v, c)) for v, c in _with_values(sub_jaxpr.constvars, consts))
                self.walk(sub_jaxpr, sub_env, sub_ctx)
                self.exit_region(node, sub_ctx, [self.read(sub_env, v) for v in sub_jaxpr.outvars])
            self.done(node, eqn, ctx)

    def read(self, env: dict[Any, V], atom: Any) -> V:
        return self.literal(atom) if jaxprs.is_literal(atom) else env[atom]

    # What a walker defines.
    def place(self, eqn: Any, ctx: C) -> E:
        raise NotImplementedError

    def literal(self, atom: Any) -> V:
        raise NotImplementedError

    def constant(self, var: Any, value: Any = None) -> V:
        """A constvar of a nested or inlined jaxpr, and its value (None: not known)."""
        raise NotImplementedError

    def inline_context(self, eqn: Any, inner: Any, here: E, ctx: C) -> C:
        """The context of ``inner``, the body of the call ``eqn`` walked in place."""
        raise NotImplementedError

    def inline_inputs(self, eqn: Any, inputs: list[V]) -> None:
        """Before the body of the call ``eqn`` is walked in place with ``inputs`` as its inputs."""

    def equation(self, eqn: Any, inputs: list[V], here: E, ctx: C) -> tuple[list[V], Any]:
        """(what its outputs stand for, a node the region hooks receive)."""
        raise NotImplementedError

    def enter_region(self, node: Any, eqn: Any, name: str, jaxpr: Any, inputs: list[V], here: E,
                     ctx: C) -> tuple[list[V], C]:
        """(what the nested jaxpr's invars stand for, its context)."""
        raise NotImplementedError

    def exit_region(self, node: Any, ctx: C, outputs: list[V]) -> None:
        """After a nested jaxpr (``ctx``: its context), with what its outvars stand for."""

    def done(self, node: Any, eqn: Any, ctx: C) -> None:
        """After the equation's nested jaxprs."""


def _with_values(constvars: list[Any], consts: list[Any]) -> list[tuple[Any, Any]]:
    """Each constvar with its value (None for all when the two do not match up)."""
    if len(consts) != len(constvars):
        return [(v, None) for v in constvars]
    return list(zip(constvars, consts))


@dataclass(frozen=True)
class _Context:
    region: Region  # where the ops go
    transforms: tuple[str, ...]
    scopes: tuple[str, ...]
    location: Location | None  # fallback for equations without a user frame
    under_jit: bool
    # Inside a JAX library jit on JAX < 0.7: the user frame of the call into it. An equation whose
    # traceback does not pass through it was cached from another call and takes ``location``.
    call_site: tuple[str, str, int] | None = None
    source_info: Any = None  # the source info behind ``location``
    custom_derivative: bool = False  # inside the body of a custom_jvp/custom_vjp call
    # The source infos of the call and control-flow equations around, outermost first (Op.enclosing).
    enclosing: tuple[Any, ...] = ()


@dataclass(frozen=True)
class _Place:
    transforms: tuple[str, ...]
    scopes: tuple[str, ...]
    location: Location | None
    source_info: Any


def build_program(closed_jaxpr: Any) -> Program:
    jaxpr, consts = jaxprs.open_jaxpr(closed_jaxpr)
    inputs = [Value(v.aval) for v in jaxpr.invars]
    top = Region("top", inputs)
    program = Program(top, stale_library_tracebacks=tracebacks.STALE_LIBRARY_TRACEBACKS,
                      read_stack=tracebacks.user_stack,
                      compile=functools.partial(compiled_facts, closed_jaxpr, target=target_devices.current()),
                      checkpoint=functools.partial(checkpoint_memory, closed_jaxpr, target=target_devices.current()),
                      target=target_devices.current())
    const_values = [Value(v.aval, const=True) for v in jaxpr.constvars]
    for value, array in zip(const_values, consts):
        value.array = array
    env = dict(zip(jaxpr.constvars, const_values)) | dict(zip(jaxpr.invars, inputs))
    for value in inputs:
        value.region_input = top
    builder = _Builder(program)
    builder.walk(jaxpr, env, _Context(top, (), (), None, False))
    top.outputs = [builder.read(env, v) for v in jaxpr.outvars]
    program.input_paths, program.output_paths = jaxprs.argument_paths(closed_jaxpr)
    return program


class _Builder(JaxprWalker[Value, _Context, _Place]):
    def __init__(self, program: Program) -> None:
        self.program = program

    def place(self, eqn: Any, ctx: _Context) -> _Place:
        name_stack = tracebacks.name_stack_entries(eqn.source_info)
        transforms = ctx.transforms + tuple(n for k, n in name_stack if k == "transform")
        scopes = ctx.scopes + tuple(n for k, n in name_stack if k == "scope")
        found = tracebacks.user_location(eqn.source_info)
        if ctx.call_site is not None and ctx.call_site not in tracebacks.user_frames(eqn.source_info)[1:]:
            found = None  # not user code called back from this call: another call's cached equation
        location = Location(found[0], Span(*found[1:])) if found else ctx.location
        return _Place(transforms, scopes, location, eqn.source_info if found else ctx.source_info)

    def literal(self, atom: Any) -> Value:
        return Value(atom.aval, literal=atom.val)

    def constant(self, var: Any, value: Any = None) -> Value:
        constant = Value(var.aval, const=True)
        constant.array = value
        return constant

    def inline_context(self, eqn: Any, inner: Any, here: _Place, ctx: _Context) -> _Context:
        call_site = ctx.call_site
        if call_site is None and tracebacks.STALE_LIBRARY_TRACEBACKS and tracebacks.is_library_jaxpr(inner):
            call_site = next(iter(tracebacks.user_frames(eqn.source_info)), None)
        return _Context(ctx.region, here.transforms, here.scopes, here.location,
                        ctx.under_jit or eqn.primitive.name in primitives.JITS, call_site, here.source_info,
                        ctx.custom_derivative or eqn.primitive.name in primitives.CUSTOM_DERIVATIVES,
                        ctx.enclosing + (eqn.source_info,))

    def equation(self, eqn: Any, inputs: list[Value], here: _Place, ctx: _Context) -> tuple[list[Value], Any]:
        marker = next((s for s in reversed(here.scopes) if s.startswith(MARKER_PREFIX)), None)
        if eqn.primitive.name == "optimization_barrier" and marker is not None:
            # jaxlint's own marker: transparent, its outputs are its inputs.
            self.program.vmap_outputs.setdefault(VmapLeaf.from_scope(marker), []).extend(inputs[:len(eqn.outvars)])
            return inputs, None
        outputs = [Value(v.aval) for v in eqn.outvars]
        op = Op(eqn.primitive.name, dict(eqn.params), inputs, outputs, here.location, here.transforms, here.scopes,
                ctx.under_jit, ctx.region, source_info=here.source_info, custom_derivative=ctx.custom_derivative,
                enclosing=ctx.enclosing)
        for value in inputs:
            value.uses.append(op)
        for value in outputs:
            value.producer = op
        return outputs, op

    def inline_inputs(self, eqn: Any, inputs: list[Value]) -> None:
        _place(eqn, inputs)

    def enter_region(self, op: Op, eqn: Any, name: str, jaxpr: Any, inputs: list[Value], here: _Place,
                     ctx: _Context) -> tuple[list[Value], _Context]:
        sub_inputs = [Value(v.aval) for v in jaxpr.invars]
        if len(inputs) == len(sub_inputs):
            _place(eqn, inputs)
            _place(eqn, sub_inputs)
        region = Region(name, sub_inputs, parent=op)
        for value in sub_inputs:
            value.region_input = region
        return sub_inputs, _Context(region, here.transforms, here.scopes, here.location, ctx.under_jit,
                                    ctx.call_site, here.source_info, ctx.custom_derivative,
                                    ctx.enclosing + (eqn.source_info,))

    def exit_region(self, op: Op, ctx: _Context, outputs: list[Value]) -> None:
        ctx.region.outputs = outputs
        op.regions.append(ctx.region)

    def done(self, op: Op | None, eqn: Any, ctx: _Context) -> None:
        if op is not None:  # None: jaxlint's marker
            ctx.region.ops.append(op)


def _place(eqn: Any, values: list[Value]) -> None:
    """An Auto mesh's layout lives only in a jit's ``in_shardings``: the values the jit reads keep
    the sharding it gives them (the first jit that places a value wins)."""
    if "in_shardings" not in eqn.params:
        return
    for value, sharding in zip(values, shardings.input_shardings(eqn)):
        if sharding is not None and value.placement is None and any(axis is not None for axis in sharding.spec):
            value.placement = sharding
