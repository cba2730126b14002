"""Methods traced with an instance jaxlint builds (``infer-arguments``, before the inferred
ladder): ``self`` holds inferred values for its class's fields, the method's other parameters
get the ladder's guesses (inferred.py), and the first signature that traces is kept.

Which classes: dataclasses (equinox modules and ``flax.struct`` dataclasses are ones),
NamedTuples and pytree classes (``register_pytree_node_class``'s methods, any class JAX
flattens); for ``self`` only, any other class too (a plain class: worker/plain_classes.py, made
inside the trace by its ``__init__``). Their fields: a dataclass's or NamedTuple's declared
fields, else the ``__init__`` parameters. A field's value: a static field
(``eqx.field(static=True)``, ``pytree_node=False``) keeps its default (without one, a union's
int, bool or float member gives 2, False, 0.1); an enum field without a default its first
member, a ``Literal`` one its first value, static or not; a jaxtyping annotation gives an abstract array
of its rank and dtype (every named dimension the symbolic ``n``); an array or ``float``
annotation, or a Python float default, an abstract value as the ladder makes them (rank 0, 1, 2;
never lower than the method's ``self.x`` uses show; i32 for an array annotation whose default is
a Python int, as a discrete distribution's bounds); another default is kept (an array default
becomes abstract); else the ladder guesses by name and annotation; else an annotation naming a
class of a kind above (a union: its first such member; an abstract class: its first concrete
subclass that can be built, subclasses.py) gives an instance of it, built by the
same rules, two levels deep at most; else a field (or a method's parameter) that holds a
function, an optax transformation or a dtype gets the factories' stand-in (worker/standins.py),
shown in the signature. A field none of these gives means no instance, and the method is
counted as not linted with why; so does an abstract class, a field annotated with a flax linen
module (a linen module's own methods: linen_instances.py), a test class, an exception and an enum.
A method's parameter annotated with such a class (``kl(self, other: Normal)``) gets an instance
too. Fields whose default is None are arrays first; when the instance cannot be made so on any
rung, they are left None, all, else all but one in turn, the first choice that makes one kept
(a class that takes exactly one of ``scale`` and ``log_scale``).

How an instance reaches the trace: built_instances.py (a pytree with the abstract fields as its
leaves, or ``InstanceFields``, made inside the trace from the traced values).
"""
from __future__ import annotations

import collections.abc
import dataclasses
import enum
import inspect
import sys
import types
import typing
import weakref
from typing import Any

from jaxlint.worker import built_instances, plain_classes, standins
from jaxlint.worker.argsources import ArgumentRequest, ArgumentSet, inferred, linen_instances, subclasses
from jaxlint.worker.argsources.annotations import array_spec, evaluated_annotations
from jaxlint.worker.argsources.inferred import MAX_RANK, SOURCE, Uninferable
from jaxlint.worker.built_instances import InstanceFields
from jaxlint.worker.instrument import unrecorded

_EMPTY = inspect.Parameter.empty
_INTEGERS = "int-array"  # the role of an array field whose default is a Python int: i32, of the ladder's rank
_RANKED = ("array", "pytree", _INTEGERS)  # roles whose shape follows the rung: arrays, one-leaf pytrees (pytrees.py)
_CONCRETE_SIZE = 8  # a linen module's n where its init cannot work with the symbol
_MAX_DEPTH = 2  # instances inside instances: a field's (depth 1), and that one's fields' (depth 2)
_MAX_ONE_OF = 3  # the None-default fields tried one at a time (each variant is three traces of __init__ at most)
_NO_KIND = "not a dataclass, NamedTuple or pytree class"
_SEQUENCE_LENGTH = 2  # the items of a ``tuple[X, ...]``, ``Sequence[X]`` or ``list[X]`` field
_SEQUENCES = (tuple, list, collections.abc.Sequence)
_STATIC_VALUES = {int: 2, bool: False, float: 0.1}  # a static union's member: its value


