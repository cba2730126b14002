"""A ``# jaxlint: args x=f32[n], k=3`` comment on the line above the function (or ``--args``).

A method's ``self`` cannot be written in a hint: it is the instance the module's own import-time
call used, else one an examples file registered (a bound method or a module instance)."""
from __future__ import annotations

import inspect
import math
from typing import Any

from jaxlint.jaxapi import shardings
from jaxlint.scan import hints
from jaxlint.worker.argsources import ArgumentError, ArgumentRequest, ArgumentSet
from jaxlint.worker.argsources.examples import registered_instance


def arguments(request: ArgumentRequest) -> list[ArgumentSet]:
    target = request.target
    if target.hint is None:
        return []
    try:
        spec = hints.parse_hint(target.hint)
    except hints.HintError as error:
        raise ArgumentError(f"malformed hint: {error}") from None
    if target.params:
        unknown = [name for name in spec if name not in target.params]
        if unknown:
            raise ArgumentError(f"hint names {', '.join(map(repr, unknown))}, not parameters of "
                                f"{target.name}({', '.join(target.params)})")
    axes = hints.mesh_axes(spec)
    place = placer(module_mesh(request.module, axes)) if axes else None
    try:
        values = hints.to_abstract(spec, place)
    except ArgumentError:
        raise
    except Exception as error:  # e.g. a dimension name JAX rejects
        raise ArgumentError(f"hint cannot be turned into abstract values: {error}") from None
    method = "." in target.qualname and target.params[:1] == ["self"]
    missing = _required(request.function, skip_first=method and "self" not in values) - set(values)
    if missing:  # else the trace fails on a missing argument: the hint's mistake, not the code's
        names = sorted(missing, key=lambda name: target.params.index(name) if name in target.params else 0)
        raise ArgumentError(f"hint gives no value for {', '.join(map(repr, names))}, "
                            f"{'a parameter' if len(names) == 1 else 'parameters'} without a default")
    if method and "self" not in values:
        instance = _instance(request)
        if instance is None:
            owner = target.qualname.rpartition(".")[0]
            raise ArgumentError(f"a hint cannot give `self`: call {owner}(...).{target.name}(...) once while the "
                                "module is imported, or register an instance in an examples file")
        return [ArgumentSet("hint", (instance,), values)]
    return [ArgumentSet("hint", (), values)]


def module_mesh(module: Any, axes: list[str]) -> Any:
    """The module-level mesh whose axis names include all of ``axes`` (a sharded hint's); an
    ArgumentError when the module has none or several."""
    meshes = module_meshes(vars(module))
    fitting = [(name, mesh) for name, mesh in meshes if set(axes) <= set(mesh.axis_names)]
    if len(fitting) == 1:
        return fitting[0][1]
    wanted = f"mesh ax{'is' if len(axes) == 1 else 'es'} {', '.join(map(repr, axes))}"
    if not fitting:
        have = "; ".join(f"{name} has {', '.join(map(repr, mesh.axis_names))}" for name, mesh in meshes)
        raise ArgumentError(f"hint splits dimensions over {wanted}, but no module-level mesh has "
                            f"{'it' if len(axes) == 1 else 'them all'} ({have or 'the module defines no mesh'})")
    names = ", ".join(name for name, _ in fitting)
    raise ArgumentError(f"hint splits dimensions over {wanted}, which several module-level meshes have ({names}): "
                        "register the arguments with their shardings in an examples file instead (docs/arguments.md)")


def module_meshes(namespace: dict[str, Any]) -> list[tuple[str, Any]]:
    """(name, mesh) of each mesh a module's namespace holds (a mesh bound to two names is one)."""
    meshes: dict[int, tuple[str, Any]] = {}
    for name, value in namespace.items():
        if shardings.is_mesh(value):
            meshes.setdefault(id(value), (name, value))
    return list(meshes.values())


def placer(mesh: Any) -> hints.Place:
    """What gives a sharded hint's array its sharding over ``mesh``; a size the axes do not divide
    is an ArgumentError (JAX would refuse the argument)."""
    sizes = dict(mesh.shape)

    def place(struct: Any, shards: tuple[tuple[str, ...], ...]) -> Any:
        for dim, (size, axes) in enumerate(zip(struct.shape, shards)):
            pieces = math.prod(sizes[axis] for axis in axes)
            if isinstance(size, int) and size % pieces:
                raise ArgumentError(f"{hints.format_abstract(struct)}: dimension {dim} (size {size}) cannot be split "
                                    f"over mesh ax{'is' if len(axes) == 1 else 'es'} {', '.join(map(repr, axes))} "
                                    f"({pieces} pieces): the size must be a multiple of {pieces}")
        return shardings.sharded_struct(struct, mesh, shards)

    return place


def _required(function: Any, skip_first: bool) -> set[str]:
    """Parameters of ``function`` a call must give (no default, not ``*args``/``**kwargs``)."""
    try:
        parameters = list(inspect.signature(function).parameters.values())
    except (TypeError, ValueError):  # no signature to read: the trace will say
        return set()
    if skip_first:
        parameters = parameters[1:]
    return {p.name for p in parameters if p.default is inspect.Parameter.empty
            and p.kind not in (inspect.Parameter.VAR_POSITIONAL, inspect.Parameter.VAR_KEYWORD)}


def _instance(request: ArgumentRequest) -> Any:
    """The ``self`` of the module's first import-time call of the method, else of a registration."""
    call = request.recorded_call(request.function)
    if call is not None and call.args:
        return call.args[0]
    return registered_instance(request)
