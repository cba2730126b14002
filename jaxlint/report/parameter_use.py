"""What kind of value a parameter holds, read from how the function's body uses it: the value a
suggested hint comment gives it (--show-untraced). Never imports JAX or the user's code.

A parameter used as a size (``range(n)``, an element of a shape tuple, a slice bound, shape
arithmetic) is an integer; one tested by ``if``/``while``/``and``/``not`` a boolean; one passed as
the key of a ``jax.random`` function a PRNG key; one used as indices (``x[labels]``, the indices of
``take_along_axis``, ``take`` or ``one_hot``, as it is or indexed: ``labels[:, None]``) an integer
array; one combined by arithmetic with each leaf inside a ``jax.tree.map`` lambda a scalar; one
indexed by strings (``params["w"]``), unpacked (``x, y = batch``), read by attribute
(``state.step``) or handed to ``jax.tree`` functions a pytree; one iterated (``for layer in
params``) or indexed and then read by strings (``params[i]["w"]``) a sequence, whose elements'
structure is kept; one passed to ``next()`` an iterator; one passed to a JAX function or used in
arithmetic an array. A parameter no use speaks for is absent from the answer: the suggestion says
its type is unknown rather than guess.
"""
from __future__ import annotations

import ast
import dataclasses
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
# Calls whose argument at this position is indices (an integer array), by the function's last name.
_INDEX_ARGUMENTS = {"take_along_axis": 1, "take": 1, "put_along_axis": 1, "one_hot": 0, "bincount": 0,
                    "softmax_cross_entropy_with_integer_labels": 1}
# Methods and attributes that give the same values in another shape (indices stay indices).
_RESHAPES = frozenset({"reshape", "ravel", "flatten", "squeeze", "T", "mT", "transpose"})
# Strongest evidence first: a key passed to arithmetic stays a key, a pytree passed to jnp stays one,
# indices or a tree-mapped scalar are more than an array.
_ORDER = ("function", "iterator", "key", "sequence", "pytree", "int", "bool", "indices", "scalar", "array")


@dataclass
class ParameterUse:
    """What the body says of one parameter: its kind and, for a pytree, how it is built."""

    kind: str  # one of _ORDER; report/suggestion.py adds "default", "float" and "unknown"
    keys: list[str] = field(default_factory=list)  # a dict read as p["a"], p["b"]: its keys
    unpacked: int = 0  # a tuple unpacked as `a, b = p`: its length
    attributes: list[str] = field(default_factory=list)  # an object read as p.step: its attributes
    # a sequence: its elements' dict keys (p[i]["w"], `for layer in p: layer["w"]`) or tuple length
    element_keys: list[str] = field(default_factory=list)
    element_unpacked: int = 0

    def merge(self, other: ParameterUse) -> None:
        """Add the structure ``other`` read (a def the parameter was passed on to)."""
        self.keys += [key for key in other.keys if key not in self.keys]
        self.attributes += [a for a in other.attributes if a not in self.attributes]
        self.unpacked = max(self.unpacked, other.unpacked)
        self.element_keys += [key for key in other.element_keys if key not in self.element_keys]
        self.element_unpacked = max(self.element_unpacked, other.element_unpacked)


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
        uses[name] = dataclasses.replace(pytrees[name], kind=kind) if kind in ("pytree", "sequence") \
            else ParameterUse(kind)
    return uses


def _use(index: SourceIndex, name: ast.Name, tree: ParameterUse, depth: int) -> str | None:
    """The kind one load of a parameter says it has (recording a pytree's shape in ``tree``)."""
    parent = index.parent(name)
    if _used_as_indices(index, name):
        return "indices"
    if isinstance(parent, ast.BinOp) and _in_tree_map_lambda(index, name):
        return "scalar"  # combined with every leaf of a tree, whatever their shapes
    if isinstance(parent, ast.Subscript) and parent.value is name:
        if _is_string(parent.slice):
            if parent.slice.value not in tree.keys:  # type: ignore[attr-defined]
                tree.keys.append(parent.slice.value)  # type: ignore[attr-defined]
            return "pytree"
        outer = index.parent(parent)
        if isinstance(outer, ast.Subscript) and outer.value is parent and _is_string(outer.slice):
            _add_key(tree.element_keys, outer.slice)  # params[i]["w"]: a sequence of dicts
            return "sequence"
        return "array"
    if isinstance(parent, (ast.For, ast.comprehension)) and parent.iter is name:
        return _iterated(index, parent, tree)
    if isinstance(parent, ast.Call) and isinstance(parent.func, ast.Name) and parent.func.id == "next":
        return "iterator"
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
            tree.merge(passed)
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


