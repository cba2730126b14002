"""JX505 zero-gradient: a differentiated input whose every path to the output runs through an
operation without a gradient (round, floor, sign, a comparison, argmax, an integer cast): its
gradient is a constant zero, and the parameter never learns.

Where the traced program takes the gradient itself (``jax.grad(loss)(w, x)`` in a train step, the
function traced as ``jax.jit(jax.grad(f))``), the jaxpr holds the differentiated function's
forward operations under ``jvp`` and its backward under ``transpose``. A cut input has no
backward at all: JAX returns a constant zero (``broadcast_in_dim 0.0``, or a literal ``0.0`` for a
scalar) where its gradient should be. We report an input of the forward part (a value it reads from
outside) when

- every path from it to the forward part's results stops at a gradient-free op, and at least one
  of those ops' results reaches a result (an input only read by dead code is not cut, it is unused);
- the program holds a constant-zero value of its shape and dtype outside the forward and backward
  parts, as many as there are cut inputs of that shape (otherwise which input the zero belongs to
  is not proven, and we stay quiet);
- no cut is an explicit ``stop_gradient`` (the user asked for it).

A straight-through estimator ``x + stop_gradient(round(x) - x)`` and any input with one ordinary
path keep a gradient path, so they are quiet; integer inputs have no gradient by design. A function
traced on its own that is only differentiated elsewhere (by the tests, or another file's ``grad``)
is not judged: which of its arguments are differentiated is not in its jaxpr. Nor is the body of a
``custom_jvp``/``custom_vjp`` function (its gradient is the user's rule, a straight-through
estimator often): a gradient is taken to pass through it.
"""
from __future__ import annotations

import ast
from typing import Iterable, Iterator

from jaxlint.ir import Location, Op, Program, Region, Value, patterns, region_links
from jaxlint.ir.primitives import traits
from jaxlint.model import Finding, Span
from jaxlint.rules.base import ProgramContext, Rule


class ZeroGradient(Rule):
    code = "JX505"
    name = "zero-gradient"
    summary = ("Every path from a differentiated input to the output runs through an op with no gradient "
               "(round, argmax, a comparison): its gradient is always zero.")
    severity = "error"

    @classmethod
    def check_program(cls, ctx: ProgramContext) -> Iterable[Finding]:
        program = ctx.program
        cuts = program.memo("JX505 cuts", lambda: _cut_inputs(program))
        if not cuts:
            return
        stale = ctx.program.stale_library_tracebacks
        for op in ctx.program.walk() if stale else ctx.ops_here():
            if id(op) not in cuts:
                continue
            place = _place(ctx, op) if stale else op.location
            if place is None or place.path != ctx.path:
                continue
            for value in cuts[id(op)]:
                yield ctx.finding(cls, _message(ctx, op, value, place.span), place.span)


def _place(ctx: ProgramContext, op: Op) -> Location | None:
    """Where the cut op is on JAX < 0.7, whose cached library jits (``jnp.round``) keep the
    traceback of the first call that traced them, maybe in another file: the op's own location
    when it holds the op computing its input, else the innermost call around that op's source."""
    neighbours = [v.producer.location for v in op.inputs if v.producer is not None and v.producer.location]
    if op.location is not None and (not neighbours or any(
            n.path == op.location.path and op.location.span.contains(n.span) for n in neighbours)):
        return op.location
    if not neighbours:
        return None
    inner = neighbours[0]
    index = ctx.index_of(inner.path)
    if index is None:
        return None
    around = [index.span(call) for call in index.calls]
    around = [span for span in around if span.contains(inner.span) and span != inner.span]
    if not around:
        return None
    return Location(inner.path, min(around, key=lambda span: (span.end_line - span.start_line,
                                                              span.end_col - span.start_col)))


def _forward(op: Op) -> bool:
    """An op of the forward part of a differentiated function (its backward is under transpose)."""
    return op.under("jvp") and not op.under("transpose")


