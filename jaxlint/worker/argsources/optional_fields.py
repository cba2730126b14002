"""The fields whose default is None that an instance jaxlint builds leaves None (instances.py for a
method's ``self``, field_roles.py for an instance in a field or a parameter): none when the instance
can be made with every field an array on some rung, else all of them, else all but one in turn (the
first ``MAX_ONE_OF``), the first choice that makes one kept (a class that takes exactly one of
``logits`` and ``probs``: distrax's ``Categorical``). Made: its ``__init__`` traced alone, with the
rung's symbolic sizes, else with concrete ones (``shape[-1] < 2`` cannot compare a symbol). Decided
once per class: its methods, and the instances of it in other classes' fields, share the answer."""
from __future__ import annotations

import weakref
from typing import Any, Callable

from jaxlint.worker import built_instances
from jaxlint.worker.argsources import ArgumentSet
from jaxlint.worker.argsources.class_kinds import field_defaults
from jaxlint.worker.argsources.static_fields import is_static
from jaxlint.worker.trace import concrete_arguments

MAX_ONE_OF = 3  # the None-default fields tried one at a time (each choice is three traces of __init__ at most)

# Per class, the None-default fields its instances leave None.
_ABSENT: weakref.WeakKeyDictionary[type, frozenset[str]] = weakref.WeakKeyDictionary()


def optional(owner: type, kind: str, roles: dict[str, Any]) -> list[str]:
    """The fields of ``owner`` whose default is None and that are not static (``roles``: by name)."""
    return [name for name, default in field_defaults(owner, kind).items()
            if default is None and not is_static(roles.get(name))]


def absent(owner: type, names: list[str], instances: Callable[[frozenset[str]], list[Any]]) -> frozenset[str]:
    """The fields of ``names`` that instances of ``owner`` leave None; ``instances(absent)``: the
    instances (one per rung) with the fields in ``absent`` None."""
    if not names:
        return frozenset()
    if owner not in _ABSENT:
        _ABSENT[owner] = _chosen(names, instances)
    return _ABSENT[owner]


def choices(names: list[str]) -> list[frozenset[str]]:
    """The fields left None, in the order tried after none: all of them, then all but one in turn
    (the first ``MAX_ONE_OF``)."""
    everyone = frozenset(names)
    one_of = [everyone - {name} for name in names[:MAX_ONE_OF]] if len(names) > 1 else []
    return [everyone, *one_of] if names else []


def _chosen(names: list[str], instances: Callable[[frozenset[str]], list[Any]]) -> frozenset[str]:
    if any(map(constructs, instances(frozenset()))):
        return frozenset()
    for choice in choices(names):
        if any(map(constructs, instances(choice))):
            return choice
    return frozenset()  # no choice makes one: the errors of every field given are reported


def constructs(instance: Any) -> bool:
    """The instance ``instance`` stands for can be made, with its symbolic sizes or concrete ones."""
    if built_instances.constructs(instance):
        return True
    concrete = concrete_arguments(ArgumentSet("instances", (), {"self": instance}))
    return concrete is not None and built_instances.constructs(concrete.kwargs["self"])
