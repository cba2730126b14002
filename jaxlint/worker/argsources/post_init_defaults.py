"""A dataclass whose ``__post_init__`` needs a concrete number (jaxopt's ``BFGS`` hands its
``max_stepsize: float = 1.0`` to a line search whose own ``__post_init__`` tests ``if not
self.max_stepsize``): the builder gives a float field an abstract value (instances.py), which such
a check refuses, and the instance is then left without what ``__post_init__`` sets (``_value_and_
grad_with_aux``). Where it refused, the float fields that have a Python float default take that
default, static, as the class's own ``__init__`` would give them, and the instance is made again."""
from __future__ import annotations

from typing import Any

from jaxlint.worker.argsources.class_kinds import field_defaults
from jaxlint.worker.argsources.inferred import Uninferable


def with_float_defaults(owner: type, kind: str, roles: dict[str, Any]) -> dict[str, Any] | None:
    """``roles`` (``self.<field>`` and the method's parameters) with each field of role "float"
    whose default is a Python float static at it; None where no field changes."""
    try:
        defaults = field_defaults(owner, kind)
    except Uninferable:
        return None
    changed = {name: ("static", defaults[name[5:]]) for name, role in roles.items()
               if name.startswith("self.") and role == "float" and type(defaults.get(name[5:])) is float}
    return {**roles, **changed} if changed else None
