"""What kind of value a parameter holds, read from how the function's body uses it: the value a
suggested hint comment gives it (--show-untraced). Never imports JAX or the user's code.

A parameter used as a size (``range(n)``, an element of a shape tuple, a slice bound, shape
arithmetic) is an integer; one tested by ``if``/``while``/``and``/``not`` a boolean; one passed as
the key of a ``jax.random`` function a PRNG key; one indexed by strings (``params["w"]``), unpacked
(``x, y = batch``), read by attribute (``state.step``) or handed to ``jax.tree`` functions a
pytree; one passed to a JAX function or used in arithmetic an array. A parameter no use speaks
for is absent from the answer: the suggestion says its type is unknown rather than guess.
"""
from __future__ import annotations

import ast
from dataclasses import dataclass, field

from jaxlint.scan.index import SourceIndex

# Attributes and methods of jax.Array: reading one says the parameter is an array.
ARRAY_ATTRIBUTES = frozenset({
    "T", "mT", "at", "dtype", "shape", "ndim", "size", "real", "imag", "astype", "reshape", "ravel", "flatten",
    "squeeze", "transpose", "swapaxes", "sum", "mean", "max", "min", "prod", "std", "var", "argmax", "argmin",
    "cumsum", "clip", "round", "dot", "conj", "all", "any", "item", "tolist", "block_until_ready", "sort",
    "argsort", "take", "nbytes", "itemsize", "sharding", "device", "devices", "copy", "view", "repeat"})
# jax.random functions whose first argument is a seed (an integer), not a key.
_SEEDED = frozenset({"jax.random.key", "jax.random.PRNGKey", "jax.random.wrap_key_data"})
# jax.numpy constructors whose first argument is a shape or a size.
_SIZED = frozenset({"zeros", "ones", "empty", "full", "arange", "eye", "identity", "tri", "linspace",
                    "indices"})
_TREE_MODULES = ("jax.tree.", "jax.tree_util.")
# Strongest evidence first: a key passed to arithmetic stays a key, a pytree passed to jnp stays one.
_ORDER = ("function", "key", "pytree", "int", "bool", "array")


@dataclass
class ParameterUse:
    """What the body says of one parameter: its kind and, for a pytree, how it is built."""

    kind: str  # one of _ORDER; report/suggestion.py adds "default", "float" and "unknown"
    keys: list[str] = field(default_factory=list)  # a dict read as p["a"], p["b"]: its keys
    unpacked: int = 0  # a tuple unpacked as `a, b = p`: its length
    attributes: list[str] = field(default_factory=list)  # an object read as p.step: its attributes


def parameter_uses(index: SourceIndex, function: ast.FunctionDef | ast.AsyncFunctionDef,
                   depth: int = 0) -> dict[str, ParameterUse]:
    """Per parameter of ``function`` that its body uses tellingly, how (see the module's docstring).
    An argument passed on to another def of the file (directly or through a transform,
    ``jax.grad(loss)(params, batch)``) is used as that def uses its parameter, ``depth`` defs deep."""
    params = {a.arg for a in (*function.args.posonlyargs, *function.args.args, *function.args.kwonlyargs)}
    loads = sorted((node for statement in function.body for node in ast.walk(statement)
                    if isinstance(node, ast.Name) and node.id in params and isinstance(node.ctx, ast.Load)),
                   key=lambda node: (node.lineno, node.col_offset))
    evidence: dict[str, set[str]] = {}
    pytrees: dict[str, ParameterUse] = {}
    for node in loads:
        kind = _use(index, node, pytrees.setdefault(node.id, ParameterUse("pytree")), depth)
        if kind is not None:
            evidence.setdefault(node.id, set()).add(kind)
    uses = {}
    for name, kinds in evidence.items():
        kind = next(k for k in _ORDER if k in kinds)
        uses[name] = pytrees[name] if kind == "pytree" else ParameterUse(kind)
    return uses


def _use(index: SourceIndex, name: ast.Name, tree: ParameterUse, depth: int) -> str | None:
    """The kind one load of a parameter says it has (recording a pytree's shape in ``tree``)."""
    parent = index.parent(name)
    if isinstance(parent, ast.Subscript) and parent.value is name:
        if isinstance(parent.slice, ast.Constant) and isinstance(parent.slice.value, str):
            if parent.slice.value not in tree.keys:
                tree.keys.append(parent.slice.value)
            return "pytree"
        return "array"
    if isinstance(parent, ast.Attribute):
        if parent.attr in ARRAY_ATTRIBUTES:
            return "array"
        if not parent.attr.startswith("_") and parent.attr not in tree.attributes:
            tree.attributes.append(parent.attr)
        return "pytree"
    if isinstance(parent, (ast.If, ast.While, ast.IfExp)) and parent.test is name:
        return "bool"
    if isinstance(parent, ast.BoolOp) or (isinstance(parent, ast.UnaryOp) and isinstance(parent.op, ast.Not)):
        return "bool"
    if isinstance(parent, ast.Slice):
        return "int"
    if isinstance(parent, ast.Assign) and parent.value is name and isinstance(parent.targets[0], (ast.Tuple, ast.List)):
        tree.unpacked = max(tree.unpacked, len(parent.targets[0].elts))
        return "pytree"
    if isinstance(parent, ast.BinOp):
        other = parent.right if parent.left is name else parent.left
        return "int" if _size_like(other) else "array"
    if isinstance(parent, ast.Tuple):
        return _element_use(index, parent)
    if isinstance(parent, ast.Call):
        passed = _passed_on(index, parent, name, depth)
        if passed is not None:
            tree.keys += [key for key in passed.keys if key not in tree.keys]
            tree.attributes += [a for a in passed.attributes if a not in tree.attributes]
            tree.unpacked = max(tree.unpacked, passed.unpacked)
            return passed.kind
        return _argument_use(index, parent, name)
    if isinstance(parent, ast.keyword) and isinstance(index.parent(parent), ast.Call):
        call = index.parent(parent)
        if parent.arg == "key" and any(n.startswith("jax.random.") for n in index.call_names(call)):
            return "key"
        if parent.arg in ("shape", "num", "length", "axis", "size"):
            return "int"
        return "array" if _is_jax_call(index, call) else None
    return None


