"""JX306 stacked-residuals: a loop differentiated in reverse mode whose residuals, stacked over its
iterations, reach min-bytes, and which XLA compiles into less temporary memory with the loop body
checkpointed (compiled both ways: jaxlint.ir.remat, jaxlint.ir.compile), reported at the loop."""
from __future__ import annotations

import ast
from typing import Iterable

from jaxlint.ir import aval_text, costs, residuals
from jaxlint.ir.memory import Remat
from jaxlint.ir.residuals import Stacked
from jaxlint.model import Cost, Edit, Finding, Fix, Span
from jaxlint.rules.base import Option, ProgramContext, Rule
from jaxlint.text import size_text

# The loop calls whose body the fix wraps: the body's keyword and position.
_LOOP_CALLS = {"jax.lax.scan": ("f", 0), "jax.lax.fori_loop": ("body_fun", 2)}
_CHECKPOINTS = {"jax.checkpoint", "jax.remat", "jax.ad_checkpoint.checkpoint", "jax.ad_checkpoint.remat"}


class StackedResiduals(Rule):
    code = "JX306"
    name = "stacked-residuals"
    summary = ("A loop differentiated in reverse mode saves residuals stacked over its iterations that "
               "jax.checkpoint on its body would not keep.")
    severity = "warning"
    fix = "safe"
    options = {"min-bytes": Option(int, 16 * 2**20, "bytes a loop's stacked residuals must total to be reported",
                                   minimum=0)}

    @classmethod
    def check_program(cls, ctx: ProgramContext) -> Iterable[Finding]:
        minimum = ctx.option(cls, "min-bytes")
        # Compiling costs far more than tracing: only a loop whose stacked residuals reach
        # min-bytes is compiled, twice (as traced and checkpointed), once per signature.
        for stacked in ctx.program.memo(f"jx306.stacked.{minimum}", lambda: residuals.stacked(ctx.program, minimum)):
            location = stacked.loop.location
            if location is None or location.path != ctx.path:
                continue
            memory = ctx.program.checkpoint_memory(stacked.loop)
            if memory is None or memory.checkpointed_temp_bytes >= memory.temp_bytes:
                continue  # not measured, or checkpointing saves nothing
            cost = Cost(basis="compiled", flops=0.0,
                        bytes=float(memory.temp_bytes - memory.checkpointed_temp_bytes), equations=None,
                        note="device memory: XLA's temporary bytes, compiled as traced and with "
                             "jax.checkpoint on the loop body"
                             + (f"; per device, on each of {memory.devices}" if memory.devices > 1 else ""))
            yield ctx.finding(cls, _message(stacked, memory) + ctx.program.target_note, location.span,
                              _fix(ctx, location.span), cost=cost)


def _message(stacked: Stacked, memory: Remat) -> str:
    shapes: dict[str, int] = {}
    by_place: dict[str, int] = {}
    for residual in stacked.residuals:
        shapes[aval_text(residual.value)] = shapes.get(aval_text(residual.value), 0) + 1
        by_place[residual.made_at] = by_place.get(residual.made_at, 0) + residual.nbytes
    what = ", ".join(f"{n} x {shape}" if n > 1 else shape for shape, n in shapes.items())
    largest = sorted(by_place.items(), key=lambda item: -item[1])[:3]
    places = ", ".join(f"{place} ({size_text(nbytes)})" for place, nbytes in largest)
    trips = costs.trip_count(stacked.loop)
    saving = memory.temp_bytes - memory.checkpointed_temp_bytes
    # A partitioned program's temporaries are each device's; the residuals' sizes are the global arrays'.
    each = f" on each of its {memory.devices} devices" if memory.devices > 1 else ""
    whole = " (all devices together)" if memory.devices > 1 else ""
    return (f"the gradient saves {size_text(stacked.total)}{whole} of residuals of this loop, stacked over its "
            f"{trips} iterations ({what}); the largest come from {places}. Compiled, the gradient needs "
            f"{size_text(memory.temp_bytes)} of temporary memory{each}, "
            f"{size_text(memory.checkpointed_temp_bytes)} with jax.checkpoint on the loop body "
            f"({size_text(saving)} less), which keeps only what each iteration "
            "receives and computes the body's forward pass again during the backward pass.")


def _fix(ctx: ProgramContext, span: Span) -> Fix | None:
    """Wrap the body argument of the ``lax.scan``/``lax.fori_loop`` call at ``span`` in
    ``jax.checkpoint`` (the file must ``import jax``)."""
    tree = ctx.index.tree
    call = ctx.index.node_at(span, ast.Call) if tree is not None else None
    names = ctx.index.call_names(call) & set(_LOOP_CALLS) if call is not None else set()
    imports_jax = tree is not None and any(isinstance(node, ast.Import) and any(
        alias.name == "jax" and alias.asname is None for alias in node.names) for node in tree.body)
    if call is None or len(names) != 1 or not imports_jax:
        return None
    keyword, position = _LOOP_CALLS[next(iter(names))]
    body = next((k.value for k in call.keywords if k.arg == keyword), None)
    if body is None and len(call.args) > position and not any(isinstance(a, ast.Starred) for a in call.args):
        body = call.args[position]
    if body is None or (isinstance(body, ast.Call) and ctx.index.call_names(body) & _CHECKPOINTS):
        return None  # checkpointed already, with a policy that keeps residuals: not a one-line fix
    text = ctx.index.text(body)
    return Fix("safe", f"checkpoint the loop body: jax.checkpoint({text})",
               (Edit(ctx.index.span(body), f"jax.checkpoint({text})"),))
