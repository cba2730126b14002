"""A class's constructor traced as it runs: ``__init__`` (and a dataclass's ``__post_init__``,
an equinox module's ``__check_init__``) is traced by making an instance inside the trace,
``Normal(loc=f32[], scale=f32[])``, from the values the instance builder gives its fields
(instances.py's rules; a pytree class's and a plain class's fields are its ``__init__``
parameters), so that the constructor's own operations run on tracers and the rules read them.
What the trace returns is the instance's arrays.

The class must be one the builder builds (a dataclass, NamedTuple, pytree or plain class; an
abstract class's ``__init__`` through its first concrete subclass that inherits it unchanged);
a linen module's constructor is flax's, not the user's. The fields whose default is None are
given arrays on the first rungs, then the choices optional_fields.py tries for a method's
``self`` (all None, then all but one in turn: a class that takes one of ``logits`` and ``probs``);
the first rung that traces is kept, as for every inferred signature.
"""
from __future__ import annotations

import dataclasses
import inspect
from typing import Any, Callable

from jaxlint.worker import built_instances, plain_classes
from jaxlint.worker.argsources import (
    ArgumentRequest,
    ArgumentSet,
    inferred,
    linen_instances,
    nnx_instances,
    optional_fields,
    subclasses,
)
from jaxlint.worker.argsources.class_kinds import buildable_kind, is_abstract
from jaxlint.worker.argsources.field_roles import INTEGERS, class_fields, has_abstract, method_parameters, role_value
from jaxlint.worker.argsources.inferred import MAX_BODY_RANK, MAX_RANK, SOURCE, Uninferable
from jaxlint.worker.built_instances import InstanceFields, StaticValue

CONSTRUCTORS = frozenset({"__init__", "__post_init__", "__check_init__"})
_RANKED = ("array", "pytree", INTEGERS)


def is_constructor(request: ArgumentRequest) -> bool:
    return request.target.qualname.rpartition(".")[2] in CONSTRUCTORS


def signatures(request: ArgumentRequest, owner: type) -> list[ArgumentSet]:
    """The constructor's rungs: the class's field values, made into an instance in the trace."""
    if linen_instances.is_linen(owner):
        raise Uninferable("a linen module's constructor is flax's")
    if request.target.qualname.endswith(".__post_init__") and not dataclasses.is_dataclass(owner):
        raise Uninferable("not a dataclass: making an instance does not run its __post_init__")
    if nnx_instances.is_nnx(owner):
        return nnx_instances.constructor_signatures(request, owner)
    if is_abstract(owner):
        owner = _concrete(request, owner)
    kind = buildable_kind(owner)
    roles = _roles(request, owner, kind)
    found = _rungs(request, roles, frozenset())
    if not found:
        raise Uninferable("its fields take no array")
    optional = [name for name in optional_fields.optional(owner, kind, roles) if name in roles]
    for absent in optional_fields.choices(optional):  # as for a method's self: the first rung that traces is kept
        found += _rungs(request, roles, absent)
    make = _maker(owner)
    return [ArgumentSet(SOURCE, (), values, call=make) for values in found]


def _roles(request: ArgumentRequest, owner: type, kind: str) -> dict[str, Any]:
    """By the fields where the constructor is called with them (a generated ``__init__``, a pytree
    class's), else by the user's ``__init__`` parameters (an equinox module's own ``__init__``)."""
    if "__init__" in vars(owner) and kind in ("dataclass", "namedtuple"):
        return method_parameters(owner.__init__)
    return class_fields(owner, kind, 0)


def _rungs(request: ArgumentRequest, roles: dict[str, Any], absent: frozenset[str]) -> list[dict[str, Any]]:
    ranks, n = inferred.ranks_used(request), inferred.symbolic_size()
    found, seen = [], set()
    for rank in range(MAX_RANK + 1):
        shapes = {name: (n,) * max(rank, ranks.get(name, 0)) for name, role in roles.items() if role in _RANKED}
        past = [name for name, shape in shapes.items() if len(shape) > MAX_BODY_RANK]
        if past:
            raise Uninferable(f"parameter {past[0]}: its body reads it at rank {len(shapes[past[0]])}, past the "
                              f"{MAX_BODY_RANK} jaxlint guesses")
        key = (rank, tuple(sorted(shapes.items(), key=lambda item: item[0])))
        if key in seen:
            continue
        seen.add(key)
        values = {name: None if name in absent else role_value(role, shapes.get(name, ()), n, rank)
                  for name, role in roles.items()}
        if has_abstract(values):
            found.append(values)
    return found


def _concrete(request: ArgumentRequest, owner: type) -> type:
    raw = inspect.getattr_static(owner, request.target.qualname.rpartition(".")[2])
    for sub in subclasses.concrete_subclasses(owner, lambda sub: subclasses.inherits(sub, "__init__", raw)):
        return sub
    raise Uninferable("an abstract class, and no concrete subclass in its package inherits its constructor")


def _maker(owner: type) -> Callable[..., Any]:
    """The traced call: the instance made from the traced values, its arrays returned."""
    def make(**values: Any) -> list[Any]:
        import jax

        made = {name: built_instances.made(value) if isinstance(value, (InstanceFields, StaticValue)) else value
                for name, value in values.items()}
        instance = plain_classes.guarded_init(owner, made)  # its side effects put back
        held = vars(instance) if hasattr(instance, "__dict__") else instance
        return [leaf for leaf in jax.tree_util.tree_leaves(held) if isinstance(leaf, jax.Array)]

    make.__name__ = make.__qualname__ = owner.__name__  # JAX's messages name the class
    return make
