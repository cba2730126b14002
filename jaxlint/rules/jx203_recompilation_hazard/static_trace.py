"""JX203 static floats, trace side: can the static float become a traced argument?

Through the retrace service (``ctx.retrace``: in the worker, with the module imported), the
jitted function's Python function is traced again (abstract shapes, nothing runs): with the static
parameter at the values seen (the calls' constants, else the hint's or recorded value; these
traces must succeed, so that a failure below is the parameter's), then with it as a weakly typed
f32[] input. Arguments for the other parameters come from the target's hint comment or its
recorded signatures; without them (or without the service) nothing is claimed. The operations are
compared on the IR. Verdicts:

- "control": tracing with the parameter traced raises a JAX tracing error: it decides Python
  control flow or a shape;
- "operand": it traces, and the operations equal the static version's once the equations that
  only compute on constants (and the parameter) are left out on both sides, as Python does that
  arithmetic on a static float at trace time (what Python computes from the static value before
  it reaches an operation is not compared);
- "differs": it traces, with other operations (Python code looked at the value's type, or a jnp
  function took another path for a Python constant): nothing is claimed;
- "unknown": nothing could be checked.
"""
from __future__ import annotations

from jaxlint.ir import Program, Region
from jaxlint.model import Target
from jaxlint.rules.base import TRACED_SCALAR, RetraceError, Retracer

UNKNOWN = ("unknown", "")
# Primitive names in program order; a nested region is a list of its own.
_Operations = list["str | _Operations"]


def verify(retrace: Retracer | None, target: Target, param: str, samples: tuple) -> tuple[str, str]:
    """(verdict, the sentence the message gets) for the static ``param`` of the jitted ``target``."""
    if retrace is None:
        return UNKNOWN
    try:
        return _verify(retrace, target, param, samples)
    except RetraceError:
        return UNKNOWN


def _verify(retrace: Retracer, target: Target, param: str, samples: tuple) -> tuple[str, str]:
    given = retrace.argument(target, param)
    samples = samples or ((given,) if type(given) is float else ())
    if not samples:
        return UNKNOWN
    # With the parameter static the function traces: a failure with it traced is the parameter's.
    static_operations = [_operations(retrace.trace(target, {param: v}).program, set()) for v in samples]
    name = target.bound_name or target.name
    try:
        traced = retrace.trace(target, {param: TRACED_SCALAR})
    except RetraceError as error:
        if not error.tracing_error:
            return UNKNOWN
        return "control", (f" Tracing `{name}` with `{param}` traced raises {str(error).partition(':')[0]}: it "
                           "decides Python control flow or a shape, so that code must change too (`jnp.where`, "
                           "`lax.cond`), or keep it static and pass a few fixed values.")
    if any(operations != _operations(traced.program, {traced.inputs[param]}) for operations in static_operations):
        return "differs", ""  # Python code took another path for a tracer: nothing to claim
    return "operand", (f" jaxlint traced `{name}` with `{param}` traced: no Python control flow or shape "
                       "depends on it, and the operations are those of the static version (compared at "
                       f"{param}={', '.join(map(repr, samples))}), so making it traced changes no operation.")


def _operations(program: Program, constant_inputs: set[int]) -> _Operations:
    """Primitive names in order, nested regions included, leaving out dtype conversions and, at
    the top level, ops computing only on literals and ``constant_inputs``."""
    top = program.top
    constant = {id(v) for i, v in enumerate(top.inputs) if i in constant_inputs}

    def names(region: Region, outer: bool) -> _Operations:
        found: _Operations = []
        for op in region.ops:
            if outer and all(v.literal is not None or id(v) in constant for v in op.inputs):
                constant.update(id(v) for v in op.outputs)
                continue
            if op.primitive != "convert_element_type":
                found.append(op.primitive)
            for sub in op.regions:
                found.append(names(sub, False))
        return found

    return names(top, True)