def _argument_use(index: SourceIndex, call: ast.Call, name: ast.Name) -> str | None:
    """The kind a call says its argument ``name`` has (``name`` may be the called function)."""
    if call.func is name:
        return "function"
    if isinstance(call.func, ast.Name) and call.func.id == "range":
        return "int"
    names = index.call_names(call)
    first = bool(call.args) and call.args[0] is name
    if names & _SEEDED:
        return "int" if first else None
    if any(n.startswith("jax.random.") for n in names):
        return "key" if first else "int"  # after the key: a shape or a count
    if any(n.startswith(_TREE_MODULES) for n in names):
        mapping = any("map" in n.rpartition(".")[2] for n in names)
        return "function" if first and mapping else "pytree"  # tree_map(f, tree, ...)
    if first and _sized(names):
        return "int"
    if isinstance(call.func, ast.Attribute) and call.func.attr == "reshape":
        return "int"
    return "array" if _is_jax_call(index, call) else None


_DEPTH = 3  # defs followed from the function whose parameters are asked about


def _passed_on(index: SourceIndex, call: ast.Call, name: ast.Name, depth: int) -> ParameterUse | None:
    """How the def of this file that ``call`` calls (``loss(p, b)`` or ``jax.grad(loss)(p, b)``)
    uses the parameter ``name`` is passed to, if it says."""
    if depth >= _DEPTH or name not in call.args:
        return None
    func = call.func
    if isinstance(func, ast.Call) and func.args and _is_jax_call(index, func):
        func = func.args[0]  # the function a transform was applied to
    if not isinstance(func, ast.Name):
        return None
    callee = module_defs(index).get(func.id)
    if callee is None:
        return None
    position = call.args.index(name)
    if any(isinstance(a, ast.Starred) for a in call.args[:position + 1]):
        return None
    positional = [*callee.args.posonlyargs, *callee.args.args]
    if position >= len(positional):
        return None
    return parameter_uses(index, callee, depth + 1).get(positional[position].arg)


def module_defs(index: SourceIndex) -> dict[str, ast.FunctionDef | ast.AsyncFunctionDef]:
    """The module-level defs by name (the last def of a name, as Python binds it)."""
    tree = index.tree
    return index.memo("module-defs", lambda: {} if tree is None else {
        n.name: n for n in tree.body if isinstance(n, (ast.FunctionDef, ast.AsyncFunctionDef))})


def _element_use(index: SourceIndex, elements: ast.Tuple) -> str | None:
    """An element of a tuple: a size when the tuple is a shape (``jnp.zeros((n, 3))``,
    ``jax.random.normal(key, (n,))``, ``shape=(n,)``, ``x.reshape((n, -1))``)."""
    holder = index.parent(elements)
    if isinstance(holder, ast.keyword):
        return "int" if holder.arg == "shape" else None
    if not isinstance(holder, ast.Call):
        return None
    names = index.call_names(holder)
    if _sized(names) or any(n.startswith("jax.random.") for n in names) or (
            isinstance(holder.func, ast.Attribute) and holder.func.attr in ("reshape", "broadcast_to")):
        return "int"
    return "array" if _is_jax_call(index, holder) else None


def _sized(names: frozenset[str]) -> bool:
    """A jax.numpy constructor whose first argument is a shape or a size."""
    return any(n.startswith("jax.numpy.") and n.rpartition(".")[2] in _SIZED for n in names)


def _is_jax_call(index: SourceIndex, call: ast.Call) -> bool:
    """A call into jax, or of what a jax transform returned (``jax.vmap(f)(x)``)."""
    if any(n == "jax" or n.startswith("jax.") for n in index.call_names(call)):
        return True
    return isinstance(call.func, ast.Call) and _is_jax_call(index, call.func)


def _size_like(node: ast.expr) -> bool:
    """``x.shape[0]``, ``x.ndim``, ``len(x)``: an operand that makes arithmetic shape arithmetic."""
    for inner in ast.walk(node):
        if isinstance(inner, ast.Attribute) and inner.attr in ("shape", "ndim", "size"):
            return True
        if isinstance(inner, ast.Call) and isinstance(inner.func, ast.Name) and inner.func.id == "len":
            return True
    return False
