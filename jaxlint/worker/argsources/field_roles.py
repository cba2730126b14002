"""The role of each field of a class the builder builds (instances.py), and of each parameter of a
method or function: an array (of the ladder's rank, or a jaxtyping annotation's), a static value,
or an instance of another class built by the same rules (a tuple or list of them); and the value
each role stands for."""
from __future__ import annotations

import collections.abc
import dataclasses
import inspect
import typing
from typing import Any

from jaxlint.worker import built_instances, plain_classes
from jaxlint.worker.argsources import (
    containers,
    inferred,
    linen_instances,
    not_implemented,
    optional_fields,
    subclasses,
)
from jaxlint.worker.argsources.annotations import array_spec, evaluated_annotations, union_array_spec
from jaxlint.worker.argsources.class_kinds import (
    EMPTY,
    buildable_kind,
    class_hints,
    class_kind,
    field_default,
    field_defaults,
    init_signature,
    is_abstract,
)
from jaxlint.worker.argsources.inferred import Uninferable
from jaxlint.worker.argsources.init_defaults import init_default, init_default_role
from jaxlint.worker.argsources.static_fields import (
    abstract_default,
    choice_role,
    is_union,
    stand_in_role,
    static_role,
    with_defaults_static,
)

INTEGERS = "int-array"  # the role of an array field whose default is a Python int: i32, of the ladder's rank
_MAX_DEPTH = 3  # instances inside instances: a field's (depth 1), its fields' (2) and theirs (3: gpjax's model.prior.kernel)
_SEQUENCE_LENGTH = 2  # the items of a ``tuple[X, ...]``, ``Sequence[X]`` or ``list[X]`` field
_SEQUENCES = (tuple, list, collections.abc.Sequence)


def class_fields(owner: type, kind: str, depth: int, reader: containers.Reader | None = None) -> dict[str, Any]:
    """Each field's role (inferred.role's, ("spec", dtype, dims) for a jaxtyping array, or
    ("instance", class, kind, its fields' roles) for another instance to build). ``reader``: the
    method's body, where a field annotated with a bare container or ``Any`` is read (containers.py)."""
    defaults = field_defaults(owner, kind)
    if kind in ("pytree", plain_classes.KIND):  # the __init__ parameters
        hints = evaluated_annotations(owner.__init__, init_signature(owner))
        return {name: field_role(name, hints.get(name, EMPTY), default, False, depth, reader)
                for name, default in defaults.items()}
    hints = class_hints(owner)
    if kind == "namedtuple":
        return {name: field_role(name, hints.get(name, EMPTY), default, False, depth, reader)
                for name, default in defaults.items()}
    roles = {}
    for f in dataclasses.fields(owner):
        static = bool(f.metadata.get("static")) or f.metadata.get("pytree_node") is False
        default = defaults[f.name]
        if static and default is EMPTY:  # the class's __init__ may give it one (init_defaults.py)
            default = init_default(owner, f.name)
        annotation = hints.get(f.name, f.type)
        try:
            roles[f.name] = field_role(f.name, annotation, default, static, depth)
        except Uninferable as why:
            try:  # the class's own default for it (args=None) before a value its uses suggest
                roles[f.name] = init_default_role(owner, f.name, default, why)
            except Uninferable:
                if reader is None:
                    raise
                roles[f.name] = field_role(f.name, annotation, default, static, depth, reader)
    return roles


