"""The first call the module made to the function while it was imported: the arguments it passed
to the object the target is (a jit of a vmap is called with the batch), else those the function
itself received (the module called it directly, or through another wrapper: ``jax.vmap(f)(xs)``
gives f one row, which is what f is traced with)."""
from __future__ import annotations

import inspect

from jaxlint.worker.argsources import ArgumentRequest, ArgumentSet


def arguments(request: ArgumentRequest) -> list[ArgumentSet]:
    call = request.recorded_call(request.function)
    if call is None:
        return []
    outer = call.outer
    if outer is not None and outer.callee is request.function:
        return [ArgumentSet("import-call", tuple(outer.args), outer.kwargs)]
    args = call.args
    if inspect.ismethod(request.function) and args:
        # A classmethod resolves to a bound method; the recorded call includes ``cls``.
        args = args[1:]
    return [ArgumentSet("import-call", args, call.kwargs)]