def arguments(request: ArgumentRequest) -> list[ArgumentSet]:
    if not request.settings.infer_arguments or not inferred.needs_instance(request):
        return []
    method = _method(request)
    if method is None:
        request.notes.append("arguments not inferred: the method's class was not found on the module")
        return []
    owner, callee = method
    try:
        with unrecorded():  # the class's __init__ may run: jaxlint's doing, not the module's
            return _signatures(request, owner, callee)
    except Uninferable as why:
        request.notes.append(f"arguments not inferred: no {owner.__name__} instance: {why}")
        return []
    except Exception as error:  # a class of a shape not foreseen: counted with why, the module's job goes on
        request.notes.append(f"arguments not inferred: no {owner.__name__} instance: {type(error).__name__}: {error}")
        return []


def _method(request: ArgumentRequest) -> tuple[type, Any] | None:
    """(the class, what to call with the instance first): a property's getter, else the method
    as the class has it (a jit wrapper included); None when the class is not found."""
    *path, name = request.target.qualname.split(".")
    owner = request.module
    try:
        for part in path:
            owner = getattr(owner, part)
        raw = inspect.getattr_static(owner, name)
    except Exception:  # a user's __getattr__ that raises, or no such attribute
        return None
    if not isinstance(owner, type) or isinstance(raw, (staticmethod, classmethod)):
        return None
    return owner, raw.fget if isinstance(raw, property) else request.function


def _signatures(request: ArgumentRequest, owner: type, callee: Any) -> list[ArgumentSet]:
    """The rungs with every field given, or, when the instance cannot be made on any of them (its
    ``__init__`` refuses), the rungs with the None-default fields ``_absent`` chose left None."""
    if linen_instances.is_linen(owner):
        return _linen_signatures(request, owner, callee)
    kind = _self_kind(owner)
    roles = {f"self.{name}": role for name, role in _fields(owner, kind, 0).items()}
    roles.update(_parameters(callee))
    one_leaf = inferred.one_leaf_parameters(request, roles)
    plan = _Plan(request, owner, kind, callee, roles)
    found = plan.rungs(frozenset())
    if not found:
        raise Uninferable("neither its fields nor the method's parameters take an array")
    optional = [name for name, default in _defaults(owner, kind).items()
                if default is None and not _is_static(roles.get(f"self.{name}"))]
    if optional:
        if owner not in _ABSENT:  # once per class: its methods share the answer
            _ABSENT[owner] = _absent(plan, found, optional)
        absent = _ABSENT[owner]
        found = plan.rungs(absent) if absent else found  # the rungs with every field given all fail: left out
    return [dataclasses.replace(arguments, one_leaf=one_leaf) for arguments in found]


def _linen_signatures(request: ArgumentRequest, owner: type, callee: Any) -> list[ArgumentSet]:
    """A linen module's method: its configuration fields as static values (a value is needed:
    its default, else the ladder's for its annotation, else a stand-in), the method's parameters
    guessed on the ladder's rungs (linen_instances.py binds the module to its variables)."""
    if callee is not request.function:
        raise Uninferable("a linen module's property")
    hints = _class_hints(owner)
    configuration, shown = {}, {}
    for field in linen_instances.configuration_fields(owner):
        default = _default(field)
        _, value = _field_role(field.name, hints.get(field.name, field.type), default, True, 0)
        configuration[field.name] = value
        if default is _EMPTY:
            shown[field.name] = value
    roles, ranks = _parameters(callee), inferred.ranks_used(request)
    one_leaf = inferred.one_leaf_parameters(request, roles)
    rungs, seen = [], set()
    for rank in range(MAX_RANK + 1):
        shapes = {name: max(rank, ranks.get(name, 0)) for name, role in roles.items() if role in _RANKED}
        if tuple(sorted(shapes.items())) in seen or any(r > MAX_RANK for r in shapes.values()):
            continue
        seen.add(tuple(sorted(shapes.items())))
        rungs.append(tuple({name: _value(role, (n,) * shapes.get(name, 0), n, rank) for name, role in roles.items()}
                           for n in (inferred.symbolic_size(), _CONCRETE_SIZE)))
    if not any(_has_abstract(symbolic) for symbolic, _ in rungs):
        raise Uninferable("the method's parameters take no array")
    method = request.target.qualname.rpartition(".")[2]
    return [dataclasses.replace(arguments, one_leaf=one_leaf)
            for arguments in linen_instances.signatures(request, owner, method, configuration, shown, rungs)]


