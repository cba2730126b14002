"""Made-up objects for parameters read by attribute (issue 48): a parameter that neither its name
nor its annotation decides (no annotation, or ``Any``/``PyTree``, or a name that says pytree:
``state``, ``params``), whose body reads attributes of it (``state.position``,
``params.dynamics.weights``, ``state.kinetic_energy(p)``), gets a value with exactly those
attributes, made up for it: a frozen dataclass made for it and registered as a pytree, shown in the
signature as ``state=<made up: position=f32[n], logdensity=f32[]>``.

Each attribute read is, by its uses in the body (usage.py's table, as for a parameter): an f32
array of the rung's rank (never less than the body shows: ``state.x.shape[1]`` is rank 2; of rank 0
where its name says a scalar, as a stand-in's does: ``logdensity``, ``energy``, ``loss``), an i32
array where it indexes (or is named like an index: ``idx``, ``*_indices``); where its uses say
nothing, by the ladder's names: a typed key (``rng_key``), a static count 2 (``num_dims``), a
static shape ``(8,)`` (``*_shape``); the static size 2 where it is one, the flag False where it is
only truth-tested, a boolean array where it is an operand of ``|``, ``&``, ``^`` or ``~``
(numpyro's ``tree.turning | new_tree.turning``), a tuple of arrays where it is unpacked; an object
of its own where its attributes are read (``p.a.b``, three levels at most); a function stand-in
(worker/standins.py) where it is called with positional arguments (``p.kinetic_energy(x)``).
``p.replace(a=...)``, ``p._replace(a=...)`` and ``p.set(a=...)`` (flax's and chex's, NamedTuple's
and jax_md's ways, which blackjax, dynamax and jax_md states use) return a copy with those fields
changed; their names are fields too.

Not made up (the parameter stays as the ladder had it): a parameter the body uses as an array too
(``p * 2``, ``p[0]``, ``p.shape``), unpacks, iterates, calls or truth-tests; one whose attributes
are written (``p.a = x``) or read by a name that is not a constant (``getattr(p, name)``), or by
``hasattr``; one with a dunder, ``_fields`` or ``_asdict`` read; one whose method is called without
arguments (``p.items()``, ``p.keys()``: a dict's, not a state's); and attributes read through a
local alias (``s = p; s.a``), which the body's AST does not follow.

This module reads the body (which parameters, which attributes, each one's role);
made_up_values.py makes the values and grows them on a trace's AttributeError.
"""
from __future__ import annotations

import ast
import dataclasses
import enum
import functools
import inspect
import re
from typing import Any

from jaxlint.scan.functions import KEY_PARAMETER
from jaxlint.worker import standins
from jaxlint.worker.argsources import sizes, usage

ROLE = "made-up"  # a parameter's role: (ROLE, spec, ranks)
UNBUILT = "unbuilt-class"  # the role, until made up, of a parameter annotated with a class the ladder cannot guess
_CLASS_NAME = re.compile(r"(?:[A-Za-z_]\w*\.)*[A-Z]\w*")
_TYPING_NAMES = frozenset({"Any", "Callable", "Sequence", "Mapping", "MutableMapping", "Iterable", "Iterator", "Dict",
                           "List", "Tuple", "Set", "FrozenSet", "Optional", "Union", "Type", "Hashable", "Generator",
                           "PyTree", "Array", "ArrayLike", "DTypeLike", "Shape", "Module"})
_NOT_USERS = ("builtins", "typing", "collections", "abc", "numpy", "jax", "jaxlib", "types", "enum", "inspect")
MAX_DEPTH = 3  # ``p.a.b.c`` at most
# Methods the made-up class has: a copy with fields changed (flax's and chex's ``replace``,
# NamedTuple's ``_replace``, jax_md's dataclasses' ``set``).
COPIES = ("replace", "_replace", "set")
_REFUSED = ("_fields", "_asdict")  # a NamedTuple's own API: the parameter is one, not a made-up object
_LOGICAL = (ast.BitOr, ast.BitAnd, ast.BitXor)
BOOL = "bool-array"  # an attribute's role: a boolean array of the rung's rank
_WHOLE_CALLS = ("getattr", "hasattr", "setattr", "delattr", "vars")  # builtins that read a name of it


class _Refused(Exception):
    """The parameter's uses say it is no object read by attribute."""


