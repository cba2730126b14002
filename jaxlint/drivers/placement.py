"""The placement a ``jax.jit`` gave a call the tests made of its function: its ``in_shardings``
(else the shardings of the committed arrays it was called with), ``out_shardings`` and donation,
read while the jit traced the function (``jit_placement.jit_placement``) and kept per leaf of the call
(watched_calls.py); then the jit the call is traced under again (lint.py), so that its jaxpr and its
compiled program are the sharded ones the test ran, on the test process's devices.

A function a jit reaches through a helper, a scan or a vmap is not traced by that jit directly:
it is kept without a placement, as before.
"""
from __future__ import annotations

import inspect
import re
from dataclasses import dataclass
from types import CodeType, FrameType
from typing import Any, Callable

import jax

from jaxlint.jaxapi import jit_placement, tracers
from jaxlint.worker.frames import parameter_names


@dataclass(frozen=True)
class Placement:
    """A jit's placement of one kept call, per leaf of ``Call.leaves``."""

    in_shardings: tuple[Any, ...]  # a sharding, or None (the jit lets XLA choose; a static leaf)
    donated: tuple[bool, ...]
    out_shardings: Any  # the jit's, a prefix of the function's result; None: not given

    def key(self) -> tuple[Any, ...]:
        """What of it makes another program (part of the call's signature key)."""
        return (tuple(_sharding_key(s) for s in self.in_shardings), self.donated, repr(self.out_shardings))


def call_placement(frame: FrameType, params: list[Any], free_leaves: int) -> Placement | None:
    """The placement of the jit tracing ``frame``'s function, per leaf of ``(params, free)`` (the
    values of its parameters, then ``free_leaves`` leaves of closure cells, never placed); None
    when no jit traces it directly or the jit places nothing."""
    found = jit_placement.jit_placement(frame)
    if found is None:
        return None
    try:
        indices = trace_input_indices(frame.f_code, params, found)
    except Exception:  # noqa: BLE001 - arguments it cannot match: the call is kept unplaced
        return None
    if indices is None:
        return None
    indices += [None] * free_leaves
    in_shardings = tuple(None if i is None else found.in_shardings[i] for i in indices)
    donated = tuple(False if i is None else found.donated[i] for i in indices)
    if all(s is None for s in in_shardings) and not any(donated) and found.out_shardings is None:
        return None
    return Placement(in_shardings, donated, found.out_shardings)


def trace_input_indices(code: CodeType, params: list[Any],
                        found: jit_placement.JitPlacement) -> list[int | None] | None:
    """Per leaf of ``params`` (the values of ``parameter_names(code)`` as the function received
    them), the position among the jit's flattened inputs of the input it came from; None for a
    leaf of a static argument or of a default value. None when they cannot be matched (a static
    argument inside ``*args`` whose value has leaves)."""
    try:
        bound = inspect.signature(found.function).bind(*found.args, **found.kwargs).arguments
    except (TypeError, ValueError):
        return None
    indices: list[int | None] = []
    for name, value in zip(parameter_names(code), params):
        count = len(jax.tree_util.tree_leaves(value, is_leaf=tracers.iterable_leaf))
        shadow = bound.get(name, jit_placement.STATIC)
        if shadow is jit_placement.STATIC:  # static, or a default the jit never saw
            indices += [None] * count
            continue
        marks = jax.tree_util.tree_leaves(shadow, is_leaf=tracers.iterable_leaf)
        if len(marks) != count:
            return None
        indices += [m if type(m) is int else None for m in marks]
    return indices