def _absent(plan: _Plan, found: list[ArgumentSet], optional: list[str]) -> frozenset[str]:
    """The None-default fields to leave None: none when the instance can be made with every field
    given on some rung, else all of them, else all but one in turn, the first choice that makes
    one on some rung (none when no choice does: the errors of every field given are reported)."""
    if any(plan.constructs(arguments) for arguments in found):
        return frozenset()
    everyone = frozenset(optional)
    one_of = [everyone - {name} for name in optional[:_MAX_ONE_OF]] if len(optional) > 1 else []
    for absent in [everyone, *one_of]:
        if any(plan.constructs(arguments) for arguments in plan.rungs(absent)):
            return absent
    return frozenset()


@dataclasses.dataclass
class _Plan:
    """One method's roles and how its signatures are made from them."""

    request: ArgumentRequest
    owner: type
    kind: str
    callee: Any
    roles: dict[str, Any]  # "self.<field>" and the method's parameters

    def rungs(self, absent: frozenset[str]) -> list[ArgumentSet]:
        """Rank 0, 1, 2 (never lower than the body shows), the fields in ``absent`` None; none
        when no value is an abstract array."""
        roles, ranks, n = self.roles, inferred.ranks_used(self.request), inferred.symbolic_size()
        nested = any(_is_instance(role) for role in roles.values())
        found, seen = [], set()
        for rank in range(MAX_RANK + 1):
            shapes = {name: (n,) * max(rank, ranks.get(name, 0)) for name, role in roles.items() if role in _RANKED}
            # An instance's fields take the rung's rank whatever the other shapes are.
            key = (rank if nested else 0, tuple(sorted(shapes.items(), key=lambda item: item[0])))
            if key in seen or any(len(shape) > MAX_RANK for shape in shapes.values()):
                continue
            seen.add(key)
            values = {name: None if name.startswith("self.") and name[5:] in absent
                      else _value(role, shapes.get(name, ()), n, rank) for name, role in roles.items()}
            if not _has_abstract(values):
                return []
            found.append(self._signature(values))
        return found

    def _signature(self, values: dict[str, Any]) -> ArgumentSet:
        self_name = self.request.target.params[0]
        fields = {name[5:]: value for name, value in values.items() if name.startswith("self.")}
        arguments = {self_name: _built(self.owner, self.kind, fields),
                     **{name: value for name, value in values.items() if not name.startswith("self.")}}
        call = built_instances.built_then_called(self.callee, self_name) \
            if any(isinstance(v, InstanceFields) for v in arguments.values()) else None
        if call is None and self.callee is not self.request.function:
            call = self.callee  # a property: its getter
        built = (self_name, *(name for name, role in self.roles.items() if _is_instance(role) and "." not in name))
        return ArgumentSet(SOURCE, (), arguments, call=call, built=built)

    def constructs(self, arguments: ArgumentSet) -> bool:
        """``self`` can be made from these fields (its ``__init__`` traced alone)."""
        return built_instances.constructs(arguments.kwargs[self.request.target.params[0]])


# Per class, the None-default fields its instances leave None (_absent).
_ABSENT: weakref.WeakKeyDictionary[type, frozenset[str]] = weakref.WeakKeyDictionary()


def _is_static(role: Any) -> bool:
    return role is None or (isinstance(role, tuple) and role[0] == "static")


def _self_kind(owner: type) -> str:
    """_kind's, else "plain" for a class built through its ``__init__`` (plain_classes.py): only
    ``self`` is one, never a field's or a parameter's instance."""
    try:
        return _kind(owner)
    except Uninferable as why:
        if str(why) != _NO_KIND:
            raise
    plain_classes.check_buildable(owner)
    return plain_classes.KIND


def _built(owner: type, kind: str, fields: dict[str, Any]) -> Any:
    if kind == plain_classes.KIND:
        return plain_classes.built(owner, fields)
    return built_instances.built(owner, kind, fields)