@dataclasses.dataclass
class _Node:
    """One attribute path's reads: its own uses (usage.py's kinds; None: a use as a whole object)
    and its attributes."""

    uses: list[Any] = dataclasses.field(default_factory=list)
    children: dict[str, _Node] = dataclasses.field(default_factory=dict)
    method: bool = False  # called with arguments: a stand-in
    logical: bool = False  # an operand of ``|``, ``&``, ``^`` or ``~``: a boolean array

    def child(self, name: str) -> _Node:
        return self.children.setdefault(name, _Node())


def is_made_up(role: Any) -> bool:
    """A role of this module: ``(ROLE, spec, ranks)``: each attribute's role, and the least rank
    the body reads each array attribute at, by its path (``(("a.b", 2),)``)."""
    return isinstance(role, tuple) and len(role) == 3 and role[0] == ROLE


def roles_by_attributes(definition: ast.AST | None, params: dict[str, inspect.Parameter],
                        roles: dict[str, Any], ranks: dict[str, int]) -> dict[str, Any]:
    """The made-up role of each parameter of ``roles`` that the ladder left an f32 array without an
    annotation or a one-leaf pytree, and whose body reads it by attribute only. ``ranks``: the
    least ranks the body reads values at, by dotted name (inferred.ranks_used)."""
    if not isinstance(definition, (ast.FunctionDef, ast.AsyncFunctionDef)):
        return {}
    open_to = [name for name, role in roles.items() if name in params and _open(params[name], role)]
    if not open_to:
        return {}
    parents = _parents(definition)
    found = {}
    for name in open_to:
        try:
            root = _reads(definition, name, parents)
            spec = _spec(root, name, 0) if root.children else None
        except _Refused:
            continue
        if spec is not None:
            floors = tuple((path.partition(".")[2], ranks[path]) for path in ranks if path.startswith(f"{name}."))
            found[name] = (ROLE, spec, floors)
    return _kinds_shared(found)


def used_whole_only(definition: ast.AST, name: str) -> bool:
    """The body reads ``name`` only as a whole value (passed on, returned, bound): no use as an
    array, no attribute read (made_up_callee.py)."""
    try:
        root = _reads(definition, name, _parents(definition))
    except _Refused:
        return False
    return not root.children and all(use is None for use in root.uses)


def attributes_read(definition: ast.AST, name: str) -> tuple | None:
    """The made-up spec of the attributes ``definition`` reads of ``name`` (``((attribute, role),
    ...)``); None where its uses say it is no such object (made_up_callee.py)."""
    try:
        return _spec(_reads(definition, name, _parents(definition)), name, 0)
    except _Refused:
        return None


def _parents(definition: ast.AST) -> dict[ast.AST, ast.AST]:
    return {child: node for node in ast.walk(definition) for child in ast.iter_child_nodes(node)}


def _kinds_shared(found: dict[str, tuple]) -> dict[str, tuple]:
    """One made-up class for parameters whose names end in the same word (``previous_state`` and
    ``next_state``, ``tree`` and ``new_tree``): code that combines them (``jnp.where`` over both,
    ``lax.cond`` returning either) needs one structure. Attributes read of any are all of theirs
    (a plain array where the other's uses say more: a boolean or index array); names whose
    attributes disagree otherwise (an array in one, an object in the other) keep their own."""
    by_word: dict[str, list[str]] = {}
    for name in found:
        by_word.setdefault(name.lower().rpartition("_")[2], []).append(name)
    for names in by_word.values():
        if len(names) < 2:
            continue
        spec: tuple | None = found[names[0]][1]
        for name in names[1:]:
            spec = _merged(spec, found[name][1]) if spec is not None else None
        if spec is not None:
            floors: dict[str, int] = {}
            for path, rank in (floor for name in names for floor in found[name][2]):
                floors[path] = max(rank, floors.get(path, 0))
            for name in names:
                found[name] = (ROLE, spec, tuple(floors.items()))
    return found


def _merged(first: tuple, second: tuple) -> tuple | None:
    merged = dict(first)
    for attribute, role in second:
        mine = merged.setdefault(attribute, role)
        if mine == role:
            continue
        if "array" in (mine, role) and not (is_made_up(mine) or is_made_up(role)):
            merged[attribute] = role if mine == "array" else mine  # the one a use says more of: bool[], i32[]
            continue
        if not (is_made_up(mine) and is_made_up(role)):
            return None
        inner = _merged(mine[1], role[1])
        if inner is None:
            return None
        merged[attribute] = (ROLE, inner, ())
    return tuple(merged.items())