def field_role(name: str, annotation: Any, default: Any, static: bool, depth: int,
               reader: containers.Reader | None = None) -> Any:
    param = inspect.Parameter(name, inspect.Parameter.KEYWORD_ONLY, annotation=annotation)
    if static:  # part of the class's structure, not an input: a value is needed
        if default is not EMPTY:
            return ("static", default)
        try:
            return static_role(param)
        except Uninferable:
            instance = static_instance(annotation, depth)
            if instance is None:
                raise
            return ("static", instance)
    spec = array_spec(annotation, name) or union_array_spec(annotation, name)
    if spec is not None:
        return ("spec", *spec)
    if default is not EMPTY and annotation is EMPTY:  # an __init__ parameter
        return "float" if type(default) is float else ("static", abstract_default(default))
    chosen = isinstance(annotation, type) and default is EMPTY
    nested = instance_role(annotation, depth, True, plain=True) if chosen else None
    if nested is not None:  # a class's name says more than the field's (``key: Linear`` is no PRNG key)
        return nested
    try:
        role = inferred.role(param, "self.", by_members=True)
    except Uninferable as why:
        if default is not EMPTY:
            return ("static", abstract_default(default))
        nested = instance_role(annotation, depth, True, plain=True) or sequence_role(annotation, depth) \
            or choice_role(param)
        if nested is None:
            return _unguessed(param, why, reader, f"self.{name}")
        return nested
    if default is not EMPTY and role not in ("array", "float", "key", INTEGERS):
        return ("static", abstract_default(default))  # an array annotation wins over a default
    if role == "array" and type(default) is int:
        return INTEGERS  # low: ArrayLike = 0 holds integers (a discrete distribution's bounds)
    return role


def instance_role(annotation: Any, depth: int, abstract_bases: bool = False, plain: bool = False) -> tuple | None:
    """("instance", class, kind, its fields' roles) for an annotation naming a class jaxlint can
    build (a union: its first such member), no deeper than ``_MAX_DEPTH`` instances; None else.
    With ``abstract_bases`` (a field's or a parameter's annotation), an abstract class, or one
    abstract in fact (not_implemented.py), gives its first concrete subclass jaxlint can build
    (``_subclass_role``; with ``plain``, a field's, a plain class too)."""
    if depth >= _MAX_DEPTH:
        return None
    members = typing.get_args(annotation) if is_union(annotation) else (annotation,)
    for member in members:
        if not isinstance(member, type) or member is type(None) or member.__module__ == "builtins":
            continue
        if abstract_bases and (is_abstract(member) or not_implemented.abstract_in_fact(member)):
            chosen = _subclass_role(member, depth, plain)
            if chosen is not None:
                return chosen
            if is_abstract(member):
                continue  # one abstract in fact only: itself, as before
        try:
            kind = class_kind(member)
            return ("instance", member, kind, class_fields(member, kind, depth + 1))
        except Uninferable:
            continue
    return None


def _subclass_role(base: type, depth: int, plain: bool) -> tuple | None:
    """The role of the first concrete subclass of the abstract ``base`` (subclasses.py's order)
    that the builder builds: a dataclass, NamedTuple or pytree class, or with ``plain`` a plain
    class made in the trace by its ``__init__`` (brax's environments in its wrappers' ``env``
    field). Not for a parameter: the ``__init__`` then runs in every trace of the function, and
    brax's training functions, each given an environment so, spent 34 s tracing instead of 0.4 s
    and none traced. A subclass that holds a tuple or list of the base's instances (diffrax's
    ``MultiTerm``, a tuple of terms) only when no other is built. None when no subclass is built."""
    composite = None
    for candidate in subclasses.concrete_subclasses(base):
        try:
            kind = buildable_kind(candidate) if plain else class_kind(candidate)
            role = ("instance", candidate, kind, class_fields(candidate, kind, depth + 1))
        except Uninferable:
            continue
        if not _holds(role[3].values(), base):
            return role
        composite = composite or role
    return composite


def _holds(roles: Any, base: type) -> bool:
    """Some role among ``roles`` is a tuple or list of instances of ``base``."""
    return any(isinstance(role, tuple) and role[0] == "sequence"
               and any(is_instance(item) and issubclass(item[1], base) for item in role[2]) for role in roles)


