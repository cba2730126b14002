"""Parameters that take a pytree, by their name (``tree``, ``params``, ``updates``, ``*_tree``)
or their annotation (``Any``, equinox's and jaxtyping's ``PyTree``): the ladder (inferred.py)
gives each a one-leaf pytree, an f32 array of the rung's rank, since an array is a pytree
(``jax.tree_util.tree_map(f, x)`` on it is ``f(x)``). The signature says so: ``tree=f32[n] (a
one-leaf pytree)``.

A body that reads attributes of it alone (``state.position``) gets a made-up object with those
attributes instead (made_up.py, which inferred.by_use asks first). A body that needs the pytree's
structure otherwise (indexes ``params["w"]`` or ``state[0]``, unpacks ``a, b = tree``, loops over
it, calls it, reads ``params.keys()``) would only fail with a leaf: the parameter is not guessed,
and the reason says what the body does with it. A name that says a function or an object
(``fn``, ``model``, ``kernel``, ``step``, ``init``) is no pytree here.
"""
from __future__ import annotations

import ast
import functools
import re

# Names of parameters that take a pytree of arrays (parameters, updates, gradients, a tree).
PYTREE_NAMES = frozenset({"tree", "pytree", "params", "init_params", "updates", "grads", "state", "opt_state"})
PYTREE_SUFFIXES = ("_tree", "_params", "_state")
PYTREE_ANNOTATIONS = frozenset({"Any", "PyTree", "PyTree[Any]"})
_TYPING_ANY = re.compile(r"(?:\w+\.)?Any")


def takes_pytree(name: str, annotation_text: str, opaque_name: bool) -> bool:
    """A parameter that says it takes a pytree: by its name, or by its annotation, ``PyTree``, or
    ``Any`` where its name says nothing else (``dtype: Any``, ``fn: Any`` are no pytrees;
    ``opaque_name``: the name says a function, pytree or object)."""
    by_name = named_pytree(name)
    if not annotation_text:
        return by_name
    if _TYPING_ANY.fullmatch(annotation_text):  # ``Any``, ``typing.Any``, ``tp.Any`` (``import typing as tp``)
        return by_name or not opaque_name
    return annotation_text in PYTREE_ANNOTATIONS


def named_pytree(name: str) -> bool:
    """A name that says pytree (``params``, ``*_state``)."""
    name = name.lower()
    return name in PYTREE_NAMES or name.endswith(PYTREE_SUFFIXES)


def structure_needed(definition: ast.AST | None, names: list[str]) -> str | None:
    """Why one of ``names`` (parameters guessed as one-leaf pytrees) cannot be a leaf, by how the
    body of ``definition`` uses it: ``parameter state (a pytree: its code reads state.position)``;
    None where nothing says so (the trace then tells)."""
    if definition is None or not names:
        return None
    for node in ast.walk(definition):
        for name in names:
            use = _structural_use(node, name)
            if use is not None:
                return f"parameter {name} (a pytree: its code {use}, which a one-leaf pytree has not)"
    return None


def _structural_use(node: ast.AST, name: str) -> str | None:
    if isinstance(node, ast.Attribute) and _is(node.value, name) and node.attr not in _array_attributes():
        return f"reads {name}.{node.attr}"
    if isinstance(node, ast.Subscript) and _is(node.value, name) and isinstance(node.slice, ast.Constant) \
            and type(node.slice.value) in (str, int):  # a dict's key, a tuple's or list's item
        return f"indexes {name}[{node.slice.value!r}]"
    if isinstance(node, ast.Assign) and isinstance(node.targets[0], (ast.Tuple, ast.List)) and _is(node.value, name):
        return f"unpacks {name}"
    if isinstance(node, (ast.For, ast.comprehension)) and _is(node.iter, name):
        return f"iterates over {name}"
    if isinstance(node, ast.Call) and _is(node.func, name):
        return f"calls {name}"
    if isinstance(node, ast.Starred) and _is(node.value, name):
        return f"unpacks *{name}"
    if isinstance(node, ast.keyword) and node.arg is None and _is(node.value, name):
        return f"unpacks **{name}"
    return None


def _is(node: ast.AST, name: str) -> bool:
    return isinstance(node, ast.Name) and node.id == name


@functools.cache
def _array_attributes() -> frozenset[str]:
    import jax

    return frozenset(dir(jax.Array))
