"""The first call the module made to the function while it was imported.

When the module called the target object through a stack of wrappers (a jit of a vmap, a
custom_jvp of a jit, a vmap), the arguments are those it passed to the outermost one: the
function itself received what the wrappers made of them (a vmap gives it one row), which the
stack would refuse. A single wrapper right over the function (a jit, a custom_jvp, a checkpoint)
passes them on with the same shapes, so the function's own arguments are used, as always: they
show which values the wrapper traced (a Python ``1`` a jit traces is ``i32[]``, not static).
A call through a wrapper the module made in its expression (``jax.vmap(f)(xs)``) gives f the
arguments f received, one row: f is traced alone."""
from __future__ import annotations

import inspect
from typing import Any

from jaxlint.worker.argsources import ArgumentRequest, ArgumentSet


def arguments(request: ArgumentRequest) -> list[ArgumentSet]:
    call = request.recorded_call(request.function)
    if call is None:
        return []
    outer = call.outer
    if outer is not None and outer.callee is request.function and _is_stack(request.function):
        return [ArgumentSet("import-call", tuple(outer.args), outer.kwargs)]
    args = call.args
    if inspect.ismethod(request.function) and args:
        # A classmethod resolves to a bound method; the recorded call includes ``cls``.
        args = args[1:]
    return [ArgumentSet("import-call", args, call.kwargs)]


def _is_stack(function: Any) -> bool:
    """A wrapper over another wrapper (a jit over a vmap; functools.wraps keeps the chain). A bare
    vmap is one too: jaxlint's instrumented vmap wraps JAX's."""
    wrapped = getattr(function, "__wrapped__", None)
    return wrapped is not None and getattr(wrapped, "__wrapped__", None) is not None
