"""The instances jaxlint builds for methods (argsources/instances.py decides their field values):
an instance that is a pytree whose leaves hold the abstract fields is passed as it is; any other
(a dataclass that is not a pytree, an ``__init__`` that refuses abstract values, a field that is
itself built inside the trace) travels as ``InstanceFields``, a pytree of its field values, and
is made inside the trace, from the traced values, by the call that wraps the method. An instance
passed as it is keeps how it was made (``maker``), so that a trace with sizes makes it again.
"""
from __future__ import annotations

import dataclasses
import functools
import sys
import types
import weakref
from typing import Any, Callable

from jaxlint.worker import guards

POST_INIT_SECONDS = 3.0  # a built dataclass's __post_init__, as a factory's call (closures.FACTORY_SECONDS)


def built(owner: type, kind: str, fields: dict[str, Any]) -> Any:
    """An instance of ``owner`` ("namedtuple", "dataclass" or "pytree") holding ``fields``: the
    instance itself when its leaves are the fields' abstract leaves, else ``InstanceFields``."""
    import jax

    make = functools.partial(_unwrapped_make, _MAKERS[kind], owner)
    if any(_holds_fields(v) for v in fields.values()):
        return InstanceFields(owner, fields, make)  # a field made in the trace: so is its holder
    try:
        instance = make(fields)
        leaves = {id(leaf) for leaf in jax.tree_util.tree_leaves(instance)}
    except Exception:  # an __init__ that refuses abstract values: it runs on tracers instead
        return InstanceFields(owner, fields, make)
    wanted = [leaf for leaf in jax.tree_util.tree_leaves(fields) if isinstance(leaf, jax.ShapeDtypeStruct)]
    if not all(id(leaf) in leaves for leaf in wanted):
        return InstanceFields(owner, fields, make)
    _remember(instance, make, fields)
    return instance


# How each instance ``built`` passed as it is was made (its maker and field values), by id while it
# lives: its pytree's aux data may hold shapes made from its fields (numpyro's ``_batch_shape``),
# so the trace with sizes (trace.concrete_arguments) makes it again from sized fields.
_MADE: dict[int, tuple[Any, Callable[[dict[str, Any]], Any], dict[str, Any]]] = {}


def _remember(instance: Any, make: Callable[[dict[str, Any]], Any], fields: dict[str, Any]) -> None:
    try:
        reference = weakref.ref(instance, lambda _, key=id(instance): _MADE.pop(key, None))
    except TypeError:  # no weak references (a NamedTuple, a slotted class): its aux has no fields
        return
    _MADE[id(instance)] = (reference, make, fields)


def maker(value: Any) -> tuple[Callable[[dict[str, Any]], Any], dict[str, Any]] | None:
    """(maker, field values) of an instance ``built`` made and passed as it is; None for any other value."""
    made = _MADE.get(id(value))
    if made is None or made[0]() is not value:
        return None
    return made[1], made[2]


def remade(make: Callable[[dict[str, Any]], Any], fields: dict[str, Any]) -> Any:
    """An instance made again by ``make`` (``maker``'s) from other ``fields``, remembered as
    ``built``'s are (argsources/named_retry.py raises a field's rank so)."""
    instance = make(fields)
    _remember(instance, make, fields)
    return instance


class StaticValue:
    """A static field's value that holds abstract arrays (equinox's ``shape:
    PyTree[jax.ShapeDtypeStruct]``, a description of the arrays the class makes, not an input):
    it travels wrapped, so that no source takes it for an input and no trace for a leaf to trace,
    and the makers unwrap it (``made``)."""

    def __init__(self, value: Any) -> None:
        self.value = value

    def __repr__(self) -> str:
        return repr(self.value)


def _unwrapped_make(make: Callable[[type, dict[str, Any]], Any], owner: type, fields: dict[str, Any]) -> Any:
    return make(owner, {name: value.value if isinstance(value, StaticValue) else value
                        for name, value in fields.items()})