def _cut_inputs(program: Program) -> dict[int, list[Value]]:
    """id(cut op) -> the inputs of the forward part cut there."""
    forward = [op for op in program.walk() if _forward(op)]
    if not forward:
        return {}
    zeros = _zero_gradients(program)
    if not zeros:
        return {}
    outputs = _region_outputs(program)
    cut_by: dict[Value, tuple[tuple, list[Op]]] = {}
    for value in _inputs_of(forward):
        # The input as the forward part reads it, or before a broadcast outside it (vmap's
        # in_axes=None broadcasts an unbatched input before the batched forward part).
        key = next((k for k in (_key(value), _key(patterns.strip(value))) if k in zeros), None)
        if key is None:
            continue
        cuts = _cuts(value, outputs)
        if cuts and all(op.primitive != "stop_gradient" for op in cuts):
            cut_by[value] = (key, cuts)
    found: dict[int, list[Value]] = {}
    for value, (key, cuts) in cut_by.items():
        if sum(other == key for other, _ in cut_by.values()) > zeros[key]:
            continue  # more cut inputs than zero gradients of that shape: which is which is not proven
        for op in cuts:
            found.setdefault(id(op), []).append(value)
    return found


def _key(value: Value) -> tuple:
    return value.shape, str(value.dtype)


def _zero_gradients(program: Program) -> dict[tuple, int]:
    """(shape, dtype) -> how many constant-zero float values lie outside the forward and backward
    parts: what JAX puts where the gradient of a cut input should be."""
    found: dict[tuple, int] = {}

    def add(value: Value) -> None:
        found[_key(value)] = found.get(_key(value), 0) + 1

    for op in program.walk():
        if op.under("jvp") or op.under("transpose"):
            continue
        if op.primitive == "broadcast_in_dim" and _literal_zero(op.inputs[0]) and patterns.inexact(op.outputs[0]):
            add(op.outputs[0])
            continue
        for value in op.inputs:
            if value.shape == () and _literal_zero(value) and patterns.inexact(value):
                add(value)
    for value in program.top.outputs:
        if _literal_zero(value) and patterns.inexact(value):
            add(value)
    return found


def _literal_zero(value: Value) -> bool:
    if value.literal is None:
        return False
    import numpy as np
    try:
        array = np.asarray(value.literal)
        return array.dtype.kind in "fc" and array.size == 1 and float(array.reshape(())) == 0.0
    except (TypeError, ValueError):
        return False


def _inputs_of(forward: list[Op]) -> list[Value]:
    """Float values the forward part reads from outside it, in program order."""
    inside = {id(op) for op in forward}
    found: dict[int, Value] = {}
    for op in forward:
        for value in op.inputs:
            if value.literal is not None or value.const or not patterns.inexact(value):
                continue
            producer = value.producer
            region = value.region_input
            if producer is not None and id(producer) in inside:
                continue
            if region is not None and region.parent is not None and id(region.parent) in inside:
                continue
            found.setdefault(id(value), value)
    return list(found.values())


def _region_outputs(program: Program) -> dict[int, list[tuple[Region, int]]]:
    """id(value) -> the (region, position) it is an output of (nested regions only)."""
    found: dict[int, list[tuple[Region, int]]] = {}
    for op in program.walk():
        for region in op.regions:
            for k, value in enumerate(region.outputs):
                found.setdefault(id(value), []).append((region, k))
    return found


def _is_result(value: Value, program_top: Region | None) -> bool:
    """``value`` leaves the forward part: returned by the program, read by an op outside it, or the
    unused result of a forward op at its outermost level (``grad`` drops the primal output)."""
    op = value.producer
    if op is None or not _forward(op):
        return False  # the input itself, or a value inside a region (its outputs are followed)
    if program_top is not None and any(out is value for out in program_top.outputs):
        return True
    if any(not _forward(use) for use in value.uses):
        return True
    if value.uses:
        return False
    return op.region is None or op.region.parent is None or not _forward(op.region.parent)


def _top(value: Value) -> Region | None:
    op = value.producer
    region = op.region if op is not None else value.region_input
    while region is not None and region.parent is not None:
        region = region.parent.region
    return region


def _flow(start: list[Value], outputs: dict[int, list[tuple[Region, int]]], gradient: bool,
          cuts: list[Op] | None = None) -> bool:
    """Whether a path from ``start`` reaches a result of the forward part; ``gradient``: only
    along edges a gradient flows back through, collecting in ``cuts`` the ops where it stops."""
    top = _top(start[0]) if start else None
    stack, seen = list(start), set()
    while stack:
        value = stack.pop()
        if id(value) in seen:
            continue
        seen.add(id(value))
        if _is_result(value, top):
            return True
        for region, k in outputs.get(id(value), ()):
            parent = region.parent
            if parent is None or not _forward(parent):
                continue
            links = region_links(parent, region) if gradient else None
            if links is None:
                if not gradient or region_links(parent, region) is None:
                    stack.extend(parent.outputs)  # not known: every output (a gradient flows)
                continue
            if links.decides:
                continue
            op_outs, back = links.results[k]
            stack.extend(parent.outputs[i] for i in op_outs)
            stack.extend(region.inputs[i] for i in back)
        for use in value.uses:
            if not _forward(use):
                continue
            if use.regions:
                stack.extend(_into_regions(use, value, gradient))
                continue
            if gradient and not use.custom_derivative and (traits(use.primitive).gradient_free
                             or not any(patterns.inexact(out) for out in use.outputs)):
                if cuts is not None and all(c is not use for c in cuts):
                    cuts.append(use)
                continue
            stack.extend(out for out in use.outputs if not gradient or patterns.inexact(out))
    return False


