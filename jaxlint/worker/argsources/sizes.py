"""Sizes, index arrays and shapes for inferred arguments (inferred.py's ladder), by a parameter's
name and annotation:

- a function whose parameters are all sizes (``int``, ``bool``, a shape) is traced with concrete
  sizes, every ``int`` 8 (``_eig_state_init(num_dim=8)``): it makes arrays of them. Its values
  are then all constants of jaxlint's choosing, so the trace is marked ``constant``: the function
  counts as linted only where its own lines made an operation (one that returns Python values
  only is counted "no-operations"), and its findings about lengths or bytes are left out
  (``SIZE_JUDGING_CODES``);
- a parameter without an annotation named like a count (``num_*``, ``n_*``, ``*_steps``,
  ``*_dim``) is a static int, as an ``int`` annotation's;
- an array parameter or field named like an index (``idx``, ``*_idx``, ``indices``,
  ``*_indices``) or like lengths (``lengths``, ``*_lengths``) is an i32 array: jax_md's ``NeighborList.idx`` indexes other arrays, which a
  float array cannot;
- a parameter named like an axis (``axis``, ``axes``, ``*_axis``, ``*_axes``) annotated with a
  union of an int and a sequence of ints (flax's ``Axes = Union[int, Sequence[int]]``) is the
  static axis ``-1``: the last axis, which every array of rank 1 or more has (an ``int`` alone stays
  2, as every ``int``);
- a parameter or field named like a shape (``shape``, ``*_shape``), without an annotation or
  annotated as a tuple of ints, is the concrete shape ``(8,)``: flax's
  ``initialize_carry(rng, input_shape: tuple[int, ...])``.

This module holds the rules by name; inferred.py applies them.
"""
from __future__ import annotations

import re
from typing import Any

SIZE = 8  # the ladder's concrete size (trace.CONCRETE_SIZE): every int of a size-only function
SHAPE = (SIZE,)
INDEX_ROLE = "int-array"  # an i32 array of the rung's rank (instances.py's role of the same name)
# Lengths (``seq_lengths``) count items: integers, which index (``x[seq_lengths - 1]``) as indices do.
_INDEX_NAME = re.compile(r"idx|indices|\w+_idx|\w+_indices|lengths|\w+_lengths")
_SHAPE_NAME = re.compile(r"shape|\w+_shape")
_SHAPE_ANNOTATIONS = re.compile(r"(?:tuple|Tuple|Sequence)(?:\[int(?:, \.\.\.)?\])?")
_FLOAT_WORDS = ("Float", "float", "Complex", "Inexact")
_AXIS_NAME = re.compile(r"axis|axes|\w+_axis|\w+_axes")
_INTS = r"(?:Sequence|Tuple|tuple|List|list|Iterable|Collection)\[int(?:, \.\.\.)?\]"
_AXIS_UNION = re.compile(rf"Union\[int, {_INTS}\]|Union\[{_INTS}, int\]|int \| {_INTS}|{_INTS} \| int")
LAST_AXIS = -1
_COUNT_NAME = re.compile(r"(?:num|n)_\w+|\w+_(?:steps|dim|dims)|steps|dim")


def index_role(name: str, annotation_text: str) -> str | None:
    """INDEX_ROLE for an array parameter named like an index, unless its annotation says float."""
    if _INDEX_NAME.fullmatch(name.lower()) and not any(word in annotation_text for word in _FLOAT_WORDS):
        return INDEX_ROLE
    return None


def shape_role(name: str, annotation_text: str) -> tuple | None:
    """("static", SHAPE) for a parameter named like a shape, without an annotation or annotated as
    a tuple (of ints); None else (a class: ``shape: Shape`` may be a geometric one)."""
    if not _SHAPE_NAME.fullmatch(name.lower()):
        return None
    if annotation_text and not _SHAPE_ANNOTATIONS.fullmatch(annotation_text.replace("typing.", "")):
        return None
    return ("static", SHAPE)


def axis_role(name: str, annotation_text: str) -> tuple | None:
    """("static", LAST_AXIS) for a parameter named like an axis and annotated as an int or a
    sequence of ints (``axes: Union[int, Sequence[int]]``, ``int | tuple[int, ...]``): one axis, the
    last, is valid for any rank the ladder gives from 1 on. None else."""
    text = annotation_text.replace("typing.", "").replace("collections.abc.", "")
    if _AXIS_NAME.fullmatch(name.lower()) and _AXIS_UNION.fullmatch(text):
        return ("static", LAST_AXIS)
    return None


def size_only(roles: dict[str, Any]) -> dict[str, Any] | None:
    """The values of a size-only function's parameters (every int SIZE), or None when some
    parameter is not a size (a string's, an object's static value) or none is an int or a shape:
    a function of flags alone, or of nothing, is not traced so."""
    if not roles or any(not (isinstance(kind, tuple) and kind[0] == "static") for kind in roles.values()):
        return None
    values = {name: kind[1] for name, kind in roles.items()}
    if any(type(value) not in (int, bool) and value != SHAPE for value in values.values()):
        return None
    if all(type(value) is bool for value in values.values()):
        return None
    # An axis keeps its value: it indexes the arrays' dimensions, it sizes none.
    return {name: SIZE if type(value) is int and value != LAST_AXIS else value for name, value in values.items()}


def count_role(name: str, annotation_text: str) -> tuple | None:
    """("static", 2), as an ``int`` annotation's, for a parameter without an annotation named like
    a count (``num_*``, ``n_*``, ``*_steps``, ``*_dim``): a float array cannot size an array or bound
    a loop. Not ``*_size`` (``step_size`` is a float), ``*_length``, nor ``count`` (optax's schedules
    take the step counter, an array: ``schedule(count)``)."""
    if not annotation_text and _COUNT_NAME.fullmatch(name.lower()):
        return ("static", 2)
    return None


# Findings about lengths, bytes or padding: in a trace of constants alone (a size-only function)
# the sizes they judge are the ones jaxlint chose (JX503: `jnp.eye(num_dim)[10]` is out of bounds
# at num_dim=8, not at the user's 16), so they are left out, never reported.
SIZE_JUDGING_CODES = frozenset({"JX301", "JX311", "JX312", "JX503"})


def judges_chosen_sizes(code: str) -> bool:
    """A finding of ``code`` in a constant trace judges sizes jaxlint chose: left out."""
    return code in SIZE_JUDGING_CODES
