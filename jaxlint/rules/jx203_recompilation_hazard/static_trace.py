"""JX203 static floats, trace side: can the static float become a traced argument?

In the worker, with the module imported, the jitted function's Python function is traced again
(jaxprs with abstract shapes, nothing runs): with the static parameter at the values seen (the
calls' constants, else the hint's or recorded value; these traces must succeed, so that a failure
below is the parameter's), then with it as a weakly typed f32[] input. Arguments for the other
parameters come from the target's hint comment or its recorded signatures (import-time calls are
not kept for rules); without them nothing is claimed. Verdicts:

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

import inspect
import os
import sys
from typing import Any

from jaxlint.model import Target

UNKNOWN = ("unknown", "")


def verify(path: str, target: Target, param: str, samples: tuple, config: dict[str, str]) -> tuple[str, str]:
    """(verdict, the sentence the message gets) for the static ``param`` of the jitted ``target``."""
    try:
        return _verify(path, target, param, samples, config)
    except (Exception, SystemExit):  # user code under a new trace: never let it break the rule
        return UNKNOWN


def _verify(path: str, target: Target, param: str, samples: tuple, config: dict[str, str]) -> tuple[str, str]:
    import jax
    import jax.numpy as jnp

    from jaxlint.rules.jx601_trace_error import is_jax_tracing_error
    from jaxlint.worker.argsources import ArgumentSet
    from jaxlint.worker.trace import trace_function

    function, module = _function(path, target)
    python_function = inspect.unwrap(function) if function is not None else None
    if python_function is None or python_function is function or not inspect.isfunction(python_function):
        return UNKNOWN
    known = _arguments(path, target, function, module, config)
    if known is None:
        return UNKNOWN
    bound = inspect.signature(python_function).bind_partial(*known.args, **known.kwargs)

    def arguments(value: Any) -> ArgumentSet:
        bound.arguments[param] = value
        return ArgumentSet("jx203", tuple(bound.args), dict(bound.kwargs))

    given = bound.arguments.get(param)
    samples = samples or ((given,) if type(given) is float else ())
    if not samples:
        return UNKNOWN
    # With the parameter static the function traces: a failure with it traced is the parameter's.
    static_operations = [_operations(trace_function(python_function, arguments(v)), set()) for v in samples]
    name = target.bound_name or target.name
    marker = jax.ShapeDtypeStruct((), jnp.float32, weak_type=True)
    with_marker = arguments(marker)
    # make_jaxpr's inputs are the abstract leaves in order: which one is the parameter.
    leaves = [leaf for leaf in jax.tree_util.tree_leaves((with_marker.args, with_marker.kwargs))
              if isinstance(leaf, jax.ShapeDtypeStruct)]
    position = next(i for i, leaf in enumerate(leaves) if leaf is marker)
    try:
        traced = trace_function(python_function, with_marker)
    except Exception as error:
        if not is_jax_tracing_error(error):
            return UNKNOWN
        return "control", (f" Tracing `{name}` with `{param}` traced raises {type(error).__name__}: it decides "
                           "Python control flow or a shape, so that code must change too (`jnp.where`, "
                           "`lax.cond`), or keep it static and pass a few fixed values.")
    if any(operations != _operations(traced, {position}) for operations in static_operations):
        return "differs", ""  # Python code took another path for a tracer: nothing to claim
    return "operand", (f" jaxlint traced `{name}` with `{param}` traced: no Python control flow or shape "
                       "depends on it, and the operations are those of the static version (compared at "
                       f"{param}={', '.join(map(repr, samples))}), so making it traced changes no operation.")


def _function(path: str, target: Target) -> tuple[Any, Any]:
    """(the jitted object, its module) from the module the worker imported for ``path``."""
    real = os.path.realpath(path)
    for module in list(sys.modules.values()):
        try:
            file = getattr(module, "__file__", None)
            if isinstance(file, str) and os.path.realpath(file) == real:
                value = getattr(module, target.bound_name or target.qualname, None)
                if value is not None:
                    return value, module
        except Exception:  # a module object with a surprising __getattr__
            continue
    return None, None


def _arguments(path: str, target: Target, function: Any, module: Any, config: dict[str, str]) -> Any:
    """The first signature of the hint comment, else of the recorded ones; None without either."""
    from jaxlint.worker.argsources import ArgumentError, ArgumentRequest, hint, recorded

    job = {"path": path, "config": config}
    request = ArgumentRequest(target, function, module, job, lambda _: None)
    for source in (hint, recorded):
        try:
            found = source.arguments(request)
        except ArgumentError:
            return None
        if found:
            return found[0]
    return None


def _operations(closed: Any, constant_inputs: set[int]) -> list:
    """Primitive names in order, nested jaxprs included, leaving out dtype conversions and, at the
    top level, equations computing only on literals and ``constant_inputs``."""
    from jaxlint.ir.compat import open_jaxpr, subjaxprs

    jaxpr, _ = open_jaxpr(closed)
    constant = {v for i, v in enumerate(jaxpr.invars) if i in constant_inputs}
    found: list = []
    for eqn in jaxpr.eqns:
        inputs = [v for v in eqn.invars if not _is_literal(v)]
        if all(v in constant for v in inputs):
            constant.update(eqn.outvars)
            continue
        if eqn.primitive.name != "convert_element_type":
            found.append(eqn.primitive.name)
        for _, sub in subjaxprs(eqn.params):
            found.append(_operations(sub, set()))
    return found


def _is_literal(atom: Any) -> bool:
    from jaxlint.ir.compat import is_literal

    return is_literal(atom)
