"""A method's ``state`` made by its own class: a solver's ``update(params, state)`` (jaxopt),
``compute(state, vector, options)`` (lineax) or ``step(..., state, ...)`` takes the state its
class's ``init_state(...)`` or ``init(...)`` returns. Where the ladder cannot guess that state (an
annotation such as ``NamedTuple`` or ``tuple[AbstractLinearOperator, Static]``), the method is
traced with the built instance's own init called first, in the same trace, and its result
passed: ``state=LU.init(operator=MatrixLinearOperator(...), options=options)``. The init's
parameters that the method has too (by name, or its first for the method's first: jaxopt's
``init_params`` for ``params``) take the method's values; the others get the ladder's values
(field_roles.method_parameters), of the rung's rank. An init that needs what the ladder cannot
guess, or none at all, leaves the parameter to containers.py's guess from its uses.

An environment's ``step(state, action)`` takes the state its class's ``reset(rng)`` returns
(``reset_roles``): that state comes before the ladder's guess of an annotated ``state: State``,
whose fields of guessed shapes no simulation's code can take, where the class has a ``reset``
whose return annotation is the parameter's (either may be missing; not ``-> None``).
"""
from __future__ import annotations

import inspect
from typing import Any

from jaxlint.worker.argsources import containers
from jaxlint.worker.argsources.field_roles import method_parameters, role_value
from jaxlint.worker.argsources.inferred import Uninferable
from jaxlint.worker.init_states import MadeState

MADE = "made by init"  # a role: (MADE, class name, init's name, shared {init's: method's}, own roles)
_INITS = ("init_state", "init")
_RESETS = ("reset",)
_RANKED = ("array", "pytree", "int-array")


def is_made(role: Any) -> bool:
    return isinstance(role, tuple) and len(role) == 5 and role[0] == MADE


class Maker:
    """containers.Reader's ``role`` for a method's parameters, with a ``state`` its class's init
    makes first; those of ``made`` (made_params.py's: ``params`` its ``initialize`` makes) so."""

    def __init__(self, owner: type, callee: Any, reader: containers.Reader, made: dict[str, tuple]) -> None:
        self.owner, self.callee, self.reader, self.made = owner, callee, reader, made

    def role(self, name: str, annotation: Any, why: Exception) -> Any:
        if name in self.made:
            return self.made[name]
        if name == "state" or name.endswith("_state"):
            found = state_role(self.owner, self.callee, name)
            if found is not None:
                return found
        return self.reader.role(name, annotation, why)


def reset_roles(owner: type, callee: Any) -> dict[str, tuple]:
    """The roles of ``callee``'s ``state`` parameters (by name, as ``Maker``'s) that ``owner``'s
    ``reset`` makes: none where it has no reset, its return annotation is not the parameter's, or
    the ladder cannot guess the reset's own parameters."""
    try:
        params = list(inspect.signature(callee).parameters.values())[1:]
    except (TypeError, ValueError):
        return {}
    found = {}
    for param in params:
        if (param.name == "state" or param.name.endswith("_state")) and _required(param):
            role = state_role(owner, callee, param.name, _RESETS)
            if role is not None and _returns(owner, role[2], param):
                found[param.name] = role
    return found


def _returns(owner: type, init_name: str, param: inspect.Parameter) -> bool:
    """Whether ``owner``'s ``init_name`` may return what ``param`` takes: their annotations are one,
    or either is missing (compared as written: a string annotation with a string)."""
    init = inspect.getattr_static(owner, init_name, None)
    returned = inspect.signature(init).return_annotation
    if returned is None or returned == "None":
        return False  # a reset of the object itself (flax's metrics), which returns no state
    return returned is inspect.Signature.empty or param.annotation is param.empty or returned == param.annotation


def state_role(owner: type, callee: Any, name: str, inits: tuple[str, ...] = _INITS) -> tuple | None:
    """The role of ``callee``'s parameter ``name`` made by ``owner``'s init (the first of
    ``inits`` it has); None where it has no init, or the ladder cannot guess one of its own
    parameters."""
    try:
        method = inspect.signature(callee)
    except (TypeError, ValueError):
        return None
    taken = [p.name for p in list(method.parameters.values())[1:] if p.name != name and _required(p)]
    for init_name in inits:
        init = inspect.getattr_static(owner, init_name, None)
        if not inspect.isfunction(init) or init is getattr(callee, "__func__", callee):
            continue
        try:
            needed = [p.name for p in list(inspect.signature(init).parameters.values())[1:] if _required(p)]
        except (TypeError, ValueError):
            continue
        shared = {p: p for p in needed if p in taken}
        if needed and needed[0] not in shared and taken and taken[0] not in shared.values() \
                and needed[0].endswith(taken[0]):
            shared[needed[0]] = taken[0]  # init_state(init_params) for update(params, state)
        try:
            own = {p: role for p, role in method_parameters(init, reader=_Shared(shared)).items() if p not in shared}
        except Uninferable:
            continue  # init_state's parameters cannot be guessed: init's may
        return (MADE, owner.__name__, init_name, shared, own)
    return None


class _Shared:
    """The reader of an init's parameters: one the method passes needs no guess."""

    def __init__(self, shared: dict[str, str]) -> None:
        self.shared = shared

    def role(self, name: str, annotation: Any, why: Exception) -> Any:
        if name in self.shared:
            return ("static", None)  # left out: the method's value is passed
        raise why


def _required(param: inspect.Parameter) -> bool:
    return param.kind not in (param.VAR_POSITIONAL, param.VAR_KEYWORD) and param.default is param.empty


def value(role: tuple, n: Any, rank: int) -> MadeState:
    """The state ``role`` stands for: its own arguments of rank ``rank``, made in the trace."""
    _, owner, init, shared, own = role
    shapes = {name: (n,) * rank if r in _RANKED or containers.ranked(r) else () for name, r in own.items()}
    return MadeState(owner, init, shared, {name: role_value(r, shapes[name], n, rank) for name, r in own.items()})
