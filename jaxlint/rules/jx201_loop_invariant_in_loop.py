"""JX201 loop-invariant-in-loop: costly loop-invariant work that XLA will not hoist out of a loop.

Two cases cost, measured (rules/JX201.md); a forward-only invariant outside a cond does not, XLA's
loop-invariant code motion hoists it:

- Differentiated scan. JAX's partial evaluation hoists the *forward* invariant work out of the
  primal scan, but the backward of that work stays in the transposed scan: every iteration maps
  its own cotangent through the invariant expression's (constant) Jacobian and adds the result to
  the cotangent of a loop constant. Hoisted by the user, the cotangents are summed first and the
  backward runs once. Found in the transposed scan as the "linear tail" of a cotangent
  accumulator: ops linear in one per-iteration value whose other operands are loop-invariant.
- Invariant work inside a ``cond`` in a loop body: XLA does not hoist out of conditionals.
"""
from __future__ import annotations

from collections import defaultdict
from typing import ClassVar, Iterable

from jaxlint.ir import Op, Region, Value, aval_text, loop_body
from jaxlint.ir.costs import op_flops, trip_count
from jaxlint.ir.primitives import COSTLY, EFFECTFUL, traits
from jaxlint.model import Cost, Finding, Span
from jaxlint.rules.base import Option, ProgramContext, Rule


class LoopInvariantInLoop(Rule):
    code = "JX201"
    name = "loop-invariant-in-loop"
    summary = ("Costly loop-invariant work in a loop body that XLA will not hoist "
               "(differentiated loop, or inside a cond).")
    severity = "warning"
    # Below this many FLOPs per iteration the repeated work is not worth a finding.
    min_flops: ClassVar[float] = 1e5
    options = {"min-flops": Option(float, min_flops, "FLOPs per iteration of the repeated work", minimum=0)}

    @classmethod
    def check_program(cls, ctx: ProgramContext) -> Iterable[Finding]:
        min_flops = ctx.option(cls, "min-flops")
        for loop in ctx.program.walk():
            body = loop_body(loop)
            if body is None:
                continue
            region, nconsts, _ = body
            invariant = set(region.inputs[:nconsts])
            in_cond: list[Op] = []
            _propagate(region, invariant, in_cond, depth=0)
            groups: list[tuple[str, list[Op]]] = [("cond", in_cond)]
            if loop.primitive == "scan" and "transpose" in loop.transforms:
                groups.append(("grad", _backward_tails(loop, region, nconsts, invariant)))
            for why, ops in groups:
                for location, located in _expressions(ctx, loop, ops).items():
                    costly = [op for op in located if op.primitive in COSTLY]
                    costly_flops = sum(op_flops(op) or 0.0 for op in costly)
                    if location is not None and costly_flops >= min_flops:
                        yield _finding(cls, ctx, loop, why, location, located, costly)


def _propagate(region: Region, invariant: set[Value], in_cond: list[Op], depth: int) -> None:
    """Add the region's loop-invariant values to ``invariant``; collect invariant ops inside conds."""
    for op in region.ops:
        if op.primitive in EFFECTFUL:
            continue
        if op.primitive == "cond":
            # Branch inputs are the operands after the index; the branches see the same invariants.
            # A cond with an invariant index at the body's top level is invariant as a whole and
            # may be hoisted by XLA: its ops are not reported.
            whole = depth == 0 and _is_inv(op.inputs[0], invariant)
            for branch in op.regions:
                invariant.update(b for b, v in zip(branch.inputs, op.inputs[1:]) if _is_inv(v, invariant))
                _propagate(branch, invariant, [] if whole else in_cond, depth + 1)
            if all(_is_inv(v, invariant) for v in op.inputs) and \
                    all(_is_inv(o, invariant) for b in op.regions for o in b.outputs):
                invariant.update(op.outputs)
            continue
        if op.regions:  # a nested loop: analyzed as a loop of its own, opaque here
            continue
        if all(_is_inv(v, invariant) for v in op.inputs):
            invariant.update(op.outputs)
            if depth > 0:
                in_cond.append(op)


def _is_inv(value: Value, invariant: set[Value]) -> bool:
    return value.literal is not None or value.const or value in invariant


def _backward_tails(loop: Op, region: Region, nconsts: int, invariant: set[Value]) -> list[Op]:
    """Ops of a transposed scan body that map a per-iteration cotangent through a fixed linear map
    into the accumulated cotangent of a loop constant (a carry ``acc + contribution``)."""
    tails: list[Op] = []
    for k in range(int(loop.params["num_carry"])):
        carry_in = region.inputs[nconsts + k]
        terms = _sum_terms(region.outputs[k], region)
        # An accumulator: the carry itself plus terms that do not depend on it (a recurrence such
        # as ``ct = W.T @ ct`` is not one).
        if sum(t is carry_in for t in terms) != 1:
            continue
        for term in terms:
            if term is carry_in or _depends_on(term, carry_in, region, set()):
                continue
            ops: list[Op] = []
            _collect_tail(term, region, invariant, ops)
            tails += [op for op in ops if op not in tails]
    return tails


