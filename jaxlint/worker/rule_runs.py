"""The user's differentiation rules, run: a trace of a target whose program holds a custom_jvp
or custom_vjp call (or a library primitive with its own JVP rule) never runs the JVP rule, nor
``fwd`` and ``bwd``, since JAX traces them only when the program is differentiated. So such a
target is traced once more, through ``jax.jvp`` (a JVP rule) or ``jax.vjp`` and its backward
function (``fwd`` and ``bwd``), with the same abstract arguments; the rules read that program too,
and keep only findings on lines the primal trace did not run (the rules' own code): autodiff's
operations carry the primal lines that made them, and are not the user's code."""
from __future__ import annotations

import os
from typing import Any, Callable

import jax
import numpy as np

from jaxlint.jaxapi import custom_rules
from jaxlint.model import Finding
from jaxlint.worker.argsources import ArgumentSet
from jaxlint.worker.trace import bind
from jaxlint.worker.traced_lines import user_lines


def rule_traces(function: Any, arguments: ArgumentSet, closed: Any, is_project: Callable[[str], bool]) -> list[Any]:
    """The ClosedJaxprs of ``function`` differentiated (``jax.jvp`` for a JVP rule, ``jax.vjp``'s
    backward function for a custom_vjp), with the primal's inputs first in the same order and then
    a tangent (or cotangent) per float input (output); none when ``closed`` holds no rule of the
    project's (``is_project`` of a file), when nothing is a float, or when differentiating fails (a
    rule that refuses to run)."""
    kinds = custom_rules.rule_kinds(closed, is_project)
    if not kinds:
        return []
    apply, inputs = bind(function, arguments)
    floats = [i for i, leaf in enumerate(inputs) if _is_float(leaf.dtype)]
    outputs = [i for i, aval in enumerate(closed.out_avals) if _is_float(getattr(aval, "dtype", None))]
    if not floats or not outputs:
        return []

    def floats_out(primals: tuple[Any, ...]) -> Callable[..., list[Any]]:
        """The function of the float inputs alone, giving the float outputs alone (the others
        stay as the primal trace has them: no tangent, as JAX requires for integers and keys)."""
        def differentiated(*values: Any) -> list[Any]:
            merged = list(primals)
            for index, value in zip(floats, values):
                merged[index] = value
            leaves = jax.tree_util.tree_leaves(apply(*merged))
            return [leaves[i] for i in outputs]
        return differentiated

    def jvp(*values: Any) -> Any:
        primals = values[:len(inputs)]
        return jax.jvp(floats_out(primals), tuple(primals[i] for i in floats), tuple(values[len(inputs):]))

    def vjp(*values: Any) -> Any:
        primals = values[:len(inputs)]
        _, backward = jax.vjp(floats_out(primals), *(primals[i] for i in floats))
        return backward(list(values[len(inputs):]))

    cotangents = [jax.ShapeDtypeStruct(closed.out_avals[i].shape, closed.out_avals[i].dtype,
                                       weak_type=bool(getattr(closed.out_avals[i], "weak_type", False)))
                  for i in outputs]
    traces = []
    for kind, program, extra in (("jvp", jvp, [inputs[i] for i in floats]), ("vjp", vjp, cotangents)):
        if kind in kinds:
            try:
                with custom_rules.rule_locations():
                    traces.append(jax.make_jaxpr(program)(*inputs, *extra))
            except (Exception, SystemExit):  # the rule refuses these arguments (or JAX the types)
                continue
    return traces


def _is_float(dtype: Any) -> bool:
    try:
        return dtype is not None and np.issubdtype(dtype, np.inexact)
    except TypeError:  # a PRNG key's extended dtype
        return False


def primal_lines(closed: Any) -> set[tuple[str, int]]:
    """(absolute file, line) of every user frame on the equations of the primal program."""
    return {(os.path.abspath(file), line) for file, line in user_lines(closed)}


# A JVP rule that draws again from the primal's key reuses it by design: the derivative of a
# Monte-Carlo estimate needs the primal's own samples (jaxopt's perturbed optimizers redraw
# ``noise.sample(seed=rng)`` in ``pert_jvp``). JX401 there would call that a bug.
_BY_DESIGN_IN_RULES = frozenset({"JX401"})


def in_rules_only(findings: list[Finding], ran: set[tuple[str, int]]) -> list[Finding]:
    """The findings of a differentiated program on lines the primal trace did not run, less those
    of codes that judge what differentiation rules do by design (key reuse)."""
    return [f for f in findings if (os.path.abspath(f.path), f.span.start_line) not in ran
            and f.code not in _BY_DESIGN_IN_RULES]
