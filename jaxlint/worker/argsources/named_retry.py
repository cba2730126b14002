"""The retry of an inferred rung whose error names one of its values (issue 48): a check in the
user's own code that refuses a shape says which argument it refuses, by name (distrax's
``HMM.__init__``: ``trans_dist should have batch shape of (n,) equal to the number of latent
states in the model, but its batch shape is ()``). Where a rung fails with a message that names,
as a whole word, exactly one of the signature's parameters that hold guessed arrays, or exactly
one field of a built instance it passes (a method's ``self``, a parameter's instance) that does,
that value's arrays get one rank more (a built instance in it made again from its raised
fields) and the rung is traced once more. rank_retry.py asks it where its own errors do not
apply; its one retry per rung holds for both. A name the message does not contain, or two names,
keep the rung's failure."""
from __future__ import annotations

import dataclasses
import re
from typing import Any, Callable

from jaxlint.worker import built_instances
from jaxlint.worker.argsources import ArgumentSet
from jaxlint.worker.argsources.inferred import MAX_BODY_RANK as MAX_RANK  # never raised past it
from jaxlint.worker.errors import error_text


def raised(arguments: ArgumentSet, error: BaseException, raisable: Callable[[Any], bool],
           changed: Callable[[Any, int], Any]) -> ArgumentSet | None:
    """``arguments`` with the one value ``error``'s message names raised by a rank, or None.
    ``raisable``: whether a leaf is a guessed array; ``changed(leaf, rank)``: it at that rank."""
    message = error_text(error)
    candidates: dict[str, tuple[str, str | None]] = {}  # a name -> (parameter, its field or None)
    for name, value in arguments.kwargs.items():
        if _holds(value, raisable):
            candidates[name] = (name, None)
        for field, field_value in _fields(value).items():
            if _holds(field_value, raisable) and field not in candidates:
                candidates[field] = (name, field)
    named = [name for name in candidates if re.search(rf"(?<![\w.]){re.escape(name)}(?!\w)", message)]
    if len(named) != 1:
        return None
    parameter, field = candidates[named[0]]
    value = arguments.kwargs[parameter]
    if field is None:
        new = _raised(value, raisable, changed)
    else:
        fields = {**_fields(value), field: _raised(_fields(value)[field], raisable, changed)}
        new = _with_fields(value, fields)
    if new is None:
        return None
    return dataclasses.replace(arguments, kwargs={**arguments.kwargs, parameter: new})


def _fields(value: Any) -> dict[str, Any]:
    """The field values of an instance jaxlint built (made in the trace, or passed as it is); {} else."""
    if isinstance(value, built_instances.InstanceFields):
        return value.values
    made = built_instances.maker(value)
    return made[1] if made is not None else {}


def _with_fields(value: Any, fields: dict[str, Any]) -> Any:
    """The instance ``value`` stands for, made again with ``fields``; None where it cannot be."""
    if isinstance(value, built_instances.InstanceFields):
        return built_instances.InstanceFields(value.owner, fields, value.make)
    made = built_instances.maker(value)
    return None if made is None else built_instances.remade(made[0], fields)


def _holds(value: Any, raisable: Callable[[Any], bool]) -> bool:
    import jax

    return any(raisable(leaf) and len(leaf.shape) < MAX_RANK for leaf in jax.tree_util.tree_leaves(value))


def _raised(value: Any, raisable: Callable[[Any], bool], changed: Callable[[Any, int], Any]) -> Any:
    """``value`` with each guessed array one rank more (up to MAX_RANK); an instance built in it
    made again from its raised fields."""
    import jax

    is_leaf = lambda v: built_instances.maker(v) is not None  # noqa: E731

    def one(leaf: Any) -> Any:
        if built_instances.maker(leaf) is not None:
            return _with_fields(leaf, {name: _raised(v, raisable, changed) for name, v in _fields(leaf).items()})
        if raisable(leaf) and len(leaf.shape) < MAX_RANK:
            return changed(leaf, len(leaf.shape) + 1)
        return leaf

    try:
        return jax.tree_util.tree_map(one, value, is_leaf=is_leaf)
    except Exception:  # a user's pytree that refuses other leaves, a maker that refuses them
        return None