def _into_regions(op: Op, value: Value, gradient: bool) -> Iterator[Value]:
    """Where ``value``, an operand of the control-flow op ``op``, goes: its regions' inputs; any
    path (not only a gradient's) also reaches every output (a predicate decides them all)."""
    if not gradient:
        yield from op.outputs
        return
    positions = [i for i, v in enumerate(op.inputs) if v is value]
    for region in op.regions:
        links = region_links(op, region)
        if links is None:
            yield from op.outputs
            continue
        for j, operand in enumerate(links.operands):
            if operand in positions:
                yield region.inputs[j]


def _cuts(value: Value, outputs: dict[int, list[tuple[Region, int]]]) -> list[Op]:
    """The ops that cut every gradient path from ``value`` to the results (whose own results do
    reach one); [] when a gradient path exists or nothing the input feeds reaches a result."""
    stops: list[Op] = []
    if _flow([value], outputs, gradient=True, cuts=stops):
        return []
    return [op for op in stops if _flow(list(op.outputs), outputs, gradient=False)]


def _message(ctx: ProgramContext, op: Op, value: Value, span: Span) -> str:
    name = _name(ctx, value)
    what = ctx.index.text(node) if (node := _node_at(ctx, span)) is not None else op.primitive
    kind = "a comparison" if traits(op.primitive).elementwise == "compare" else (
        "an integer result" if not any(patterns.inexact(out) for out in op.outputs) else f"{op.primitive}")
    return (f"{name} is differentiated, but every path from it to the output goes through {what} ({kind}, "
            f"which passes no gradient): its gradient is always zero and it never changes. Use a "
            f"differentiable relaxation (a straight-through estimator: x + jax.lax.stop_gradient("
            f"jnp.round(x) - x)), or stop_gradient it on purpose.")


def _node_at(ctx: ProgramContext, span: Span) -> ast.expr | None:
    return ctx.index.node_at(span, ast.Call) or ctx.index.node_at(span, ast.Compare) \
        or ctx.index.node_at(span, ast.BinOp)


def _name(ctx: ProgramContext, value: Value) -> str:
    """How the source spells the input: the operand of the first op of this file reading it."""
    stack, seen = [value], set()
    while stack:
        current = stack.pop(0)
        if id(current) in seen:
            continue
        seen.add(id(current))
        for use in current.uses:
            if use.primitive in patterns.TRANSPARENT or use.primitive == "convert_element_type":
                stack.extend(use.outputs)
                continue
            if use.regions:  # a loop or branch: where its body reads the operand
                stack.extend(_into_regions(use, current, gradient=True))
                continue
            if use.location is None or use.location.path != ctx.path:
                continue
            position = next(i for i, v in enumerate(use.inputs) if v is current)
            spelled = _operand(ctx, use, position)
            if spelled is not None:
                return f"`{spelled}`"
    return f"The {value.dtype}{list(value.shape)} input"


def _operand(ctx: ProgramContext, op: Op, position: int) -> str | None:
    span = op.location.span  # type: ignore[union-attr]
    binop = ctx.index.node_at(span, ast.BinOp)
    node: ast.expr | None = None
    compare = ctx.index.node_at(span, ast.Compare)
    if binop is not None and len(op.inputs) == 2:
        node = binop.left if position == 0 else binop.right
    elif compare is not None and len(compare.comparators) == 1 and len(op.inputs) == 2:
        node = compare.left if position == 0 else compare.comparators[0]
    else:
        call = ctx.index.node_at(span, ast.Call)
        if call is not None and position < len(call.args) and not any(isinstance(a, ast.Starred) for a in call.args):
            node = call.args[position]
    if isinstance(node, (ast.Name, ast.Attribute, ast.Subscript)):
        return ctx.index.text(node)
    return None