def _with_fields(owner: type, fields: dict[str, Any]) -> Any:
    """An instance with its fields set and no ``__init__`` run (as equinox and flax.struct
    unflatten theirs); then its ``__post_init__``, as the dataclass's ``__init__`` would run it
    (jaxopt's solvers derive ``self._fun`` from ``self.fun`` there), where one runs with these
    values: one that raises (a check of a value, a frozen field it sets) leaves it out."""
    instance = _fields_set(owner, fields)
    post_init = getattr(owner, "__post_init__", None)
    if post_init is None or not dataclasses.is_dataclass(owner) or owner in _SLOW_POST_INITS:
        return instance
    module = sys.modules.get(owner.__module__) or types.ModuleType(owner.__module__)
    try:  # under the safeguards of a factory's call: what it prints, sets and takes long is not kept
        with guards.without_side_effects(module), guards.guessed_call_limit(POST_INIT_SECONDS) as limit:
            post_init(instance)
    except guards.TimeUp:
        if not limit.fired:  # an outer limit's (a guess's): its caller's
            raise
        _SLOW_POST_INITS.add(owner)  # not tried again for the other rungs
        guards.LOAD_DEPENDENT.fired = True
        return _fields_set(owner, fields)
    except Exception:  # the instance may be half changed: a fresh one, as before
        _REFUSED_POST_INITS.add(owner)
        return _fields_set(owner, fields)
    _REFUSED_POST_INITS.discard(owner)
    return instance


def post_init_refused(owner: type) -> bool:
    """The last instance of ``owner`` made here was left without its ``__post_init__``, which raised."""
    return owner in _REFUSED_POST_INITS


_REFUSED_POST_INITS: weakref.WeakSet[type] = weakref.WeakSet()  # classes whose last __post_init__ raised
_SLOW_POST_INITS: weakref.WeakSet[type] = weakref.WeakSet()  # classes whose __post_init__ ran past its limit


def _fields_set(owner: type, fields: dict[str, Any]) -> Any:
    instance = object.__new__(owner)
    for name, value in fields.items():
        object.__setattr__(instance, name, value)
    return instance


def _by_init(owner: type, fields: dict[str, Any]) -> Any:
    return owner(**fields)


def _as_namedtuple(owner: type, fields: dict[str, Any]) -> Any:
    return owner._make(fields[name] for name in owner._fields)  # type: ignore[attr-defined]


_MAKERS: dict[str, Callable[[type, dict[str, Any]], Any]] = {
    "namedtuple": _as_namedtuple, "dataclass": _with_fields, "pytree": _by_init}


def built_then_called(callee: Any, self_name: str) -> Callable[..., Any]:
    """``callee`` called with every ``InstanceFields`` argument made first (``self`` positionally)."""
    def call(**kwargs: Any) -> Any:
        made = {name: value.build() if isinstance(value, InstanceFields) else value for name, value in kwargs.items()}
        return callee(made.pop(self_name), **made)

    try:
        functools.update_wrapper(call, callee)  # JAX's messages name the user's function
    except (AttributeError, TypeError):
        pass
    return call


class InstanceFields:
    """An instance's field values for a class built inside the trace: a pytree (registered when
    first made), so each abstract value is an input; ``build()`` makes the instance of ``owner``,
    its fields that are ``InstanceFields`` first."""

    def __init__(self, owner: type, values: dict[str, Any], make: Callable[[dict[str, Any]], Any]) -> None:
        _register()
        self.owner, self.values, self.make = owner, values, make

    def build(self) -> Any:
        return self.make({name: made(value) for name, value in self.values.items()})


def _holds_fields(value: Any) -> bool:
    """An ``InstanceFields``, or a tuple or list holding one (equinox's ``layers``)."""
    return isinstance(value, InstanceFields) or (
        type(value) in (tuple, list) and any(isinstance(item, InstanceFields) for item in value))


def made(value: Any) -> Any:
    """``value`` with each ``InstanceFields`` in it (itself, or an item of a tuple or list) built,
    a ``StaticValue`` unwrapped."""
    if isinstance(value, InstanceFields):
        return value.build()
    if isinstance(value, StaticValue):
        return value.value
    if type(value) in (tuple, list):
        return type(value)(made(item) for item in value)
    return value