def _kind(owner: type) -> str:
    """"namedtuple", "dataclass" or "pytree"; Uninferable when no instance can be built."""
    linen = getattr(sys.modules.get("flax.linen"), "Module", None)  # never imported here: it is slow
    if isinstance(linen, type) and issubclass(owner, linen):
        raise Uninferable("a flax linen module: its methods run inside model.apply (an examples file "
                          "that registers the module traces them)")
    if _is_abstract(owner):  # abc, equinox's AbstractVar
        raise Uninferable("an abstract class")
    if issubclass(owner, tuple) and hasattr(owner, "_fields"):
        return "namedtuple"
    if dataclasses.is_dataclass(owner):
        return "dataclass"
    if _is_pytree_class(owner):
        return "pytree"
    raise Uninferable(_NO_KIND)


def _is_pytree_class(owner: type) -> bool:
    """The class has ``register_pytree_node_class``'s methods (distrax registers its classes so
    when the first instance is made), or JAX flattens its instances: an empty one is not a leaf
    to it (JAX's registry has no public lookup)."""
    import jax

    if callable(getattr(owner, "tree_flatten", None)) and callable(getattr(owner, "tree_unflatten", None)):
        return True
    try:
        empty = object.__new__(owner)
    except Exception:
        return False
    try:
        return not jax.tree_util.treedef_is_leaf(jax.tree_util.tree_structure(empty))
    except Exception:  # the class's flatten ran, and failed on an instance without fields
        return True


def _defaults(owner: type, kind: str) -> dict[str, Any]:
    """Each field's default (``_EMPTY``: none): a pytree class's ``__init__`` parameters'."""
    if kind in ("pytree", plain_classes.KIND):
        try:
            signature = inspect.signature(owner)
        except (TypeError, ValueError):
            raise Uninferable("its __init__ has no signature") from None
        return {p.name: p.default for p in signature.parameters.values()
                if p.kind not in (p.VAR_POSITIONAL, p.VAR_KEYWORD)}
    if kind == "namedtuple":
        defaults = owner._field_defaults  # type: ignore[attr-defined]
        return {name: defaults.get(name, _EMPTY) for name in owner._fields}  # type: ignore[attr-defined]
    return {f.name: _default(f) for f in dataclasses.fields(owner)}


def _fields(owner: type, kind: str, depth: int) -> dict[str, Any]:
    """Each field's role (inferred.role's, ("spec", dtype, dims) for a jaxtyping array, or
    ("instance", class, kind, its fields' roles) for another instance to build)."""
    defaults = _defaults(owner, kind)
    if kind in ("pytree", plain_classes.KIND):  # the __init__ parameters
        hints = evaluated_annotations(owner.__init__, inspect.signature(owner))
        return {name: _field_role(name, hints.get(name, _EMPTY), default, False, depth)
                for name, default in defaults.items()}
    hints = _class_hints(owner)
    if kind == "namedtuple":
        return {name: _field_role(name, hints.get(name, _EMPTY), default, False, depth)
                for name, default in defaults.items()}
    return {f.name: _field_role(f.name, hints.get(f.name, f.type), defaults[f.name],
                                bool(f.metadata.get("static")) or f.metadata.get("pytree_node") is False, depth)
            for f in dataclasses.fields(owner)}


def _field_role(name: str, annotation: Any, default: Any, static: bool, depth: int) -> Any:
    param = inspect.Parameter(name, inspect.Parameter.KEYWORD_ONLY, annotation=annotation)
    if static:  # part of the class's structure, not an input: a value is needed
        found = ("static", default) if default is not _EMPTY else _static_role(param)
        if not isinstance(found, tuple):
            raise Uninferable(f"self.{name}: a static field with no default")
        return found
    spec = array_spec(annotation, name)
    if spec is not None:
        return ("spec", *spec)
    if default is not _EMPTY and annotation is _EMPTY:  # an __init__ parameter
        return "float" if type(default) is float else ("static", _abstract_default(default))
    nested = _instance_role(annotation, depth, True) if isinstance(annotation, type) and default is _EMPTY else None
    if nested is not None:  # a class's name says more than the field's (``key: Linear`` is no PRNG key)
        return nested
    try:
        role = inferred.role(param, "self.", by_members=True)
    except Uninferable as why:
        if default is not _EMPTY:
            return ("static", _abstract_default(default))
        nested = _instance_role(annotation, depth, True) or _sequence_role(annotation, depth) or _choice_role(param)
        if nested is None:
            return _stand_in_role(param, why)
        return nested
    if default is not _EMPTY and role not in ("array", "float", "key"):
        return ("static", _abstract_default(default))  # an array annotation wins over a default
    if role == "array" and type(default) is int:
        return _INTEGERS  # low: ArrayLike = 0 holds integers (a discrete distribution's bounds)
    return role


