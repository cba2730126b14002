"""Signatures recorded from the test suite by ``jaxlint record`` (``.jaxlint/signatures.json``)."""
from __future__ import annotations

import inspect
from typing import Any

from jaxlint import read_digests
from jaxlint.config import signatures
from jaxlint.scan import hints
from jaxlint.worker.argsources import ArgumentError, ArgumentRequest, ArgumentSet
from jaxlint.worker.argsources.hint import module_mesh, placer

# Path -> (its stamp, read_digests.settled_stamp; functions or the reason the file is unusable): a worker reads the
# file once, not once per target, and sees a re-recorded file.
_CACHE: dict[str, tuple[tuple[int, ...] | None, dict[str, Any] | str]] = {}


def arguments(request: ArgumentRequest) -> list[ArgumentSet]:
    path, root = request.settings.signatures, request.settings.root
    if not path or not root:
        return []
    functions = _load(path)
    target = request.target
    if isinstance(functions, str):
        request.notes.append(f"recorded signatures not used: {functions}")
        return []
    entry = functions.get(signatures.function_key(request.path, root, target.qualname))
    if entry is None:
        return []
    if entry["params"] != target.params:
        request.notes.append(
            f"recorded signature for {target.name}({', '.join(map(str, entry['params']))}) no longer "
            f"matches {target.name}({', '.join(target.params)}); re-run jaxlint record")
        return []
    found = []
    for recorded in entry["signatures"]:
        try:
            values = _values(recorded, target.params, request.module)
        except (hints.HintError, ArgumentError, ValueError, TypeError) as error:  # a hand-edited file, a mesh gone
            request.notes.append(f"recorded signature {recorded} of {target.name} is unusable ({error}); "
                                 "re-run jaxlint record")
            continue
        args, kwargs = _call(request.function, values)
        found.append(ArgumentSet("recorded", tuple(args), kwargs))
    if not found and entry.get("unrecordable"):
        request.notes.append(f"the tests call {target.name} but its arguments could not be recorded "
                             f"({entry['unrecordable']})")
    return found


def _load(path: str) -> dict[str, Any] | str:
    stamp = read_digests.settled_stamp(path)  # None: too recent for its times to tell an edit
    if stamp == (-1,):
        return {}
    cached = _CACHE.get(path)
    if cached is None or stamp is None or cached[0] != stamp:
        try:
            cached = (stamp, signatures.load(path))
        except signatures.SignaturesError as error:
            cached = (stamp, str(error))
        _CACHE[path] = cached
    return cached[1]


def _values(recorded: dict[str, str], params: list[str], module: Any) -> dict[str, Any]:
    """Parameter name -> abstract value. One hint for the whole signature: named dimensions
    (none today, but a hand-written entry may have them) are shared across arguments; an array
    recorded sharded (``f32[8@data]``) is placed over the module's mesh, as a hint's is."""
    unknown = [name for name in recorded if name not in params]
    if unknown:
        raise ValueError(f"{', '.join(unknown)} not a parameter")
    spec = hints.parse_hint(", ".join(f"{name}={text}" for name, text in recorded.items()))
    axes = hints.mesh_axes(spec)
    return hints.to_abstract(spec, placer(module_mesh(module, axes)) if axes else None)


def _call(function: Any, values: dict[str, Any]) -> tuple[list[Any], dict[str, Any]]:
    """Arguments as the tests passed them: positional ones positionally (static_argnums refer to
    positions; ``*args`` needs them), ``*args``/``**kwargs`` spread, keyword-only by name."""
    try:
        parameters = list(inspect.signature(function).parameters.values())
    except (TypeError, ValueError):  # no signature to be had: pass everything by name
        return [], dict(values)
    args: list[Any] = []
    kwargs: dict[str, Any] = {}
    positional = True  # until a positional parameter is left out (it was at its default)
    for parameter in parameters:
        kind = parameter.kind
        if parameter.name not in values:
            positional = positional and kind not in (parameter.POSITIONAL_ONLY, parameter.POSITIONAL_OR_KEYWORD)
            continue
        value = values[parameter.name]
        if kind is parameter.VAR_POSITIONAL:
            args.extend(value)
        elif kind is parameter.VAR_KEYWORD:
            kwargs.update(value)
        elif kind in (parameter.POSITIONAL_ONLY, parameter.POSITIONAL_OR_KEYWORD) and positional:
            args.append(value)
        else:
            kwargs[parameter.name] = value
    names = {p.name for p in parameters}
    kwargs.update({name: value for name, value in values.items() if name not in names})
    return args, kwargs
