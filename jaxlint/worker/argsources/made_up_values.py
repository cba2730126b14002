"""The values of made_up.py's roles: a frozen dataclass made for each made-up object and
registered as a pytree (data fields for its arrays and nested objects, static ones for sizes,
flags and stand-ins), with ``replace``, ``_replace`` and ``set``; its text in a signature
(``<made up: position=f32[n], logdensity=f32[]>``); and the same arguments with one attribute
more where a trace's AttributeError says a callee read one the body did not (``grown``).
"""
from __future__ import annotations

import dataclasses
import functools
from typing import Any

from jaxlint.worker import standins
from jaxlint.worker.argsources import sizes, usage
from jaxlint.worker.argsources.made_up import BOOL, COPIES, array_attributes, is_made_up

MAX_GROWN = 4  # attributes a made-up object gains from its traces' AttributeErrors (``grown``)


def value(role: tuple, shape: tuple, n: Any, grown: int = 0) -> Any:
    """The made-up object ``role`` stands for: its arrays of ``shape``'s rank, or of the rank the
    body reads them at, whichever is higher (dimensions ``n``). ``grown``: attributes already
    counted against ``MAX_GROWN`` (one a callee's error named, made_up_callee.py)."""
    return _value(role[1], dict(role[2]), "", len(shape), n, grown)


def _value(spec: tuple, ranks: dict[str, int], prefix: str, rank: int, n: Any, grown: int = 0) -> Any:
    import jax

    fields = {}
    for attribute, child in spec:
        path = f"{prefix}{attribute}"
        scalar = standins.SCALAR_NAME.fullmatch(attribute.lower())  # ``state.logdensity``: rank 0 on every rung
        leaf = (n,) * max(0 if scalar else rank, ranks.get(path, 0))
        if is_made_up(child):
            fields[attribute] = _value(child[1], ranks, f"{path}.", rank, n)
        elif child == BOOL:
            fields[attribute] = jax.ShapeDtypeStruct(leaf, "bool")
        elif child == "array":
            fields[attribute] = jax.ShapeDtypeStruct(leaf, "float32")
        elif child == sizes.INDEX_ROLE:
            fields[attribute] = jax.ShapeDtypeStruct(leaf, "int32")
        elif child == "key":
            fields[attribute] = jax.eval_shape(lambda: jax.random.key(0))
        elif usage.is_tuple(child):
            fields[attribute] = tuple(jax.ShapeDtypeStruct(leaf, "float32") for _ in range(child[1]))
        else:
            fields[attribute] = child[1]  # ("static", value): a size, a flag, a stand-in
    return _made_up_class(tuple((attribute, not _static(child)) for attribute, child in spec), grown)(**fields)


def grown(arguments: Any, error: BaseException) -> Any:
    """``arguments`` with the attribute ``error`` says a made-up object lacks added to it, an f32
    array of its arrays' rank (a callee reads ``state.mass`` where the body only read
    ``state.position``); None where ``error`` is no such AttributeError, or the object has grown
    ``MAX_GROWN`` attributes so already."""
    import jax

    owner, name = getattr(error, "obj", None), getattr(error, "name", None)
    if not (isinstance(error, AttributeError) and is_made_up_value(owner) and isinstance(name, str)) \
            or name.startswith("__") or name in array_attributes() or type(owner).__jaxlint_grown__ >= MAX_GROWN:
        return None

    def grow(value: Any) -> Any:
        if is_made_up_value(value) and type(value) is type(owner):
            fields = {field.name: getattr(value, field.name) for field in dataclasses.fields(value)}
            leaves = jax.tree_util.tree_leaves(value)
            ranks = [len(leaf.shape) for leaf in leaves if hasattr(leaf, "shape")]
            size = next((leaf.shape[0] for leaf in leaves if getattr(leaf, "shape", ())), None)
            dims = (size,) * max(ranks, default=0) if size is not None else ()
            kinds = tuple((field, field not in _static_names(value)) for field in fields) + ((name, True),)
            return _made_up_class(kinds, type(owner).__jaxlint_grown__ + 1)(
                **fields, **{name: jax.ShapeDtypeStruct(dims, "float32")})
        return value

    is_leaf = lambda value: is_made_up_value(value) and type(value) is type(owner)  # noqa: E731

    def grown_in(value: Any) -> Any:  # only an argument that holds one is made again
        holds = any(map(is_leaf, jax.tree_util.tree_leaves(value, is_leaf=is_leaf)))
        return jax.tree_util.tree_map(grow, value, is_leaf=is_leaf) if holds else value

    return dataclasses.replace(arguments, args=tuple(map(grown_in, arguments.args)),
                               kwargs={key: grown_in(value) for key, value in arguments.kwargs.items()})


def _static_names(value: Any) -> set[str]:
    return set(type(value).__jaxlint_static__)


def _static(role: Any) -> bool:
    return isinstance(role, tuple) and role[0] == "static"


@functools.cache
def _made_up_class(fields: tuple[tuple[str, bool], ...], grown: int = 0) -> type:
    """A frozen dataclass with these fields, registered as a pytree (``True``: a data field, its
    leaves traced; ``False``: a static one), with the methods of ``COPIES``. ``grown``: how many
    of its fields a trace's AttributeError added (``grown``)."""
    import jax

    # Its repr shows one without array fields (a pytree with no leaves: no signature reaches into it).
    namespace = {**{name: dataclasses.replace for name in COPIES}, "__jaxlint_made_up__": True,
                 "__repr__": lambda self: text(self, repr), "__jaxlint_grown__": grown,
                 "__jaxlint_static__": tuple(name for name, data in fields if not data)}
    cls = dataclasses.make_dataclass("MadeUp", [name for name, _ in fields], frozen=True, repr=False,
                                     namespace=namespace)
    jax.tree_util.register_dataclass(cls, data_fields=[name for name, data in fields if data],
                                     meta_fields=[name for name, data in fields if not data])
    return cls


def is_made_up_value(value: Any) -> bool:
    """A value this module made (shown by its fields, ``<made up: a=f32[]>``)."""
    return getattr(type(value), "__jaxlint_made_up__", False) is True


def text(value: Any, show: Any) -> str:
    """``<made up: position=f32[n], logdensity=f32[]>``; ``show`` formats a field's value."""
    fields = ", ".join(f"{field.name}={show(getattr(value, field.name))}" for field in dataclasses.fields(value))
    return f"<made up: {fields}>"