def _stand_in_role(param: inspect.Parameter, why: Uninferable) -> tuple:
    """("static", a stand-in) for a field or parameter that holds a function (``fn: Callable``, or
    by its name without an annotation), an optax transformation or a dtype, as a factory's
    parameter gets one (worker/standins.py); ``why`` raised for any other."""
    stand_in = standins.for_parameter(param)
    if stand_in is None:
        raise why
    return ("static", stand_in)


def _static_role(param: inspect.Parameter) -> Any:
    """A static field's value without a default: the ladder's for its annotation, else a union's
    first int, bool or float member's (equinox's ``in_features: int | Literal["scalar"]``)."""
    try:
        return inferred.role(param, "self.", by_members=True)
    except Uninferable:
        pass
    for member in typing.get_args(param.annotation) if _is_union(param.annotation) else ():
        if member in _STATIC_VALUES:
            return ("static", _STATIC_VALUES[member])
    return _choice_role(param) or _stand_in_role(param, Uninferable(f"self.{param.name}: a static field with no default"))


def _choice_role(param: inspect.Parameter) -> tuple | None:
    """("static", a value) for a field without a default annotated with an enum (its first member:
    mujoco's ``jacobian: JacobianType``, jax_md's ``format: NeighborListFormat``) or a ``Literal``
    (its first value); a union, its first such member; None else. The value is one the class can
    hold, as the library's own default would be, and the signature shows it."""
    annotation = param.annotation
    for member in typing.get_args(annotation) if _is_union(annotation) else (annotation,):
        if typing.get_origin(member) is typing.Literal and typing.get_args(member):
            return ("static", typing.get_args(member)[0])
        if isinstance(member, type) and issubclass(member, enum.Enum):
            first = next(iter(member), None)
            if first is not None:
                return ("static", first)
    return None


def _instance_role(annotation: Any, depth: int, abstract_bases: bool = False) -> tuple | None:
    """("instance", class, kind, its fields' roles) for an annotation naming a class jaxlint can
    build (a union: its first such member), no deeper than ``_MAX_DEPTH`` instances; None else.
    With ``abstract_bases`` (a field's annotation), an abstract class gives its first concrete
    subclass jaxlint can build (subclasses.py)."""
    if depth >= _MAX_DEPTH:
        return None
    members = typing.get_args(annotation) if _is_union(annotation) else (annotation,)
    for member in members:
        if not isinstance(member, type) or member is type(None) or member.__module__ == "builtins":
            continue
        candidates = [member]
        if abstract_bases and _is_abstract(member):
            candidates = subclasses.concrete_subclasses(member)
        for candidate in candidates:
            try:
                kind = _kind(candidate)
                return ("instance", candidate, kind, _fields(candidate, kind, depth + 1))
            except Uninferable:
                continue
    return None


def _is_abstract(owner: type) -> bool:
    return inspect.isabstract(owner) or bool(getattr(owner, "__abstractvars__", None))


def _sequence_role(annotation: Any, depth: int) -> tuple | None:
    """("sequence", container, its items' roles) for a tuple or list of instances of classes
    jaxlint builds (equinox's ``layers: tuple[Linear, ...]`` holds two; ``tuple[A, B]`` one of
    each); None else."""
    origin, members = typing.get_origin(annotation), typing.get_args(annotation)
    if origin not in _SEQUENCES or not members:
        return None
    if len(members) == 2 and members[1] is Ellipsis or origin is not tuple:
        members = (members[0],) * _SEQUENCE_LENGTH
    roles = [_instance_role(member, depth) for member in members]
    if any(role is None for role in roles):
        return None
    return ("sequence", list if origin is list else tuple, roles)


def _is_union(annotation: Any) -> bool:
    return typing.get_origin(annotation) in (typing.Union, types.UnionType)


def _is_instance(role: Any) -> bool:
    """An instance, or a tuple or list of them."""
    return isinstance(role, tuple) and role[0] in ("instance", "sequence")