def _is_string(node: ast.AST) -> bool:
    return isinstance(node, ast.Constant) and isinstance(node.value, str)


def _add_key(keys: list[str], node: ast.AST) -> None:
    if node.value not in keys:  # type: ignore[attr-defined]
        keys.append(node.value)  # type: ignore[attr-defined]


def _iterated(index: SourceIndex, loop: ast.For | ast.comprehension, tree: ParameterUse) -> str:
    """A parameter a for loop or comprehension iterates: a sequence, its elements unpacked by the
    loop's target (``for x, y in batches``) or read by strings in the loop (``layer["w"]``)."""
    target = loop.target
    if isinstance(target, (ast.Tuple, ast.List)):
        tree.element_unpacked = max(tree.element_unpacked, len(target.elts))
    elif isinstance(target, ast.Name):
        scope = loop.body if isinstance(loop, ast.For) else [index.parent(loop)]
        reads = [n for statement in scope for n in ast.walk(statement) if isinstance(n, ast.Subscript)
                 and isinstance(n.value, ast.Name) and n.value.id == target.id and _is_string(n.slice)]
        for node in sorted(reads, key=lambda n: (n.lineno, n.col_offset)):
            _add_key(tree.element_keys, node.slice)
    return "sequence"


def _used_as_indices(index: SourceIndex, name: ast.Name) -> bool:
    """``x[labels]``, ``x[rows, labels]``, ``x.at[labels]``, ``jnp.take_along_axis(x, labels[:, None], 1)``,
    ``jax.nn.one_hot(labels, n)``: the parameter's values (as they are, indexed or reshaped) index."""
    node = _carrier(index, name)
    parent = index.parent(node)
    if isinstance(parent, ast.Tuple) and isinstance(index.parent(parent), ast.Subscript):
        node, parent = parent, index.parent(parent)
    if isinstance(parent, ast.Subscript):
        return parent.slice is node
    if isinstance(parent, ast.keyword):
        return parent.arg == "indices"
    if not isinstance(parent, ast.Call) or node not in parent.args:
        return False
    position = parent.args.index(node)
    return any(_INDEX_ARGUMENTS.get(n.rpartition(".")[2]) == position for n in index.call_names(parent)
               if n.startswith(("jax.", "optax.")))


def _carrier(index: SourceIndex, node: ast.expr) -> ast.expr:
    """The outermost expression holding the parameter's values as they are: ``labels``,
    ``labels[:, None]``, ``labels.reshape(-1)``, ``labels.T``."""
    while True:
        parent = index.parent(node)
        if isinstance(parent, ast.Subscript) and parent.value is node and not _is_string(parent.slice):
            node = parent
        elif isinstance(parent, ast.Attribute) and parent.attr in _RESHAPES:
            call = index.parent(parent)
            node = call if isinstance(call, ast.Call) and call.func is parent else parent
        else:
            return node


def _in_tree_map_lambda(index: SourceIndex, name: ast.Name) -> bool:
    """Inside the lambda a ``jax.tree.map`` applies to each leaf, not one of its parameters."""
    node: ast.AST | None = name
    while node is not None and not isinstance(node, (ast.Lambda, ast.FunctionDef, ast.AsyncFunctionDef)):
        node = index.parent(node)
    if not isinstance(node, ast.Lambda) or name.id in {a.arg for a in node.args.args}:
        return False
    call = index.parent(node)
    return isinstance(call, ast.Call) and bool(call.args) and call.args[0] is node and any(
        n.startswith(_TREE_MODULES) and "map" in n.rpartition(".")[2] for n in index.call_names(call))


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
