"""JX309 host-sync-in-loop: one line turns a device array into a Python value (``float(loss)``,
``.item()``, ``if jnp.any(x)``, an f-string) on at least half of a loop's iterations and on at
least ``min-syncs`` of them, in a loop that also calls a jitted function. In a test (``pytest
--jaxlint``), where training loops are short, a line that converted on every iteration of a loop
that went round at least ``min-iterations-in-tests`` times is reported too.

A run-time rule (``check_run``): drivers/syncs.py counts, per test (or per program run),
each conversion made by the project's code and the loop it was made in; loops.py counts each
loop's iterations (all its runs in the scope added up) and keeps the callables its body calls,
of which syncs.py finds the jitted ones in the frame that ran it. Nothing is guessed: a loop
whose jitted callee is not bound to a name its body calls (or one level down, in a function it
calls) is not reported, nor is a conversion a test file or another library makes.
"""
from __future__ import annotations

import os
from typing import Iterable

from jaxlint.events import HostSyncs, LoopRuns
from jaxlint.model import Finding, Option
from jaxlint.rules.base import Rule, RunContext

# Measured on this machine (JAX 0.10.2, CPU): see rules/JX309.md, "Why is this bad?".
_COST = ("each one makes the host wait until the device has finished the step that produced the "
         "value, so dispatch cannot run ahead and the host and the device take turns instead of "
         "overlapping (a small jitted update on CPU took 2.5-5x longer per step reading its loss every "
         "step than every 100th)")
_INSTEAD = ("keep the value on the device (accumulate it with jnp operations) and read it every k "
            "steps, or collect the arrays and read them at once with one `jax.device_get`")


class HostSyncInLoop(Rule):
    code = "JX309"
    name = "host-sync-in-loop"
    summary = ("A line turns a device array into a Python value (float, .item(), if, an f-string) on most "
               "iterations of a loop that calls a jitted function.")
    severity = "warning"
    options = {"min-syncs": Option(int, 20, "iterations of one loop on which one line converted, within one "
                                   "test or one program run", minimum=1),
               "min-iterations-in-tests": Option(int, 5, "iterations of one loop within one test, on every one "
                                                 "of which one line converted (pytest --jaxlint only)", minimum=1)}
    run_events = frozenset({"syncs"})

    @classmethod
    def check_run(cls, ctx: RunContext) -> Iterable[Finding]:
        least = ctx.option(cls, "min-syncs")
        # A test runs a few steps of a training loop where the program runs thousands: there a line
        # that converted on each of them is reported from fewer (a program keeps min-syncs alone).
        in_tests = ctx.option(cls, "min-iterations-in-tests") if ctx.events.scope != "program" else None
        for syncs in ctx.events.syncs:
            loop = ctx.events.loops.get(syncs.loop)
            if loop is None or not loop.jitted:
                continue
            most = syncs.count >= least and 2 * syncs.count >= loop.iterations
            every = in_tests is not None and syncs.count == loop.iterations >= in_tests
            if not (most or every):
                continue
            yield cls.finding(syncs.place.path, syncs.place.span, _message(syncs, loop, ctx.events.scope))


def _message(syncs: HostSyncs, loop: LoopRuns, scope: str) -> str:
    kinds = ", ".join(f"{kind} {count}" for kind, count in sorted(syncs.kinds.items(), key=lambda k: -k[1]))
    where = "in this program's run" if scope == "program" else f"in the test {scope}"
    header = f"{os.path.basename(loop.site.path)}:{loop.site.start_line}"
    return (f"This line turned a device array into a Python value on {syncs.count} of the {loop.iterations} "
            f"iterations of the loop at {header} ({kinds}) {where}, a loop that calls the jitted "
            f"{', '.join(loop.jitted)}: {_COST}. Instead, {_INSTEAD}.")
