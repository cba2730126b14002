"""The values of the builder's static fields (instances.py): part of a class's structure, not an
input, so a value is needed: an ``int``, ``bool`` or ``float`` annotation's (a union's first such
member's), a tuple, list or ``Sequence`` of those (two items), a ``jax.ShapeDtypeStruct`` (an f32
scalar's), an empty ``frozenset``, an enum's first member, a
``Literal``'s first value, a stand-in for a function, an optax transformation or a dtype; and a
default kept as it is (an array default abstract), the class's ``__init__``'s included
(init_defaults.py)."""
from __future__ import annotations

import collections.abc
import enum
import inspect
import types
import typing
from typing import Any

from jaxlint.worker import standins
from jaxlint.worker.argsources import inferred
from jaxlint.worker.argsources.class_kinds import EMPTY, field_defaults
from jaxlint.worker.argsources.descriptions import description, is_set
from jaxlint.worker.argsources.inferred import Uninferable
from jaxlint.worker.built_instances import StaticValue

INT_VALUE = 2  # a static int's value: a built instance's sizes (made_params.py sizes the method's arrays alike)
_STATIC_VALUES = {int: INT_VALUE, bool: False, float: 0.1}  # a static number's value (a union's member's too)
_SEQUENCE_LENGTH = 2  # the items of a static ``tuple[int, ...]``: equinox's kernel_size matches num_spatial_dims (2)
_SEQUENCES = {tuple: tuple, list: list, collections.abc.Sequence: tuple}  # the value's container, by annotation
_NONE = object()  # no static value for an annotation


def is_static(role: Any) -> bool:
    return role is None or (isinstance(role, tuple) and role[0] == "static")


def static_role(param: inspect.Parameter) -> Any:
    """A static field's value without a default: the ladder's for its annotation where it is a
    static value, else ``number_value``'s (equinox's ``in_features: int | Literal["scalar"]``: 2),
    else a choice's or a stand-in's."""
    try:
        found = inferred.role(param, "self.", by_members=True)
        if isinstance(found, tuple):
            return found
    except Uninferable:
        pass
    value = number_value(param.annotation)
    if value is not _NONE:
        return ("static", value)
    described = description(param.annotation)
    if described is not None:
        return ("static", StaticValue(described))
    if is_set(param.annotation):
        return ("static", frozenset())
    return choice_role(param) or stand_in_role(param, Uninferable(f"self.{param.name}: a static field with no default"))


def number_value(annotation: Any) -> Any:
    """The static value of an ``int``, ``bool`` or ``float`` annotation (2, False, 0.1: a float
    field is flax's ``Dropout.rate``, equinox's ``LayerNorm.eps``), a union's first such member,
    or a tuple, list or ``Sequence`` of them (``tuple[int, ...]``: two items; ``tuple[int, int]``
    its own; nested: ``tuple[tuple[int, int], ...]``); ``_NONE`` for any other annotation."""
    for member in typing.get_args(annotation) if is_union(annotation) else (annotation,):
        if member in _STATIC_VALUES:
            return _STATIC_VALUES[member]
        container, items = _SEQUENCES.get(typing.get_origin(member)), typing.get_args(member)
        if container is None or not items:
            continue
        if typing.get_origin(member) is not tuple or items[-1] is Ellipsis:
            items = (items[0],) * _SEQUENCE_LENGTH
        values = [number_value(item) for item in items]
        if all(value is not _NONE for value in values):
            return container(values)
    return _NONE


def choice_role(param: inspect.Parameter) -> tuple | None:
    """("static", a value) for a field without a default annotated with an enum (its first member:
    mujoco's ``jacobian: JacobianType``, jax_md's ``format: NeighborListFormat``) or a ``Literal``
    (its first value); a union, its first such member; None else. The value is one the class can
    hold, as the library's own default would be, and the signature shows it."""
    annotation = param.annotation
    for member in typing.get_args(annotation) if is_union(annotation) else (annotation,):
        if typing.get_origin(member) is typing.Literal and typing.get_args(member):
            return ("static", typing.get_args(member)[0])
        if isinstance(member, type) and issubclass(member, enum.Enum):
            first = next(iter(member), None)
            if first is not None:
                return ("static", first)
    return None


def stand_in_role(param: inspect.Parameter, why: Uninferable) -> tuple:
    """("static", a stand-in) for a field or parameter that holds a function (``fn: Callable``, or
    by its name without an annotation), an optax transformation or a dtype, as a factory's
    parameter gets one (worker/standins.py); ``why`` raised for any other."""
    stand_in = standins.for_parameter(param)
    if stand_in is None:
        raise why
    return ("static", stand_in)


def abstract_default(value: Any) -> Any:
    """An array default as an abstract array of its shape and dtype; any other as it is."""
    import jax

    if hasattr(value, "shape") and hasattr(value, "dtype") and not isinstance(value, type):
        return jax.ShapeDtypeStruct(value.shape, value.dtype)
    return value


def is_union(annotation: Any) -> bool:
    return typing.get_origin(annotation) in (typing.Union, types.UnionType)


def with_defaults_static(owner: type, kind: str, roles: dict[str, Any]) -> dict[str, Any]:
    """``roles`` with each field that has a default (an array default kept concrete) static at it:
    an instance held in a static field is part of the structure, its defaults included (jax_md's
    ``UMAConfig.cutoff: float = 5.0``, a configuration, not an input)."""
    try:
        defaults = field_defaults(owner, kind)
    except Uninferable:
        return roles
    return {name: ("static", defaults[name]) if not _is_static_value(role) and defaults.get(name, EMPTY) is not EMPTY
            else role for name, role in roles.items()}


def _is_static_value(role: Any) -> bool:
    return isinstance(role, tuple) and role[0] == "static"