def static_instance(annotation: Any, depth: int) -> Any:
    """An instance of the class ``annotation`` names (an abstract one's first concrete subclass,
    as a field's instance is chosen), made now, for a static field (gpjax's ``integrator:
    AbstractIntegrator``): only when every one of its fields is static (a default, or a static
    value by its annotation), so that it holds no input; None else, or when its maker refuses."""
    module = linen_instances.static_module(annotation, lambda owner: linen_configuration(owner, depth + 1)) \
        if depth + 1 < _MAX_DEPTH else None
    if module is not None:
        return module
    role = instance_role(annotation, depth, True, plain=True)
    if role is None:
        return None
    _, owner, kind, roles = role
    roles = with_defaults_static(owner, kind, roles)
    if not all(is_static_value(r) for r in roles.values()):
        return None
    fields = {name: r[1] for name, r in roles.items()}
    try:
        if kind == plain_classes.KIND:
            instance = plain_classes.guarded_init(owner, fields)
            built_instances.made_static(instance)
        else:
            instance = built_instances.built(owner, kind, fields)
    except Exception:  # its __init__ refuses the values
        return None
    return None if isinstance(instance, built_instances.InstanceFields) or has_abstract({"": instance}) else instance


def linen_configuration(owner: type, depth: int) -> dict[str, Any]:
    """A linen module's configuration fields' values: each a static value (its default, else the
    ladder's for its annotation, else a stand-in); Uninferable for a field with none."""
    hints = class_hints(owner)
    return {f.name: built_instances.made(field_role(f.name, hints.get(f.name, f.type), field_default(f), True, depth)[1])
            for f in linen_instances.configuration_fields(owner)}


def is_static_value(role: Any) -> bool:
    return isinstance(role, tuple) and role[0] == "static"


def sequence_role(annotation: Any, depth: int) -> tuple | None:
    """("sequence", container, its items' roles) for a tuple or list of instances of classes
    jaxlint builds (equinox's ``layers: tuple[Linear, ...]`` holds two; ``tuple[A, B]`` one of
    each; diffrax's ``terms: tuple[AbstractTerm, ...]`` two of its first subclass built); None else."""
    origin, members = typing.get_origin(annotation), typing.get_args(annotation)
    if origin not in _SEQUENCES or not members:
        return None
    if len(members) == 2 and members[1] is Ellipsis or origin is not tuple:
        members = (members[0],) * _SEQUENCE_LENGTH
    roles = [instance_role(member, depth, True) for member in members]  # an abstract base: its subclass
    if any(role is None for role in roles):
        return None
    return ("sequence", list if origin is list else tuple, roles)


def is_instance(role: Any) -> bool:
    """An instance, or a tuple or list of them."""
    return isinstance(role, tuple) and role[0] in ("instance", "sequence")


def method_parameters(callee: Any, passed_on: dict[str, Any] | None = None,
                      reader: containers.Reader | None = None) -> dict[str, Any]:
    """The method's other parameters' roles, as the ladder guesses them (a jaxtyping array by its
    annotation, an instance of a class jaxlint builds by its class: ``other: Normal``; a bare
    container by ``reader``'s body, containers.py); those with a default keep it, *args and
    **kwargs are empty; those of ``passed_on`` the role given there (what the body passes them on
    as: a function's stand-in, a loop's carry; passed_on.py)."""
    try:
        signature = inspect.signature(callee)
    except (TypeError, ValueError):
        raise Uninferable("the method has no signature") from None
    params = list(signature.parameters.values())[1:]  # self
    hints = evaluated_annotations(inspect.unwrap(callee), signature)
    roles: dict[str, Any] = {}
    for param in params:
        if param.kind in (param.VAR_POSITIONAL, param.VAR_KEYWORD) or param.default is not EMPTY:
            continue
        if param.name in (passed_on or {}):
            roles[param.name] = passed_on[param.name]  # type: ignore[index]
            continue
        annotation = hints.get(param.name, EMPTY)
        spec = array_spec(annotation, param.name)
        nested = instance_role(annotation, 0, True) if spec is None and isinstance(annotation, type) else None
        if spec is not None or nested is not None:
            roles[param.name] = ("spec", *spec) if spec is not None else nested
            continue
        try:
            roles[param.name] = inferred.role(param, by_members=True)
        except Uninferable as why:
            nested = instance_role(annotation, 0, True)
            annotated = param.replace(annotation=annotation)
            roles[param.name] = nested if nested is not None else _unguessed(annotated, why, reader, param.name)
    return roles


