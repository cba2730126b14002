"""Values that describe arrays rather than hold them: a ``jax.ShapeDtypeStruct`` annotation (or a
pytree of them) and a ``frozenset`` of tags. A class's static field (static_fields.py) and a
function's or method's parameter (inferred.py) annotated so get a concrete value, never an input:
one f32 scalar's description, an empty set. The description travels wrapped
(``built_instances.StaticValue``), so that no trace takes it for an array to trace."""
from __future__ import annotations

import inspect
import re
import types
import typing
from typing import Any

from jaxlint.worker.built_instances import StaticValue

_UNIONS = (typing.Union, types.UnionType)


def description(annotation: Any) -> Any:
    """For a field or parameter that describes the arrays a class or function takes or makes: a
    ``jax.ShapeDtypeStruct`` annotation, or a pytree of them (jaxtyping's ``PyTree[...]``:
    diffrax's ``VirtualBrownianTree.shape``, optimistix's ``f_struct``), a union's member too, one
    f32 scalar's, as a scalar Brownian motion's (a single leaf, of a concrete shape, so that it
    holds no symbolic size of the trace's); such a pytree flattened (``tuple[list[ShapeDtypeStruct],
    PyTreeDef]``: lineax's ``input_structure``), that scalar's flattened. None for any other
    annotation."""
    import jax

    scalar = jax.ShapeDtypeStruct((), "float32")
    for member in typing.get_args(annotation) if typing.get_origin(annotation) in _UNIONS else (annotation,):
        if _is_struct(member):
            return scalar
        items = typing.get_args(member)
        if typing.get_origin(member) is tuple and len(items) == 2 and items[1] is jax.tree_util.PyTreeDef \
                and typing.get_origin(items[0]) is list and all(map(_is_struct, typing.get_args(items[0]) or (None,))):
            return jax.tree_util.tree_flatten(scalar)
    return None


def described_role(annotation: Any) -> tuple | None:
    """("static", the wrapped description) for an annotation ``description`` reads, ("static", an
    empty frozenset) for a set of tags; None for any other. A string annotation (``from
    __future__ import annotations``) is read by its text: ``jax.ShapeDtypeStruct``,
    ``PyTree[jax.ShapeDtypeStruct]``, ``frozenset[...]``."""
    import jax

    if isinstance(annotation, str):
        text = annotation.replace(" ", "")
        found = jax.ShapeDtypeStruct((), "float32") if _STRUCT_TEXT.fullmatch(text) else None
        if found is None and _SET_TEXT.fullmatch(text):
            return ("static", frozenset())
    else:
        found = description(annotation)
    if found is not None:
        return ("static", StaticValue(found))
    if is_set(annotation):
        return ("static", frozenset())
    return None


_STRUCT_TEXT = re.compile(r"(?:jax\.)?ShapeDtypeStruct|(?:\w+\.)?PyTree\[(?:jax\.)?ShapeDtypeStruct\]")
_SET_TEXT = re.compile(r"frozenset(?:\[.*\])?")


def holds_description(values: dict[str, Any]) -> bool:
    """Some parameter's value is a description: its shape is jaxlint's choice, so the findings that
    judge lengths or bytes are left out (``ArgumentSet.chosen_sizes``)."""
    return any(isinstance(value, StaticValue) for value in values.values())


def is_set(annotation: Any) -> bool:
    """``frozenset[X]`` (lineax's ``tags: frozenset[object]``): an empty one, as a class made
    without any (lineax's default ``tags=()``)."""
    return annotation is frozenset or typing.get_origin(annotation) is frozenset


def _is_struct(annotation: Any) -> bool:
    import jax

    if annotation is jax.ShapeDtypeStruct:
        return True
    try:  # a user's annotation object whose __getattr__ raises: no description
        return inspect.getattr_static(annotation, "leaftype", None) is jax.ShapeDtypeStruct
    except Exception:
        return False
