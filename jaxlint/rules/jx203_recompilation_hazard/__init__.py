"""JX203 recompilation-hazard: ``jax.jit`` applied to a new function object on every loop iteration,
or a static argument fed changing floats.

A source rule (``check_source``: once per file, whether or not anything in it traced): jit caches
its traces and compiled code per function object, so ``jax.jit(lambda ...)``,
``jax.jit(partial(...))`` or ``jax.jit(g)`` of a ``g`` defined in the loop traces and compiles
again each iteration (measured: 5 traces for 5 iterations, 1 for a module-level function):
loops.py; a loop over configurations (``for fields in (["a"], ["b"])``), which needs a compile per
configuration anyway, is left alone: configurations.py. ``jax.jit(f)`` of an ``f`` defined
outside the loop compiles once but rebuilds the wrapper each step, off jit's fast path, as does
``jax.vmap(g)`` of a jitted ``g``: wrappers.py. The other half, a static argument fed changing
floats, is static_float.py (with
static_trace.py, which checks through the retrace service that the float is a plain operand).
"""
from __future__ import annotations

import ast
from typing import Iterable

from jaxlint.model import Finding
from jaxlint.rules.base import Rule, SourceContext
from jaxlint.rules.jx203_recompilation_hazard.loops import check_call, check_decorated, decorates, traced
from jaxlint.rules.jx203_recompilation_hazard.static_float import problems
from jaxlint.rules.jx203_recompilation_hazard.wrappers import check_jit_wrapper, check_vmap_of_jitted
from jaxlint.scan.index import DEFS


class RecompilationHazard(Rule):
    code = "JX203"
    name = "recompilation-hazard"
    summary = ("`jax.jit` applied in a loop to a lambda, partial or local def, or a static argument fed "
               "changing floats: one compile per iteration or value; or a jit wrapper rebuilt every "
               "iteration, off jit's fast path.")
    severity = "warning"
    fix = "safe"

    @classmethod
    def check_source(cls, ctx: SourceContext) -> Iterable[Finding]:
        index = ctx.index
        if index.tree is None or "jit" not in ctx.source:
            return
        for node in ast.walk(index.tree):
            finding = None
            if isinstance(node, (ast.Call, *DEFS)) and index.loops_around(node)[0]:  # names resolved only here
                if isinstance(node, DEFS):
                    finding = check_decorated(cls, ctx, node)
                elif decorates(node, index):
                    continue
                elif "jax.jit" in index.call_names(node):
                    finding = check_call(cls, ctx, node)
                    if finding is None and not traced((loops := index.loops_around(node))[2], index):
                        finding = check_jit_wrapper(cls, ctx, node, loops[0])
                elif "jax.vmap" in index.call_names(node):
                    loops, _, scope = index.loops_around(node)
                    if not traced(scope, index):
                        finding = check_vmap_of_jitted(cls, ctx, node, loops)
            if finding is not None:
                yield finding
        for message, span in problems(ctx):
            yield ctx.finding(cls, message, span)