def _sum_terms(value: Value, region: Region) -> list[Value]:
    op = value.producer
    if op is not None and op.region is region and op.primitive in ("add_any", "add"):
        return [t for v in op.inputs for t in _sum_terms(v, region)]
    return [value]


def _depends_on(value: Value, source: Value, region: Region, done: set[Op]) -> bool:
    if value is source:
        return True
    op = value.producer
    if op is None or op.region is not region or op in done:
        return False
    done.add(op)
    return any(_depends_on(v, source, region, done) for v in op.inputs)


def _collect_tail(value: Value, region: Region, invariant: set[Value], ops: list[Op]) -> None:
    """Walk back from ``value`` through linear ops whose other operands are invariant, stopping
    at the per-iteration cotangent they map (the first op that is not such a linear op)."""
    op = value.producer
    if _is_inv(value, invariant) or op is None or op.region is not region or op in ops:
        return
    variant = [i for i, v in enumerate(op.inputs) if not _is_inv(v, invariant)]
    if not _linear_in(op, variant):
        return
    ops.append(op)
    for i in variant:
        _collect_tail(op.inputs[i], region, invariant, ops)


def _linear_in(op: Op, variant: list[int]) -> bool:
    """The op's result is a fixed linear map of its ``variant`` (per-iteration) operands."""
    linear = traits(op.primitive).linear
    return (linear == "all" or (linear == "one" and len(variant) <= 1)
            or (linear == "first" and variant in ([], [0])) or (linear == "cases" and 0 not in variant))


def _expressions(ctx: ProgramContext, loop: Op, ops: list[Op]) -> dict[Span | None, list[Op]]:
    """Connected groups of ``ops`` (one invariant expression each), keyed by where the group's
    costliest op is written (None: not in this file)."""
    group_of = {op: [op] for op in ops}
    for op in ops:
        for value in op.inputs:
            other = value.producer
            if other in group_of and group_of[other] is not group_of[op]:
                merged, gone = group_of[op], group_of[other]
                merged.extend(gone)
                for moved in gone:
                    group_of[moved] = merged
    groups: dict[Span | None, list[Op]] = defaultdict(list)
    for group in {id(g): g for g in group_of.values()}.values():
        key = max(group, key=lambda op: op_flops(op) or 0.0 if op.primitive in COSTLY else -1.0)
        groups[_span(ctx, key, loop)].extend(sorted(group, key=ops.index))
    return groups


def _span(ctx: ProgramContext, op: Op, loop: Op) -> Span | None:
    for where in (op.location, loop.location):
        if where is not None and where.path == ctx.path:
            return where.span
    return ctx.fallback_span


def _finding(rule: type[Rule], ctx: ProgramContext, loop: Op, why: str, span: Span,
             ops: list[Op], costly: list[Op]) -> Finding:
    per_iteration = sum(op_flops(op) or 0.0 for op in ops)
    trips = trip_count(loop)
    kind = "scan" if loop.primitive == "scan" else "while_loop"
    counts: dict[str, int] = defaultdict(int)
    for op in costly:
        counts[f"{op.primitive} -> {aval_text(op.outputs[0])}"] += 1
    work = ", ".join(f"{n} x {what}" if n > 1 else what for what, n in counts.items())
    runs = f"{trips} iterations" if trips is not None else "every iteration (trip count unknown)"
    wasted = per_iteration * (trips - 1) if trips is not None else None
    scale = (f"{per_iteration:.3g} FLOPs per iteration, {wasted:.3g} FLOPs wasted per call"
             if wasted is not None else f"{per_iteration:.3g} FLOPs per extra iteration")
    if why == "grad":
        message = (f"loop-invariant work in a differentiated {kind} body: its backward ({work}) "
                   f"runs in all {runs} of the transposed {kind} ({scale}). JAX hoists the forward "
                   "computation but not the gradient, and XLA cannot; compute this expression "
                   f"before the {kind} and close over the result, so its backward runs once.")
        note = "backward of the invariant expression, repeated per iteration of the transposed scan"
    else:
        message = (f"loop-invariant work inside a cond in a {kind} body ({work}) runs in {runs} "
                   f"({scale}, if the branch runs each time). XLA does not hoist out of a "
                   f"conditional; compute it before the {kind} and pass the result in.")
        note = "invariant work in a cond branch, repeated per iteration (upper bound)"
    return ctx.finding(rule, message, span,
                       cost=Cost(basis="shapes", flops=wasted, bytes=None, equations=len(ops), note=note))


