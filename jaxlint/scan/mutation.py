"""Whether a loop changes in place an object that a function made in the loop reads (JX203: a
jitted lambda hoisted out of the loop would be traced once and keep what it read the first time).

Three answers, so that a message claims a change only where the source shows one:

- certain: the loop sets or deletes an item or attribute of it (``hp[0] = lr``, ``opt.lr *= 0.9``,
  ``del cache[k]``, ``setattr(opt, "lr", lr)``) or calls one of the mutating methods of Python's
  containers or NumPy arrays on it (``hp.append(lr)``, ``buf.fill(0)``);
- possible: it passes the object to a call jaxlint cannot see into (``decay(hp, step)``) or calls
  another method on it (``sched.step()``, ``tx.update(...)``: optax's is pure, a dict's is not);
- none: everything else, including reading methods (``x.sum()``, ``hp.get("lr")``), JAX's functions
  (``jnp.mean(x)``: JAX never changes its arguments), NumPy's and ``math``'s but the few that write
  into an argument (``np.copyto``: certain), builtins that only read (``print(x)``,
  ``len(hp)``), ``.at[...]`` updates (new arrays), and calls of jitted functions (jit flattens its
  arguments: the function sees new containers).
"""
from __future__ import annotations

import ast
from dataclasses import dataclass
from typing import Callable

from jaxlint.scan.index import SourceIndex
from jaxlint.scan.names import root_name

# Methods of list, dict, set, bytearray and numpy.ndarray that change the object.
MUTATING_METHODS = frozenset({
    "append", "extend", "insert", "remove", "pop", "popitem", "clear", "setdefault", "sort", "reverse",
    "discard", "difference_update", "intersection_update", "symmetric_difference_update",
    "fill", "put", "resize", "itemset", "partition", "__setitem__", "__delitem__"})
# Methods of arrays, containers and strings that only read the object.
READING_METHODS = frozenset({
    "sum", "mean", "max", "min", "std", "var", "prod", "argmax", "argmin", "all", "any", "astype",
    "reshape", "ravel", "flatten", "transpose", "squeeze", "copy", "item", "tolist", "tobytes", "view",
    "conj", "round", "clip", "dot", "cumsum", "cumprod", "nonzero", "block_until_ready",
    "get", "keys", "values", "items", "count", "index", "startswith", "endswith", "split", "join",
    "format", "strip", "lower", "upper", "replace", "__len__", "__getitem__", "__contains__"})
# Builtins that never change their arguments (``next`` advances an iterator: not here).
READING_BUILTINS = frozenset({
    "abs", "all", "any", "ascii", "bin", "bool", "bytes", "callable", "chr", "complex", "dict", "dir",
    "divmod", "enumerate", "filter", "float", "format", "frozenset", "getattr", "hasattr", "hash", "hex",
    "id", "int", "isinstance", "issubclass", "iter", "len", "list", "map", "max", "min", "oct", "ord",
    "pow", "print", "range", "repr", "reversed", "round", "set", "slice", "sorted", "str", "sum", "tuple",
    "type", "vars", "zip"})
MUTATING_BUILTINS = frozenset({"setattr", "delattr"})
# The NumPy functions that write into their first argument; NumPy's others and math's only read.
MUTATING_NUMPY = frozenset({
    "numpy.copyto", "numpy.put", "numpy.place", "numpy.putmask", "numpy.fill_diagonal",
    "numpy.put_along_axis", "numpy.random.shuffle"})


@dataclass(frozen=True)
class InPlaceChange:
    """How the loop changes (``certain``) or may change one object a function reads."""

    name: str
    certain: bool
    line: int
    how: str  # "sets `hp[0]`", "calls `hp.append()`", "passes `hp` to `decay()`"


