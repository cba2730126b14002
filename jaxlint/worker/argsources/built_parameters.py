"""The inferred source of functions and of the closures a factory returns (``infer-arguments``, the
last source): inferred.py's ladder, with an instance jaxlint builds for each parameter annotated
with a class the builder builds (instances.py's rules: a dataclass, NamedTuple, ``flax.struct``
dataclass, equinox module or pytree class; an ``Optional``/union: its first such member), its
array fields of the rung's rank, shown in the signature (``state=IntegratorState(position=f32[n],
...)``). A string annotation (``from __future__ import annotations``) is resolved in the
function's module. A finding at a bad point among such an instance's fields alone is left out
(analysis/instance_points.py), as for a method's ``self``. A parameter whose class cannot be built
is guessed as before, and then nothing is inferred: the reason names it.
"""
from __future__ import annotations

import dataclasses
import functools
import inspect
from typing import Any, Callable

from jaxlint.worker import standins
from jaxlint.worker.argsources import (
    ArgumentRequest,
    ArgumentSet,
    field_roles,
    inferred,
    parameter_subclasses,
    passed_on,
)
from jaxlint.worker.argsources.annotations import array_spec, evaluated_annotations
from jaxlint.worker.argsources.inferred import Uninferable
from jaxlint.worker.built_instances import InstanceFields
from jaxlint.worker.instrument import unrecorded


def arguments(request: ArgumentRequest) -> list[ArgumentSet]:
    if not request.settings.infer_arguments or inferred.needs_instance(request):
        return []  # a method's self: the instances source builds one, or says why it cannot
    try:
        return signatures(request, standins.for_parameters(request.function))
    except Uninferable as why:
        request.notes.append(f"arguments not inferred: {why}")
        return []
    except Exception as error:  # a user's object of a shape not foreseen: counted with why, the job goes on
        request.notes.append(f"arguments not inferred: {type(error).__name__}: {error}")
        return []


def signatures(request: ArgumentRequest, given: dict[str, Any]) -> list[ArgumentSet]:
    """The ladder's signatures, with ``given`` and a built instance for each parameter annotated
    with a class jaxlint builds; raises Uninferable as the ladder does."""
    given = {**given, **passed_on.stand_ins(inferred.definition(request), request.function, given)}
    with unrecorded():  # the classes' flatten may run: jaxlint's doing, not the module's
        roles, unbuilt = instance_roles(request.function, given)
    try:
        found = inferred.ladder(request, {**given, **_per_rank(roles)})
    except Uninferable as why:
        name = str(why).removeprefix("parameter ").partition(":")[0]
        raise Uninferable(f"{why} (no instance: {unbuilt[name]})" if name in unbuilt else str(why)) from None
    for name, role in parameter_subclasses.alternatives(request.function, roles):  # tried when the first's all fail
        try:
            found += inferred.ladder(request, {**given, **_per_rank({**roles, name: role})})
        except Uninferable:
            continue
    return [with_instances(request.function, arguments, tuple(roles)) for arguments in found] if roles else found


def _per_rank(roles: dict[str, tuple]) -> dict[str, inferred.PerRank]:
    return {name: inferred.PerRank(functools.partial(field_roles.instance_of_rank, role)) for name, role in roles.items()}


def instance_roles(function: Any, given: dict[str, Any]) -> tuple[dict[str, tuple], dict[str, str]]:
    """The builder's role for each parameter (no default, not given) annotated with a class it
    builds: a class by itself says more than the parameter's name (``key: Linear`` is no PRNG key);
    a union only where the ladder cannot guess the parameter (``Optional[Array]`` is an array).
    Then, for a parameter annotated with a class it cannot build, why."""
    try:
        signature = inspect.signature(function)
    except (TypeError, ValueError):
        return {}, {}
    hints = evaluated_annotations(inspect.unwrap(function), signature)
    roles, unbuilt = {}, {}
    for param in signature.parameters.values():
        annotation = hints.get(param.name, param.empty)
        if param.name in given or param.kind in (param.VAR_POSITIONAL, param.VAR_KEYWORD) \
                or param.default is not param.empty or annotation is param.empty \
                or array_spec(annotation, param.name) is not None:
            continue
        if not isinstance(annotation, type) and _guessed(param):
            continue
        role = field_roles.parameter_role(annotation)
        if role is not None:
            roles[param.name] = role
        elif field_roles.why_not_built(annotation):
            unbuilt[param.name] = field_roles.why_not_built(annotation)
    return roles, unbuilt


def _guessed(param: inspect.Parameter) -> bool:
    try:
        inferred.role(param, by_members=True)
    except Uninferable:
        return False
    return True


def with_instances(function: Any, arguments: ArgumentSet, names: tuple[str, ...]) -> ArgumentSet:
    """``arguments`` with the built instances named (shown, their fields' points left out), and
    the instances made in the trace first where they travel as their fields (``InstanceFields``)."""
    values = [*arguments.args, *arguments.kwargs.values()]
    call = arguments.call
    if any(isinstance(value, InstanceFields) for value in values):
        call = made_then_called(call or function)
    return dataclasses.replace(arguments, call=call, built=(*arguments.built, *names))


def made_then_called(callee: Any) -> Callable[..., Any]:
    """``callee`` called with every ``InstanceFields`` argument made first."""
    def call(*args: Any, **kwargs: Any) -> Any:
        return callee(*map(_made, args), **{name: _made(value) for name, value in kwargs.items()})

    try:
        functools.update_wrapper(call, callee)  # JAX's messages name the user's function
    except (AttributeError, TypeError):
        pass
    return call


def _made(value: Any) -> Any:
    return value.build() if isinstance(value, InstanceFields) else value