@functools.cache
def _register() -> None:
    import jax

    def flatten(fields: InstanceFields) -> tuple[tuple, tuple]:
        return tuple(fields.values.values()), (fields.owner, tuple(fields.values), fields.make)

    def unflatten(aux: tuple, children: Any) -> InstanceFields:
        return InstanceFields(aux[0], dict(zip(aux[1], children)), aux[2])

    jax.tree_util.register_pytree_node(InstanceFields, flatten, unflatten)


def constructs(value: Any) -> bool:
    """Whether the instance ``value`` stands for can be made: an ``InstanceFields`` is built in a
    trace of its own from its abstract fields (its ``__init__`` may refuse them); any other is
    made already."""
    import jax

    if not isinstance(value, InstanceFields):
        return True
    leaves, treedef = jax.tree_util.tree_flatten(value)
    dynamic = [i for i, leaf in enumerate(leaves) if isinstance(leaf, jax.ShapeDtypeStruct)]

    def make(*values: Any) -> int:
        filled = list(leaves)
        for index, traced in zip(dynamic, values):
            filled[index] = traced
        jax.tree_util.tree_unflatten(treedef, filled).build()
        return 0

    try:
        jax.make_jaxpr(make)(*[leaves[i] for i in dynamic])
    except Exception:
        return False
    return True


def instance_fields(value: Any) -> tuple[str, dict[str, Any]] | None:
    """(class name, field values) of an instance jaxlint built, for the signature's text; None for
    a value of another kind."""
    if isinstance(value, InstanceFields):
        return value.owner.__name__, value.values
    shown = _made_static_shown(value)
    if shown is not None:
        return type(value).__name__, shown
    if dataclasses.is_dataclass(value) and not isinstance(value, type):
        return type(value).__name__, {f.name: _static_shown(f, getattr(value, f.name, None))
                                      for f in dataclasses.fields(value)}
    if isinstance(value, tuple) and hasattr(value, "_asdict"):
        return type(value).__name__, dict(value._asdict())
    attributes = getattr(value, "__dict__", None)
    return (type(value).__name__, dict(attributes)) if isinstance(attributes, dict) else None


def _static_shown(field: dataclasses.Field, value: Any) -> Any:
    """A static field's abstract value shown as what it is, a description (``ShapeDtypeStruct(shape=(),
    dtype=float32)``), never as an input (``f32[]``)."""
    import jax

    static = field.metadata.get("static") or field.metadata.get("pytree_node") is False
    described = static and any(isinstance(leaf, jax.ShapeDtypeStruct) for leaf in jax.tree_util.tree_leaves(value))
    return StaticValue(value) if described else value


def is_built(value: Any) -> bool:
    """A field value shown by its own fields: built in the trace, a dataclass or NamedTuple, or a
    plain instance made for a static field (``made_static``)."""
    return isinstance(value, InstanceFields) or (dataclasses.is_dataclass(value) and not isinstance(value, type)) \
        or (isinstance(value, tuple) and hasattr(value, "_asdict")) or _is_made_static(value)


# The plain instances made for static fields (argsources/field_roles.py), by id while they live:
# shown by their attributes (``integrator=Quadrature(points=5)``), as jaxlint's other guesses are.
# A linen module made for a field shows only its fields without a default (``cell=LSTMCell(features=2)``).
_MADE_STATIC: dict[int, tuple[Any, dict[str, Any] | None]] = {}


def made_static(instance: Any, shown: dict[str, Any] | None = None) -> None:
    """Remember ``instance``, a plain class's made by its ``__init__`` for a static field (or a
    linen module's, shown by ``shown``)."""
    try:
        reference = weakref.ref(instance, lambda _, key=id(instance): _MADE_STATIC.pop(key, None))
    except TypeError:  # no weak references (a slotted class): shown by its repr
        return
    _MADE_STATIC[id(instance)] = (reference, shown)


def _is_made_static(value: Any) -> bool:
    reference, _ = _MADE_STATIC.get(id(value), (None, None))
    return reference is not None and reference() is value


def _made_static_shown(value: Any) -> dict[str, Any] | None:
    return _MADE_STATIC[id(value)][1] if _is_made_static(value) else None