def in_place_changes(index: SourceIndex, loop: ast.AST, names: set[str], outside: ast.AST,
                     jitted: set[str]) -> dict[str, InPlaceChange]:
    """Name -> the loop's first certain change of its object, else its first possible one, for
    those of ``names`` the loop (outside the node ``outside``) changes or may change in place.
    ``index``: the file's SourceIndex (its resolved call names and imports); ``jitted``: names of
    the file's jitted functions."""
    skipped = {id(n) for n in ast.walk(outside)}
    modules = index.module_names
    found: dict[str, InPlaceChange] = {}

    def note(name: str | None, certain: bool, node: ast.AST, how: str) -> None:
        if name not in names or name in modules:
            return
        change = InPlaceChange(name, certain, getattr(node, "lineno", 0), how)
        old = found.get(name)
        if old is None or (certain, -change.line) > (old.certain, -old.line):
            found[name] = change

    for node in ast.walk(loop):
        if id(node) in skipped:
            continue
        if isinstance(node, (ast.Subscript, ast.Attribute)) and not isinstance(node.ctx, ast.Load):
            verb = "deletes" if isinstance(node.ctx, ast.Del) else "sets"
            note(root_name(node), True, node, f"{verb} `{_short(node)}`")
        elif isinstance(node, ast.Call):
            _call(index, node, jitted, note)
    return found


Note = Callable[[str | None, bool, ast.AST, str], None]


def _call(index: SourceIndex, call: ast.Call, jitted: set[str], note: Note) -> None:
    func = call.func
    if isinstance(func, ast.Attribute) and not index.module_like(func):
        owner = root_name(func)
        if _at_update(func) or func.attr in READING_METHODS:
            return
        certain = func.attr in MUTATING_METHODS
        note(owner, certain, call, f"calls `{_short(func)}()`")
        if certain:
            return  # list.append(x) stores x; it does not change it
    names = index.call_names(call)
    if any(n == "jax" or n.startswith("jax.") for n in names):
        return  # JAX's functions return new values; jax.jit(f)(x) flattens x
    if names & MUTATING_NUMPY and call.args:
        note(root_name(call.args[0]), True, call, f"calls `{_short(func)}()` on `{_short(call.args[0])}`")
        return
    if names and all(n.startswith(("numpy.", "math.")) for n in names):
        return
    if isinstance(func, ast.Call) and "jax.jit" in index.call_names(func):
        return
    if isinstance(func, ast.Name) and func.id in jitted:
        return
    if isinstance(func, ast.Name) and not names:  # not bound in the file: a builtin
        if func.id in READING_BUILTINS:
            return
        if func.id in MUTATING_BUILTINS and call.args:
            note(root_name(call.args[0]), True, call, f"calls `{func.id}()` on `{_short(call.args[0])}`")
            return
    callee = _short(func)
    for argument in [*call.args, *(k.value for k in call.keywords)]:
        for passed in _passed(argument):
            note(root_name(passed), False, call, f"passes `{_short(passed)}` to `{callee}()`")


def _passed(argument: ast.expr) -> list[ast.expr]:
    """The objects an argument hands the callee: a name or a part of one (``hp``, ``hp["a"]``,
    ``opt.state``), also inside a literal list, tuple, set or dict; not the result of an
    expression computed from them (``x * 2``), nor of a call (looked at as a call of its own)."""
    if isinstance(argument, ast.Starred):
        return _passed(argument.value)
    if isinstance(argument, (ast.List, ast.Tuple, ast.Set)):
        return [p for element in argument.elts for p in _passed(element)]
    if isinstance(argument, ast.Dict):
        return [p for value in argument.values for p in _passed(value)]
    node = argument
    while isinstance(node, (ast.Attribute, ast.Subscript)):
        node = node.value
    return [argument] if isinstance(node, ast.Name) else []


def _at_update(func: ast.Attribute) -> bool:
    """``x.at[i].set(v)``: JAX's functional update, a new array."""
    value = func.value
    return isinstance(value, ast.Subscript) and isinstance(value.value, ast.Attribute) and value.value.attr == "at"


def _short(node: ast.AST) -> str:
    text = ast.unparse(node)
    return text if len(text) <= 40 else text[:37] + "..."