def _unguessed(param: inspect.Parameter, why: Uninferable, reader: containers.Reader | None, name: str) -> Any:
    """A stand-in's role (a function, a transformation, a dtype), else a bare container's by how
    ``reader``'s body uses ``name`` (containers.py); raises ``why`` for none."""
    try:
        return stand_in_role(param, why)
    except Uninferable:
        if reader is None:
            raise
        return reader.role(name, param.annotation, why)


def role_value(role: Any, shape: tuple, n: Any, rank: int) -> Any:
    """The value of a field or parameter of ``role``: an instance's fields of rank ``rank``."""
    import jax

    if role == INTEGERS:
        return jax.ShapeDtypeStruct(shape, "int32")
    if isinstance(role, tuple) and role[0] == "spec":
        _, dtype, dims = role
        return jax.ShapeDtypeStruct(tuple(d if isinstance(d, int) else n for d in dims), dtype)
    if isinstance(role, tuple) and role[0] == "sequence":
        _, container, items = role
        return container(role_value(item, shape, n, rank) for item in items)
    if is_instance(role):
        _, owner, kind, roles = role
        names = optional_fields.optional(owner, kind, roles)
        absent = optional_fields.absent(owner, names, lambda absent: [_instance(role, absent, n, r)
                                                                      for r in range(inferred.MAX_RANK + 1)])
        return _instance(role, absent, n, rank)
    return inferred.abstract(role, shape)


def _instance(role: tuple, absent: frozenset[str], n: Any, rank: int) -> Any:
    """The instance ``role`` stands for, its array fields of rank ``rank``, those in ``absent`` None."""
    _, owner, kind, roles = role
    fields = {name: None if name in absent else role_value(r, (n,) * rank if r in ("array", INTEGERS) else (), n, rank)
              for name, r in roles.items()}
    if kind == plain_classes.KIND:
        return plain_classes.built(owner, fields)
    return built_instances.built(owner, kind, fields)


def has_abstract(values: dict[str, Any]) -> bool:
    """Some value holds an abstract array (an input), an instance's field included."""
    import jax

    return any(isinstance(leaf, jax.ShapeDtypeStruct) for leaf in jax.tree_util.tree_leaves(values))


# For a function's parameters (built_parameters.py): the builder's rules, from outside this module.
def parameter_role(annotation: Any) -> tuple | None:
    """("instance", class, kind, its fields' roles) for a parameter annotated with a class jaxlint
    builds (a union: its first such member; an abstract class: its first concrete subclass the
    builder builds); None else. Its fields are as deep as a ``self``'s."""
    return instance_role(annotation, -1, True)


def instance_of_rank(role: tuple, rank: int) -> Any:
    """The instance ``parameter_role``'s role stands for, its array fields of rank ``rank``."""
    return role_value(role, (), inferred.symbolic_size(), rank)


def why_not_built(annotation: Any) -> str | None:
    """Why no instance of the class ``annotation`` names can be built; None for one that can, or
    for an annotation that names no class of the user's."""
    if not isinstance(annotation, type) or annotation.__module__ in ("builtins", "typing"):
        return None  # ``typing.Any`` is a class too
    if is_abstract(annotation):
        return ("an abstract class, and no concrete subclass in its package can be built for a parameter (a "
                "dataclass, NamedTuple or pytree class)")
    try:
        class_fields(annotation, class_kind(annotation), 0)
    except Uninferable as why:
        return str(why)
    return None