def _parameters(callee: Any) -> dict[str, Any]:
    """The method's other parameters' roles, as the ladder guesses them (a jaxtyping array by its
    annotation, an instance of a class jaxlint builds by its class: ``other: Normal``); those with
    a default keep it, *args and **kwargs are empty."""
    try:
        signature = inspect.signature(callee)
    except (TypeError, ValueError):
        raise Uninferable("the method has no signature") from None
    params = list(signature.parameters.values())[1:]  # self
    hints = evaluated_annotations(inspect.unwrap(callee), signature)
    roles: dict[str, Any] = {}
    for param in params:
        if param.kind in (param.VAR_POSITIONAL, param.VAR_KEYWORD) or param.default is not _EMPTY:
            continue
        annotation = hints.get(param.name, _EMPTY)
        spec = array_spec(annotation, param.name)
        nested = _instance_role(annotation, 0) if spec is None and isinstance(annotation, type) else None
        if spec is not None or nested is not None:
            roles[param.name] = ("spec", *spec) if spec is not None else nested
            continue
        try:
            roles[param.name] = inferred.role(param, by_members=True)
        except Uninferable as why:
            nested = _instance_role(annotation, 0)
            annotated = param.replace(annotation=annotation)
            roles[param.name] = nested if nested is not None else _stand_in_role(annotated, why)
    return roles


def _value(role: Any, shape: tuple, n: Any, rank: int) -> Any:
    """The value of a field or parameter of ``role``: an instance's fields of rank ``rank``."""
    import jax

    if role == _INTEGERS:
        return jax.ShapeDtypeStruct(shape, "int32")
    if isinstance(role, tuple) and role[0] == "spec":
        _, dtype, dims = role
        return jax.ShapeDtypeStruct(tuple(d if isinstance(d, int) else n for d in dims), dtype)
    if isinstance(role, tuple) and role[0] == "sequence":
        _, container, items = role
        return container(_value(item, shape, n, rank) for item in items)
    if _is_instance(role):
        _, owner, kind, roles = role
        fields = {name: _value(r, (n,) * rank if r in ("array", _INTEGERS) else (), n, rank)
                  for name, r in roles.items()}
        return built_instances.built(owner, kind, fields)
    return inferred.abstract(role, shape)


def _class_hints(owner: type) -> dict[str, Any]:
    try:
        return typing.get_type_hints(owner)
    except Exception:  # one unresolvable name fails them all: each field's own annotation then
        return {}


def _default(field: dataclasses.Field) -> Any:
    if field.default is not dataclasses.MISSING:
        return field.default
    if field.default_factory is not dataclasses.MISSING:
        try:
            return field.default_factory()
        except Exception:
            return _EMPTY
    return _EMPTY


def _abstract_default(value: Any) -> Any:
    """An array default as an abstract array of its shape and dtype; any other as it is."""
    import jax

    if hasattr(value, "shape") and hasattr(value, "dtype") and not isinstance(value, type):
        return jax.ShapeDtypeStruct(value.shape, value.dtype)
    return value


def _has_abstract(values: dict[str, Any]) -> bool:
    """Some value holds an abstract array (an input), an instance's field included."""
    import jax

    return any(isinstance(leaf, jax.ShapeDtypeStruct) for leaf in jax.tree_util.tree_leaves(values))


# For a function's parameters (built_parameters.py): the builder's rules, from outside this module.
def parameter_role(annotation: Any) -> tuple | None:
    """("instance", class, kind, its fields' roles) for a parameter annotated with a class jaxlint
    builds (a union: its first such member); None else. Its fields are as deep as a ``self``'s."""
    return _instance_role(annotation, -1)


def instance_of_rank(role: tuple, rank: int) -> Any:
    """The instance ``parameter_role``'s role stands for, its array fields of rank ``rank``."""
    return _value(role, (), inferred.symbolic_size(), rank)


def why_not_built(annotation: Any) -> str | None:
    """Why no instance of the class ``annotation`` names can be built; None for one that can, or
    for an annotation that names no class of the user's."""
    if not isinstance(annotation, type) or annotation.__module__ in ("builtins", "typing"):
        return None  # ``typing.Any`` is a class too
    try:
        _fields(annotation, _kind(annotation), 0)
    except Uninferable as why:
        return str(why)
    return None
