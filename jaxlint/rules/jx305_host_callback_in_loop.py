"""JX305 host-callback-in-loop: a host callback inside a compiled scan or while body."""
from __future__ import annotations

from typing import Iterable

from jaxlint.ir import Op, primitives
from jaxlint.model import Cost, Finding
from jaxlint.rules.base import ProgramContext, Rule

# Callback primitive (primitives.CALLBACKS) -> what the user wrote. ``jax.debug.print`` is
# ``debug_print`` from JAX 0.8.0 and ``debug_callback`` before; ``outside_call`` is the old
# host_callback module.
WRITTEN = {
    "debug_print": "jax.debug.print",
    "debug_callback": "jax.debug.print / jax.debug.callback",
    "pure_callback": "jax.pure_callback",
    "io_callback": "io_callback",
    "outside_call": "host_callback",
}


class HostCallbackInLoop(Rule):
    code = "JX305"
    name = "host-callback-in-loop"
    summary = "A host callback (`jax.debug.print`, callbacks) inside a compiled loop body."
    severity = "warning"

    @classmethod
    def check_program(cls, ctx: ProgramContext) -> Iterable[Finding]:
        for op in ctx.ops_here(*primitives.CALLBACKS):
            loops = enclosing_loops(op)
            if not loops:
                continue
            trips = trip_count(loops)
            upto = "up to " if _under_cond(op, loops[0]) else ""
            cost = Cost(basis="shapes", note=(
                f"{upto}{trips} host round trips per call" if trips is not None
                else "one host round trip per iteration of a while loop (trip count unknown)"))
            yield ctx.finding(cls, _message(op, loops, trips), op.location.span, cost=cost)


def enclosing_loops(op: Op) -> list[Op]:
    """The scan/while ops whose regions contain ``op``, at any depth (through conds too), innermost first."""
    loops = []
    region = op.region
    while region is not None and region.parent is not None:
        if region.parent.primitive in primitives.LOOPS:  # fori_loop and lax.map become these
            loops.append(region.parent)
        region = region.parent.region
    return loops


def trip_count(loops: list[Op]) -> int | None:
    """Iterations of the innermost body per call: the product of the scan lengths; None with a
    while loop or a symbolic length (a shape-polymorphic trace)."""
    total = 1
    for loop in loops:
        length = loop.params["length"] if loop.primitive == "scan" else None
        if not isinstance(length, int):
            return None
        total *= length
    return total


def _under_cond(op: Op, loop: Op) -> bool:
    region = op.region
    while region is not None and region.parent is not None and region.parent is not loop:
        if region.parent.primitive == "cond":
            return True
        region = region.parent.region
    return False


def _message(op: Op, loops: list[Op], trips: int | None) -> str:
    what = WRITTEN[op.primitive]
    inner = loops[0]
    where = (f"a scan of {inner.params['length']} steps" if inner.primitive == "scan"
             else "a while loop")
    if len(loops) > 1:
        where += f" nested in {len(loops) - 1} more loop{'s' if len(loops) > 2 else ''}"
    runs = (f"{trips} times per call" if trips is not None
            else "once per iteration (the trip count is not known statically)")
    if _under_cond(op, inner):  # it runs only when the branch holding it is taken
        runs = "up to " + runs
    return (f"{what} ({op.primitive}) inside {where}: the compiled loop stops and calls back to "
            f"Python {runs}. Cost: a host round trip each time (measured on CPU: about 0.1 ms for "
            f"a no-op callback, 0.2 ms for jax.debug.print; a 1000-step scan took 85-200 ms "
            f"instead of 0.01 ms). Move the callback out of the loop: return the values from the "
            f"scan (stacked outputs) and print or process them after it.")