def placed_jit(apply: Callable[..., list[Any]], placement: Placement, dynamic: list[int], code: CodeType,
               names: list[str], results: list[Any] | None = None) -> Callable[..., Any]:
    """``jax.jit(apply, ...)`` placed as ``placement`` says, ``apply`` taking the leaves of the call
    at ``dynamic`` and returning the array leaves of the function's result; ``results``: that
    result's structure and which of its leaves are arrays (``(treedef, [bool])``), to spread
    ``out_shardings`` over them (without it none are given). The jit's debug info names the
    function of ``code`` and its inputs ``names`` (the rules that name a donated argument)."""
    _name_as(apply, code, names)
    kwargs: dict[str, Any] = {}
    shardings = tuple(placement.in_shardings[i] for i in dynamic)
    if any(s is not None for s in shardings):
        kwargs["in_shardings"] = shardings
    donated = tuple(n for n, i in enumerate(dynamic) if placement.donated[i])
    if donated:
        kwargs["donate_argnums"] = donated
    if results is not None and placement.out_shardings is not None:
        treedef, arrays = results
        spread = jit_placement.broadcast_prefix(placement.out_shardings, jax.tree_util.tree_unflatten(treedef, arrays))
        kwargs["out_shardings"] = [s for s, array in zip(spread, arrays) if array]  # apply returns a list
    return jax.jit(apply, **kwargs)


def _sharding_key(sharding: Any) -> Any:
    try:
        hash(sharding)
        return sharding
    except TypeError:
        return repr(sharding)


def leaf_names(code: CodeType, treedef: Any, count: int) -> list[str]:
    """An identifier per leaf of a call's ``(params, free)``: the parameter's name, with the
    leaf's path in it when it has several (``state_w``), ``closure_N`` for a closure's leaves."""
    marks = jax.tree_util.tree_unflatten(treedef, list(range(count)))
    names = [""] * count
    for name, value in [*zip(parameter_names(code), marks[0]), *(("closure", v) for v in marks[1])]:
        paths = jax.tree_util.tree_flatten_with_path(value)[0]
        for path, index in paths:
            suffix = re.sub(r"\W+", "_", jax.tree_util.keystr(path)).strip("_")
            names[index] = f"{name}_{suffix}" if suffix and (len(paths) > 1 or name == "closure") else name
    seen: set[str] = set()
    for index, name in enumerate(names):  # unique, as a signature's parameters must be
        names[index] = name if name not in seen else f"{name}_{index}"
        seen.add(names[index])
    return names


def argument_paths(code: CodeType, treedef: Any, count: int, dynamic: list[int]) -> list[str]:
    """The path of each leaf at ``dynamic`` as JAX names a jitted function's inputs: the
    parameter's name and the leaf's place in it (``state[0]``, ``params['w']``); ``<closure>...``
    for a closure's leaves. The re-trace's own jit takes the leaves one by one (``values[0]``),
    which names nothing a rule reads in the source (JX206 follows a parameter to its output)."""
    marks = jax.tree_util.tree_unflatten(treedef, list(range(count)))
    paths = [""] * count
    for name, value in [*zip(parameter_names(code), marks[0]), *(("<closure>", v) for v in marks[1])]:
        for path, index in jax.tree_util.tree_flatten_with_path(value)[0]:
            paths[index] = name + jax.tree_util.keystr(path)
    return [paths[i] for i in dynamic]


def result_paths(results: list[Any]) -> list[str | None] | None:
    """The path of each array leaf of the function's result (``""`` for a single array, ``[1]``
    for a tuple's second), as JAX names a jitted function's outputs; ``results`` is the
    re-trace's record of the result (``(treedef, [is an array])``), None when it has none."""
    if len(results) != 2:
        return None
    treedef, arrays = results
    marks = jax.tree_util.tree_unflatten(treedef, list(range(len(arrays))))
    paths: list[str] = [""] * len(arrays)
    for path, index in jax.tree_util.tree_flatten_with_path(marks)[0]:
        paths[index] = jax.tree_util.keystr(path)
    return [path for path, array in zip(paths, arrays) if array]


class _Source:
    """What JAX reads of a function for its debug info (``fun_sourceinfo``): name and code."""

    def __init__(self, code: CodeType) -> None:
        self.__code__, self.__name__ = code, code.co_name


def _name_as(apply: Callable[..., Any], code: CodeType, names: list[str]) -> None:
    # JAX follows __wrapped__ for the function's name and line; a __signature__ stops
    # inspect.signature there, so the arguments stay apply's own, named ``names``.
    apply.__signature__ = inspect.Signature(  # type: ignore[attr-defined]
        [inspect.Parameter(n, inspect.Parameter.POSITIONAL_ONLY) for n in names])
    apply.__wrapped__ = _Source(code)  # type: ignore[attr-defined]
