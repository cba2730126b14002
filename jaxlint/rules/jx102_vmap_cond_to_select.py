"""JX102 vmap-cond-to-select: a cond/switch whose predicate is batched under vmap runs every branch.

JAX's batching rule for ``cond`` with a batched index (jax/_src/lax/control_flow/conditionals.py)
removes the ``cond``: for each branch it masks the operands, ``select_n(eq(index, i),
stop_gradient(x), x)``, inlines the branch, and joins the branch outputs with
``select_n(index, out_0, out_1, ...)``. All of these carry the cond call's source location except
the inlined branch ops, which keep their own. A cond whose predicate is unbatched stays a ``cond``
op and is never reported; a user's own ``jnp.where`` is located at the ``where``, not at a cond call.
"""
from __future__ import annotations

from typing import Iterable, cast

from jaxlint.ir import Location, Op, Value, costs
from jaxlint.model import Cost, Finding, Span
from jaxlint.rules.base import ProgramContext, Rule

COND_KINDS = frozenset({"cond", "switch"})


class VmapCondToSelect(Rule):
    code = "JX102"
    name = "vmap-cond-to-select"
    summary = "A `lax.cond`/`lax.switch` with a batched predicate under vmap: every branch runs for every element."
    severity = "warning"

    @classmethod
    def check_program(cls, ctx: ProgramContext) -> Iterable[Finding]:
        candidates = [op for op in ctx.ops_here("select_n") if op.under("vmap") and not _is_operand_mask(op)]
        if not candidates:
            return
        spans = ctx.calls_of(COND_KINDS, {cast(Location, op.location).span for op in candidates})
        # One finding per cond call; each traced execution of it (a Python loop, two vmaps of one
        # helper) is one instance, told apart by its index value.
        by_call: dict[Span, dict[int, list[Op]]] = {}
        for op in candidates:
            assert op.location is not None  # candidates are located
            if op.location.span in spans:
                by_call.setdefault(op.location.span, {}).setdefault(id(_index(op)), []).append(op)
        for span, instances in by_call.items():
            yield _finding(cls, ctx, span, spans[span], list(instances.values()))


def _is_operand_mask(op: Op) -> bool:
    """``select_n(p, stop_gradient(x), x)``: a branch operand, masked for reverse-mode safety."""
    if len(op.inputs) != 3:
        return False
    masked, kept = op.inputs[1], op.inputs[2]
    producer = masked.producer
    return masked is kept or (producer is not None and producer.primitive == "stop_gradient"
                              and producer.inputs[0] is kept)


def _index(join: Op) -> Value:
    """The batched branch index a join selects by (broadcast to each output's shape)."""
    value = join.inputs[0]
    while value.producer is not None and value.producer.primitive == "broadcast_in_dim":
        value = value.producer.inputs[0]
    return value


def _branch_ops(joins: list[Op]) -> list[list[Op]]:
    """The inlined ops of each branch: back from the join's case inputs to the masked operands."""
    branches: list[list[Op]] = []
    seen: set[int] = set()
    for case in range(1, len(joins[0].inputs)):
        ops: list[Op] = []
        stack = [join.inputs[case] for join in joins if case < len(join.inputs)]
        while stack:
            producer = stack.pop().producer
            if producer is None or id(producer) in seen or _is_operand_mask(producer):
                continue
            seen.add(id(producer))
            ops.append(producer)
            stack.extend(producer.inputs)
        branches.append(ops)
    return branches


def _finding(rule: type[Rule], ctx: ProgramContext, span: Span, kind: str, instances: list[list[Op]]) -> Finding:
    branch_flops: list[float | None] = []
    equations = 0
    most: float | None = 0.0  # every element takes the cheapest branch
    least: float | None = 0.0  # every element takes the dearest branch
    known = True
    for joins in instances:
        branches = _branch_ops(joins)
        equations += sum(len(ops) for ops in branches)
        flops = [costs.ops_flops(ops) for ops in branches]
        runs, exact = costs.executions(joins[0])
        known = known and exact
        if any(f is None for f in flops) or most is None or least is None:
            most = least = None
        else:
            # An element needs one branch, which one is data: the others' FLOPs are waste.
            most += (sum(flops) - min(flops)) * runs
            least += (sum(flops) - max(flops)) * runs
        if not branch_flops:
            branch_flops = flops
    batch = costs.elements_text(_index(instances[0][0]))
    call = "lax.switch" if kind == "switch" else "lax.cond"
    if kind == "cond":
        branch_flops = branch_flops[::-1]  # JAX orders (false_fun, true_fun); the source (true, false)
    shown = ", ".join("?" if f is None else costs.format_flops(f) for f in branch_flops)
    per = "per call" if known else "per iteration of the enclosing while loop"
    if most is None or least is None:
        waste = "the wasted FLOPs are unknown (symbolic shapes)"
    elif most == least:
        waste = f"{costs.format_flops(most)} FLOPs {per} go to branches whose result is discarded"
    else:
        waste = (f"up to {costs.format_flops(most)} FLOPs {per} go to branches whose result is discarded "
                 f"({costs.format_flops(least)} if every element takes the most expensive branch)")
    message = (f"{call} predicate is batched under vmap ({batch} elements): JAX turns it into select_n "
               f"over all {len(branch_flops)} branches, so every element computes every branch "
               f"({equations} inlined equations; branch FLOPs for the batch: {shown}) and keeps one; "
               f"{waste}. Use lax.map over the batch (each element runs only its branch) or make the "
               "predicate unbatched.")
    lower = costs.format_flops(least) if least is not None else "unknown"
    cost = Cost(basis="shapes", flops=most, equations=equations,
                note=f"FLOPs of the branches not taken, upper bound (every element takes the "
                     f"cheapest branch); lower bound {lower}; the select_n joins and operand "
                     "masks are extra")
    return ctx.finding(rule, message, span, cost=cost)
