"""A method's parameter annotated with an abstract base (gpjax's ``gram(self, kernel: K, x)``, ``K``
bound to ``AbstractKernel``) gets an instance of the base's first concrete subclass the builder
builds (field_roles.instance_role). That one may refuse what the method asks of it (gpjax's first,
``RFF``, raises "RFFs do not have a kernel function" when called), so the rungs of the next
subclasses follow, tried only when none of the first's traces, as a method's own ``self`` of an
abstract class is (instances._subclass_signatures)."""
from __future__ import annotations

import inspect
import typing
from typing import Any

from jaxlint.worker.argsources import not_implemented, subclasses
from jaxlint.worker.argsources.annotations import evaluated_annotations
from jaxlint.worker.argsources.class_kinds import class_kind, is_abstract
from jaxlint.worker.argsources.field_roles import class_fields, is_union
from jaxlint.worker.argsources.inferred import Uninferable

MORE_SUBCLASSES = 2  # the subclasses tried after the first: each adds the rungs of one more instance


def alternatives(callee: Any, roles: dict[str, Any]) -> list[tuple[str, tuple]]:
    """(parameter, its role) for each next concrete subclass of the abstract base of the first of
    the method's parameters in ``roles`` given an instance of a subclass chosen for that base; an
    empty list where none is."""
    try:
        hints = evaluated_annotations(inspect.unwrap(callee), inspect.signature(callee))
    except (TypeError, ValueError):
        return []
    for name, role in roles.items():
        if "." in name or not (isinstance(role, tuple) and role[0] == "instance"):
            continue
        base = _abstract_base(hints.get(name), role[1])
        if base is not None:
            return [(name, other) for other in _other_roles(base, role[1])]
    return []


def _abstract_base(annotation: Any, chosen: type) -> type | None:
    """The abstract class of ``annotation`` (a union's member, a type variable's bound) that
    ``chosen`` was picked for; None where ``chosen`` is the annotation's own class."""
    if isinstance(annotation, typing.TypeVar):
        annotation = annotation.__bound__
    for member in typing.get_args(annotation) if is_union(annotation) else (annotation,):
        if isinstance(member, type) and member is not chosen and issubclass(chosen, member) \
                and (is_abstract(member) or not_implemented.abstract_in_fact(member)):
            return member
    return None


def _other_roles(base: type, chosen: type) -> list[tuple]:
    found = []
    for candidate in subclasses.concrete_subclasses(base):
        if candidate is chosen:
            continue
        try:
            kind = class_kind(candidate)
            found.append(("instance", candidate, kind, class_fields(candidate, kind, 1)))
        except Uninferable:
            continue
        if len(found) == MORE_SUBCLASSES:
            break
    return found
