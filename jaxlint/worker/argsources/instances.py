"""Methods traced with an instance jaxlint builds (``infer-arguments``, before the inferred
ladder): ``self`` holds inferred values for its class's fields, the method's other parameters
get the ladder's guesses (inferred.py), and the first signature that traces is kept.

Which classes: dataclasses (equinox modules and ``flax.struct`` dataclasses are ones),
NamedTuples and pytree classes (``register_pytree_node_class``'s methods, any class JAX
flattens). Their
fields: a dataclass's or NamedTuple's declared fields, else the ``__init__`` parameters. A field's
value: a static field (``eqx.field(static=True)``, ``pytree_node=False``) keeps its default; a
jaxtyping annotation gives an abstract array of its rank and dtype (every named dimension the
symbolic ``n``); an array or ``float`` annotation, or a Python float default, an abstract value
as the ladder makes them (rank 0, 1, 2; never lower than the method's ``self.x`` uses show; i32
for an array annotation whose default is a Python int, as a discrete distribution's bounds);
another default is kept (an array default becomes abstract); else the ladder guesses by name and
annotation. A field the ladder cannot guess (a module, a function, a distribution) means no
instance, and the method is counted as not linted with why; so does an abstract class, a flax
linen module (its methods run inside ``model.apply``: an examples file registers one) and a
class of no kind above.

How ``self`` reaches the trace: an instance that is a pytree is passed as it is, its abstract
leaves the program's inputs (a dataclass or NamedTuple gets its fields set without running
``__init__``; a pytree class is made by its ``__init__``). A dataclass that is not a pytree, and
a pytree class whose ``__init__`` refuses abstract values, are built inside the trace from their
fields' values, which are the inputs (``InstanceFields``): the method sees arrays either way.
"""
from __future__ import annotations

import dataclasses
import functools
import inspect
import sys
import typing
from typing import Any, Callable

from jaxlint.worker.argsources import ArgumentRequest, ArgumentSet, inferred
from jaxlint.worker.argsources.annotations import array_spec, evaluated_annotations
from jaxlint.worker.argsources.inferred import MAX_RANK, SOURCE, Uninferable
from jaxlint.worker.instrument import unrecorded

_EMPTY = inspect.Parameter.empty
_INTEGERS = "int-array"  # the role of an array field whose default is a Python int: i32, of the ladder's rank


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
    kind = _kind(owner)
    roles = {f"self.{name}": role for name, role in _fields(owner, kind).items()}
    roles.update(_parameters(callee))
    ranks = inferred.ranks_used(request)
    n = inferred.symbolic_size()
    self_name = request.target.params[0]
    found, seen = [], set()
    for rank in range(MAX_RANK + 1):
        shapes = {name: (n,) * max(rank, ranks.get(name, 0)) for name, role in roles.items()
                  if role in ("array", _INTEGERS)}
        key = tuple(sorted(shapes.items(), key=lambda item: item[0]))
        if key in seen or any(len(shape) > MAX_RANK for shape in shapes.values()):
            continue
        seen.add(key)
        values = {name: _value(role, shapes.get(name, ()), n) for name, role in roles.items()}
        fields = {name[5:]: value for name, value in values.items() if name.startswith("self.")}
        if not found and not any(_is_abstract(value) for value in values.values()):
            raise Uninferable("neither its fields nor the method's parameters take an array")
        instance, call = _instance(owner, kind, fields, callee, self_name)
        if call is None and callee is not request.function:
            call = callee  # a property: its getter
        others = {name: value for name, value in values.items() if not name.startswith("self.")}
        found.append(ArgumentSet(SOURCE, (), {self_name: instance, **others}, call=call))
    return found


def _kind(owner: type) -> str:
    """"namedtuple", "dataclass" or "pytree"; Uninferable when no instance can be built."""
    linen = getattr(sys.modules.get("flax.linen"), "Module", None)  # never imported here: it is slow
    if isinstance(linen, type) and issubclass(owner, linen):
        raise Uninferable("a flax linen module: its methods run inside model.apply (an examples file "
                          "that registers the module traces them)")
    if inspect.isabstract(owner) or getattr(owner, "__abstractvars__", None):  # abc, equinox's AbstractVar
        raise Uninferable("an abstract class")
    if issubclass(owner, tuple) and hasattr(owner, "_fields"):
        return "namedtuple"
    if dataclasses.is_dataclass(owner):
        return "dataclass"
    if _is_pytree_class(owner):
        return "pytree"
    raise Uninferable("not a dataclass, NamedTuple or pytree class")


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


def _fields(owner: type, kind: str) -> dict[str, Any]:
    """Each field's role (inferred.role's, or ("spec", dtype, dims) for a jaxtyping array)."""
    if kind == "pytree":  # the __init__ parameters
        try:
            signature = inspect.signature(owner)
        except (TypeError, ValueError):
            raise Uninferable("its __init__ has no signature") from None
        hints = evaluated_annotations(owner.__init__, signature)
        return {p.name: _field_role(p.name, hints.get(p.name, _EMPTY), p.default, static=False)
                for p in signature.parameters.values() if p.kind not in (p.VAR_POSITIONAL, p.VAR_KEYWORD)}
    hints = _class_hints(owner)
    if kind == "namedtuple":
        defaults = owner._field_defaults  # type: ignore[attr-defined]
        return {name: _field_role(name, hints.get(name, _EMPTY), defaults.get(name, _EMPTY), static=False)
                for name in owner._fields}  # type: ignore[attr-defined]
    return {f.name: _field_role(f.name, hints.get(f.name, f.type), _default(f),
                                static=bool(f.metadata.get("static")) or f.metadata.get("pytree_node") is False)
            for f in dataclasses.fields(owner)}


