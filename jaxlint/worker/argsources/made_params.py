"""A method's parameter its own class makes: dynamax's ``SSM.log_prob(self, params: ParameterSet,
...)`` takes the parameters ``params, props = model.initialize(key)`` returns, whose sizes are the
model's (a ``ParamsLGSSM`` the builder guesses has arrays of the symbolic size, which the built
model's ``state_dim=2`` disagrees with). A method of the class named ``init``, ``initialize``,
``init_*`` or ``initialize_*`` whose return annotation is the parameter's class, or a tuple
holding it (``-> Tuple[ParamsLGSSM, ParamsLGSSM]``), makes it: the trace calls that maker first on
the built instance and passes its result, or the tuple's item (worker/init_states.py, as
made_state.py's states; the role is made_state's, with the item). Parameters annotated alike
take the tuple's items in turn (``fit_em(params: ParameterSet, props: PropertySet)`` from
``-> Tuple[ParamsLGSSM, ParamsLGSSM]``: items 0 and 1). An item of the parameter's class, of a
subclass of it, or of any class where the annotation is a ``Protocol`` the class has every member
of (an empty one: any class) makes it. The maker's own required parameters get the ladder's
values, and a key parameter whose default is None a key (``initialize(key=None)`` raises without
one); a maker whose own parameters the ladder cannot guess is not used.
"""
from __future__ import annotations

import inspect
import typing
from typing import Any

from jaxlint.worker.argsources.annotations import evaluated_annotations
from jaxlint.worker.argsources.field_roles import method_parameters
from jaxlint.scan.functions import KEY_PARAMETER
from jaxlint.worker.argsources.inferred import Uninferable
from jaxlint.worker.argsources.made_state import MADE

_NAMES = ("init", "initialize")
_PREFIXES = ("init_", "initialize_")
_NOTHING = (typing.Any, type(None), object)  # annotations that name no class (``Any`` is a class on 3.11)


def made_roles(owner: type, callee: Any) -> dict[str, tuple]:
    """The roles (made_state's) of ``callee``'s parameters a maker of ``owner`` makes, by name."""
    try:
        signature = inspect.signature(callee)
    except (TypeError, ValueError):
        return {}
    hints = evaluated_annotations(inspect.unwrap(callee), signature)
    makers = _makers(owner, callee)
    taken: set[tuple[str, int | None]] = set()
    found = {}
    for param in list(signature.parameters.values())[1:]:
        annotation = hints.get(param.name)
        if param.default is not param.empty or not isinstance(annotation, type) or annotation in _NOTHING:
            continue
        for name, items, is_tuple, own in makers:
            index = next((i for i, item in enumerate(items) if (name, i) not in taken and _makes(item, annotation)),
                         None)
            if index is None:
                continue
            taken.add((name, index))
            found[param.name] = (MADE, owner.__name__, name, {}, own, index if is_tuple else None)
            break
    return found


def _makers(owner: type, callee: Any) -> list[tuple[str, list[Any], bool, dict[str, Any]]]:
    """(name, the classes it returns, whether in a tuple, its own parameters' roles) of each maker
    of ``owner`` whose own parameters the ladder guesses."""
    found = []
    for name in dir(owner):
        if not (name in _NAMES or name.startswith(_PREFIXES)):
            continue
        function = inspect.getattr_static(owner, name, None)
        if not inspect.isfunction(function) or function is getattr(callee, "__func__", callee):
            continue
        returned = _returned(function)
        is_tuple = typing.get_origin(returned) is tuple
        items = [item if isinstance(item, type) and item not in _NOTHING else None
                 for item in (typing.get_args(returned) if is_tuple else [returned])]
        if not any(items) or Ellipsis in typing.get_args(returned):
            continue
        try:
            own = {**method_parameters(function), **_keys(function)}
        except Uninferable:
            continue
        found.append((name, items, is_tuple, own))
    return found


def _returned(function: Any) -> Any:
    try:
        return typing.get_type_hints(function).get("return")
    except Exception:  # a name imported under TYPE_CHECKING: no annotation to go by
        return None


def _keys(function: Any) -> dict[str, str]:
    """A key's role for each parameter named like a key whose default is None."""
    params = list(inspect.signature(function).parameters.values())[1:]
    return {p.name: "key" for p in params if p.default is None and KEY_PARAMETER.fullmatch(p.name.lower())}


def _makes(item: type, annotation: type) -> bool:
    """A value of class ``item`` passes for ``annotation``."""
    if item is None:
        return False
    if item is annotation:
        return True
    if getattr(annotation, "_is_protocol", False):
        members = {name for name in vars(annotation) if not name.startswith("_")} | \
            set(getattr(annotation, "__annotations__", {}))
        return all(hasattr(item, member) or member in getattr(item, "__annotations__", {}) for member in members)
    try:
        return issubclass(item, annotation)
    except TypeError:
        return False