def _open(param: inspect.Parameter, role: Any) -> bool:
    return role in ("pytree", UNBUILT) or role == "array" and param.annotation is param.empty


def names_a_class(annotation: Any) -> bool:
    """An annotation that names one class of the user's (``Metric``, ``"base.System"``), no
    typing or builtin name, no union: the ladder guesses no value for it, and its parameter may
    be made up where the body reads it by attribute (its role UNBUILT until then)."""
    if annotation is inspect.Parameter.empty:
        return False
    if isinstance(annotation, str):
        name = annotation.rpartition(".")[2]
        return bool(_CLASS_NAME.fullmatch(annotation)) and name not in _TYPING_NAMES
    return isinstance(annotation, type) and annotation.__module__.partition(".")[0] not in _NOT_USERS \
        and not issubclass(annotation, (BaseException, enum.Enum))


def _reads(definition: ast.AST, name: str, parents: dict[ast.AST, ast.AST]) -> _Node:
    """The tree of attribute paths the body reads from ``name``; _Refused where a use says it is no
    such object."""
    root = _Node()
    for occurrence in _loads(definition, name):
        node, current, depth = occurrence, root, 0
        while True:
            parent = parents.get(node)
            attribute = _attribute_read(node, parent)
            if attribute is None:
                break
            if attribute in array_attributes():
                if current is root:
                    raise _Refused  # ``p.shape``: an array
                break  # ``p.a.shape``: ``p.a`` is an array
            depth += 1
            if depth > MAX_DEPTH:
                raise _Refused
            node, current = parent, current.child(attribute)  # type: ignore[assignment]
        _record(node, current, root, parents)
    return root


def _attribute_read(node: ast.AST, parent: ast.AST | None) -> str | None:
    """The name of the attribute ``parent`` reads from ``node``; _Refused for a write, a dunder or
    a NamedTuple's own API; None where ``parent`` reads none."""
    if isinstance(parent, ast.Attribute) and parent.value is node:
        name = parent.attr
    elif isinstance(parent, ast.Call) and isinstance(parent.func, ast.Name) and parent.func.id in _WHOLE_CALLS \
            and parent.args[:1] == [node]:
        argument = parent.args[1] if len(parent.args) > 1 else None
        if parent.func.id != "getattr" or not (isinstance(argument, ast.Constant) and isinstance(argument.value, str)):
            raise _Refused  # ``getattr(p, name)``, ``hasattr(p, "a")``, ``vars(p)``
        name = argument.value
    else:
        return None
    if isinstance(parent, ast.Attribute) and not isinstance(parent.ctx, ast.Load) or name.startswith("__") \
            or name in _REFUSED:
        raise _Refused
    return name


def _record(node: ast.AST, current: _Node, root: _Node, parents: dict[ast.AST, ast.AST]) -> None:
    """Record the use of ``node`` (the parameter, or the last attribute read of it) on ``current``."""
    parent = parents.get(node)
    if isinstance(parent, ast.Call) and parent.func is node:
        if current is root:
            raise _Refused  # ``p(x)``: a function
        *_, name = _path_to(node)
        if name in COPIES:  # ``p.replace(a=...)``: the copy's fields are the object's too
            owner = _owner(root, node)
            del owner.children[name]
            for keyword in parent.keywords:
                if keyword.arg is None:
                    raise _Refused
                owner.child(keyword.arg)
            return
        if not parent.args:
            raise _Refused  # ``p.items()``, ``p.keys()``: a dict's; a stand-in takes its first argument
        current.method = True
        return
    current.uses.append(None if _whole(node, parent) else usage.use_of(node, parents))
    current.logical = current.logical or isinstance(parent, ast.BinOp) and isinstance(parent.op, _LOGICAL) \
        or isinstance(parent, ast.UnaryOp) and isinstance(parent.op, ast.Invert)


def _path_to(node: ast.AST) -> list[str]:
    path = []
    while isinstance(node, ast.Attribute):
        path.append(node.attr)
        node = node.value
    return path[::-1]