def _field_role(name: str, annotation: Any, default: Any, static: bool) -> Any:
    param = inspect.Parameter(name, inspect.Parameter.KEYWORD_ONLY, annotation=annotation)
    if static:  # part of the class's structure, not an input: a value is needed
        found = ("static", default) if default is not _EMPTY else inferred.role(param, "self.", by_members=True)
        if not isinstance(found, tuple):
            raise Uninferable(f"self.{name}: a static field with no default")
        return found
    spec = array_spec(annotation, name)
    if spec is not None:
        return ("spec", *spec)
    if default is not _EMPTY and annotation is _EMPTY:  # an __init__ parameter
        return "float" if type(default) is float else ("static", _abstract_default(default))
    try:
        role = inferred.role(param, "self.", by_members=True)
    except Uninferable:
        if default is _EMPTY:
            raise
        return ("static", _abstract_default(default))
    if default is not _EMPTY and role not in ("array", "float", "key"):
        return ("static", _abstract_default(default))  # an array annotation wins over a default
    if role == "array" and type(default) is int:
        return _INTEGERS  # low: ArrayLike = 0 holds integers (a discrete distribution's bounds)
    return role


def _parameters(callee: Any) -> dict[str, Any]:
    """The method's other parameters' roles, as the ladder guesses them (a jaxtyping array by its
    annotation); those with a default keep it, *args and **kwargs are empty."""
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
        spec = array_spec(hints.get(param.name, _EMPTY), param.name)
        roles[param.name] = ("spec", *spec) if spec is not None else inferred.role(param, by_members=True)
    return roles


def _value(role: Any, shape: tuple, n: Any) -> Any:
    import jax

    if role == _INTEGERS:
        return jax.ShapeDtypeStruct(shape, "int32")
    if isinstance(role, tuple) and role[0] == "spec":
        _, dtype, dims = role
        return jax.ShapeDtypeStruct(tuple(d if isinstance(d, int) else n for d in dims), dtype)
    return inferred.abstract(role, shape)


def _instance(owner: type, kind: str, fields: dict[str, Any], callee: Any, self_name: str) -> tuple[Any, Any]:
    """(self, what to call instead of the method or None): the instance when it is a pytree whose
    leaves hold the abstract fields, else InstanceFields and a call that builds it in the trace."""
    import jax

    if kind == "namedtuple":
        return owner._make(fields[name] for name in owner._fields), None  # type: ignore[attr-defined]
    build = functools.partial(_with_fields if kind == "dataclass" else _by_init, owner)
    try:
        instance = build(fields)
        leaves = {id(leaf) for leaf in jax.tree_util.tree_leaves(instance)}
    except Exception:  # an __init__ that refuses abstract values: it runs on tracers instead
        instance, leaves = None, set()
    if instance is not None and all(id(value) in leaves for value in fields.values() if _is_abstract(value)):
        return instance, None
    return InstanceFields(owner, fields, build), _built_then_called(callee, self_name)


def _with_fields(owner: type, fields: dict[str, Any]) -> Any:
    """An instance with its fields set and no ``__init__`` run (as equinox and flax.struct
    unflatten theirs)."""
    instance = object.__new__(owner)
    for name, value in fields.items():
        object.__setattr__(instance, name, value)
    return instance


def _by_init(owner: type, fields: dict[str, Any]) -> Any:
    return owner(**fields)


def _built_then_called(callee: Any, self_name: str) -> Callable[..., Any]:
    def call(**kwargs: Any) -> Any:
        return callee(kwargs.pop(self_name).build(), **kwargs)

    try:
        functools.update_wrapper(call, callee)  # JAX's messages name the user's function
    except (AttributeError, TypeError):
        pass
    return call


class InstanceFields:
    """``self``'s field values for a class built inside the trace: a pytree (registered when
    first made), so each abstract value is an input; ``build()`` makes the instance of ``owner``."""

    def __init__(self, owner: type, values: dict[str, Any], make: Callable[[dict[str, Any]], Any]) -> None:
        _register()
        self.owner, self.values, self.make = owner, values, make

    def build(self) -> Any:
        return self.make(self.values)


@functools.cache
def _register() -> None:
    import jax

    def flatten(fields: InstanceFields) -> tuple[tuple, tuple]:
        return tuple(fields.values.values()), (fields.owner, tuple(fields.values), fields.make)

    def unflatten(aux: tuple, children: Any) -> InstanceFields:
        return InstanceFields(aux[0], dict(zip(aux[1], children)), aux[2])

    jax.tree_util.register_pytree_node(InstanceFields, flatten, unflatten)


def instance_fields(value: Any) -> tuple[str, dict[str, Any]] | None:
    """(class name, field values) of an instance jaxlint built for ``self``, for the signature's
    text; None for a value of another kind."""
    if isinstance(value, InstanceFields):
        return value.owner.__name__, value.values
    if dataclasses.is_dataclass(value) and not isinstance(value, type):
        return type(value).__name__, {f.name: getattr(value, f.name, None) for f in dataclasses.fields(value)}
    if isinstance(value, tuple) and hasattr(value, "_asdict"):
        return type(value).__name__, dict(value._asdict())
    attributes = getattr(value, "__dict__", None)
    return (type(value).__name__, dict(attributes)) if isinstance(attributes, dict) else None


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


def _is_abstract(value: Any) -> bool:
    import jax

    return isinstance(value, jax.ShapeDtypeStruct)
