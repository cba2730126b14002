"""What kind of value a function is handed while JAX runs it: a tracer, staged (under jit) or
differentiated, an array, a function jax.jit made, an iterator JAX keeps as a pytree leaf."""
from __future__ import annotations

import collections.abc
from typing import Any

import jax
import numpy as np

_ITERABLE_LEAVES: dict[type, bool] = {}  # type -> whether iterable_leaf holds for its instances


def iterable_leaf(value: Any) -> bool:
    """Whether ``value`` is a builtin iterator or a dict's values view (a generator, ``map``,
    ``zip``, ``iter(list)``): JAX keeps it as a leaf, and newer releases warn that they do (0.10.2
    does, 0.4.35 does not): "Python iterable type 'generator' is treated as a leaf in PyTree".
    jaxlint flattens the tests' values with ``is_leaf=iterable_leaf``: the same leaves, and no
    warning in the user's test. Not ``warnings.catch_warnings``: entering it clears what each
    module has shown once, so a test's own warning raised on each step would be shown again."""
    kind = type(value)
    known = _ITERABLE_LEAVES.get(kind)
    if known is None:  # builtins only: a project's own iterator may be a registered pytree node
        known = _ITERABLE_LEAVES[kind] = kind.__module__ == "builtins" and \
            issubclass(kind, (collections.abc.Iterator, collections.abc.ValuesView))
    return known


def array_types() -> tuple[type, ...]:
    return (jax.Array, np.ndarray, np.generic, jax.ShapeDtypeStruct)


def is_tracer(value: Any) -> bool:
    return isinstance(value, jax.core.Tracer)


def is_staged(value: Any) -> bool:
    """A tracer of a jit-like trace (jit, scan or cond bodies, make_jaxpr), directly or under a
    vmap or JVP tracer: the function holding it runs as compiled code. By class name: the class
    is private and moved between versions (a BatchTracer's ``val``, a JVPTracer's ``primal``)."""
    for _ in range(8):
        if not is_tracer(value):
            return False
        if type(value).__name__ == "DynamicJaxprTracer":
            return True
        value = getattr(value, "val", getattr(value, "primal", None))
    return False


def is_differentiated(value: Any) -> bool:
    """A JVP or linearize tracer (``jax.grad``, ``jvp``, ``vjp``), directly or under other
    tracers: the function holding it is being differentiated. By class name, as ``is_staged``."""
    for _ in range(8):
        if not is_tracer(value):
            return False
        if type(value).__name__ in ("JVPTracer", "LinearizeTracer"):
            return True
        value = getattr(value, "val", getattr(value, "primal", None))
    return False


def under_jit() -> bool:
    """Whether a jit is being traced here: a miss of an inner jit is traced into the outer
    function's program, not compiled on its own."""
    from jax._src import core

    return core.unsafe_am_i_under_a_jit()


def is_jitted(value: Any) -> bool:
    """A function ``jax.jit`` made (``PjitFunction``, in jaxlib in every supported version)."""
    return type(value).__name__ == "PjitFunction" and type(value).__module__.startswith("jaxlib")