def _owner(root: _Node, node: ast.AST) -> _Node:
    """The node of the object whose method ``node`` (``p.a.replace``) names."""
    owner = root
    for name in _path_to(node)[:-1]:
        owner = owner.children[name]
    return owner


def _whole(node: ast.AST, parent: ast.AST | None) -> bool:
    """``node`` is used as a whole value: passed to a call, returned, bound to a name, put in a
    container, compared by identity."""
    if isinstance(parent, ast.Call):
        return parent.func is not node
    if isinstance(parent, (ast.Lambda, ast.IfExp)):  # ``lambda: state``, ``a if c else state``
        return parent.body is node or isinstance(parent, ast.IfExp) and parent.orelse is node
    if isinstance(parent, ast.Compare):
        return all(isinstance(op, (ast.Is, ast.IsNot)) for op in parent.ops)
    if isinstance(parent, ast.Assign):  # ``s = p``: an alias (its reads are not followed)
        return parent.value is node and all(isinstance(target, ast.Name) for target in parent.targets)
    if isinstance(parent, (ast.Tuple, ast.List)):
        return isinstance(parent.ctx, ast.Load)
    return isinstance(parent, (ast.keyword, ast.Return, ast.Dict, ast.Starred))


def _spec(node: _Node, path: str, depth: int) -> tuple:
    """The made-up object of ``node``: ``((attribute, role), ...)`` in the order first read."""
    if any(use is not None for use in node.uses) or any(name in COPIES for name in node.children):
        raise _Refused  # ``p * 2`` beside ``p.a``; ``p.replace`` read, not called
    return tuple((name, _child_role(child, f"{path}.{name}", depth + 1)) for name, child in node.children.items())


def _child_role(node: _Node, path: str, depth: int) -> Any:
    if node.method:
        if node.children or node.uses:
            raise _Refused
        scalar = standins.SCALAR_NAME.fullmatch(path.rpartition(".")[2].lower())
        return ("static", standins.SCALAR if scalar else standins.FIRST_ARGUMENT)
    if node.children:
        return (ROLE, _spec(node, path, depth), ())
    use = usage.agreed_use([use for use in node.uses if use is not None] or None)
    attribute = path.rpartition(".")[2].lower()
    if use is None:  # the ladder's names: ``state.rng_key`` a typed key, ``grid.num_dims`` a size, ...
        if KEY_PARAMETER.fullmatch(attribute):
            return "key"
        by_name = sizes.shape_role(attribute, "") or sizes.count_role(attribute, "")
        if by_name is not None:
            return by_name
    if use == usage.INDEX or use is None and sizes.index_role(attribute, ""):
        return sizes.INDEX_ROLE
    if use == usage.SIZE:
        return ("static", usage.STATIC_SIZE)
    if use == usage.FLAG:
        return ("static", False)
    if isinstance(use, int):
        return (usage.TUPLE, use)
    return BOOL if node.logical else "array"


def holds_array(role: Any) -> bool:
    """A made-up role with an array among its attributes (one of stand-ins alone is static)."""
    return any(child in ("array", "key", BOOL, sizes.INDEX_ROLE) or usage.is_tuple(child)
               or is_made_up(child) and holds_array(child) for _, child in role[1])


def _loads(definition: ast.AST, name: str) -> list[ast.Name]:
    """``name`` read in the body, outside nested functions and lambdas that take a parameter of that
    name. Where the body binds it again (``state = step(state)``) the reads after it are taken as
    the same object's: a loop's state keeps its kind."""
    found: list[ast.Name] = []

    def visit(node: ast.AST) -> None:
        if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef, ast.Lambda)) and node is not definition \
                and name in _parameter_names(node):
            return
        if isinstance(node, ast.Name) and node.id == name and isinstance(node.ctx, ast.Load):
            found.append(node)
        for child in ast.iter_child_nodes(node):
            visit(child)

    for statement in definition.body:  # type: ignore[attr-defined]
        visit(statement)
    return found


def _parameter_names(function: ast.AST) -> set[str]:
    arguments = function.args  # type: ignore[attr-defined]
    every = [*arguments.posonlyargs, *arguments.args, *arguments.kwonlyargs, arguments.vararg, arguments.kwarg]
    return {arg.arg for arg in every if arg is not None}


@functools.cache
def array_attributes() -> frozenset[str]:
    import jax

    return frozenset(dir(jax.Array))
