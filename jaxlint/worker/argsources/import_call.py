"""The first call the module made to the function while it was imported."""
from __future__ import annotations

import inspect

from jaxlint.worker.argsources import ArgumentRequest, ArgumentSet


def arguments(request: ArgumentRequest) -> list[ArgumentSet]:
    call = request.recorded_call(request.function)
    if call is None:
        return []
    args = call.args
    if inspect.ismethod(request.function) and args:
        # A classmethod resolves to a bound method; the recorded call includes ``cls``.
        args = args[1:]
    return [ArgumentSet("import-call", args, call.kwargs)]
