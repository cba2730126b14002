"""Values for inferred parameters from how the function's own body uses them (issue 48), where
neither the name nor the annotation decides (no annotation, or ``Any``, and a name that says
nothing: not ``idx``, ``num_*``, ``shape``, ``params``, ...); and, for an index only, where an
array annotation that is not a float one leaves the dtype open (``triangles: Array`` indexing
``R[triangles[:, 0]]`` is i32, as an index name's, sizes.py). One reading of the body's AST, one
table of use to value; the ladder (inferred.py, and instances.py for a method's parameters) takes
the value and shows it in the signature like every inferred value:

=================================================================  ===============================
use in the body                                                    value
=================================================================  ===============================
an index: ``a[p]``, ``a[p, :]``, ``a.at[p]``, ``jnp.take(a, p)``,  an i32 array of the rung's rank
``jnp.take_along_axis(a, p, ...)``, ``jax.ops.segment_sum(x, p)``  (``p=i32[]``)
a size: ``range(p)``, ``jnp.zeros(p)``, ``jnp.ones((p, 3))``,      a static size, 2 (as a count's,
``x.reshape(p)``, ``jnp.arange(p)``, ``x[:p]``                     sizes.py)
called: ``p(x)``                                                   a function stand-in (standins.py)
unpacked: ``a, b = p``; iterated: ``for x in p``, ``f(*p)``        a tuple of arrays, as many as
                                                                   unpacked (2 when only iterated)
truth-tested only: ``if p:``, ``while p:``, ``not p``, ``x if p``  the static flag False
a key: ``jax.random.normal(p, ...)``, ``random.split(p)``          a typed PRNG key
=================================================================  ===============================

Arithmetic carries a use (``range(p + 1)`` is a size, ``a[p - 1]`` an index), and so do the
parameter's items where they index (``a[p[:, 0]]``: p holds indices), and so does a local assigned
once from an item or slice of it (``sender = p[0]; a[sender]``, ``i, j = p[:, 0], p[:, 1]; a[i]``)
where that local's own uses agree on an index. A local bound again (``sender = jnp.clip(sender, ...)``)
or used two ways carries nothing: the item is then as if used in place. Uses that say
nothing either way are neutral: ``p is None``, ``len(p)``, ``isinstance(p, ...)``, ``p[0]``; and
``p.shape``, ``p.ndim``, ``p.dtype`` beside an index use (an index array has them: flax's
``Embed.__call__`` checks ``inputs.dtype`` before ``jnp.take(embedding, inputs)``), an array's use
beside any other. Any other use (``p * 2``, ``f(p)``) is an array's. A parameter with two kinds of use (an
index and an array, unpacked to 2 and to 3), one the body rebinds (``p = jnp.asarray(p)``), or
one used only neutrally keeps the ladder's value as before.
"""
from __future__ import annotations

import ast
import inspect
from typing import Any

from jaxlint.worker import standins
from jaxlint.worker.argsources import pytrees, sizes

INDEX, SIZE, CALLED, FLAG, ITERATED, ARRAY, NEUTRAL = "index", "size", "called", "flag", "iterated", "array", "neutral"
KEY = "key"
TUPLE = "tuple-of-arrays"  # a role: (TUPLE, length), f32 arrays of the rung's rank
STATIC_SIZE = 2  # a size's value, as a count's (sizes.count_role)
ITERATED_LENGTH = 2  # a tuple's length where the body only iterates over it
_INDEX_CALLS = {"take": ("indices",), "take_along_axis": ("indices",), "segment_sum": ("segment_ids",),
                "segment_max": ("segment_ids",), "segment_min": ("segment_ids",), "segment_prod": ("segment_ids",)}
_SHAPE_CALLS = {"zeros": ("shape",), "ones": ("shape",), "empty": ("shape",), "full": ("shape",),
                "eye": ("N", "M"), "identity": ("n",), "tri": ("N", "M")}
_ARITHMETIC = (ast.Add, ast.Sub, ast.Mult, ast.FloorDiv, ast.Mod)
# Attributes every array has, an index array too: beside an index use, no other use.
DESCRIBED, _DESCRIBED_BY = "described", ("shape", "ndim", "dtype")
_NEUTRAL_CALLS = ("len", "isinstance", "type", "id", "callable")
# jax.random's functions whose first argument is the key (``jax.random.X``, ``random.X``, ``jr.X``):
# by name, as NumPy's and Python's ``random`` modules take other first arguments.
_KEY_CALLS = frozenset({"split", "fold_in", "normal", "uniform", "bernoulli", "categorical", "choice",
                        "permutation", "randint", "truncated_normal", "gumbel", "exponential", "gamma",
                        "beta", "dirichlet", "multivariate_normal", "laplace", "logistic", "poisson",
                        "rademacher", "bits", "cauchy", "t", "ball", "orthogonal", "key_data"})
_RANDOM_MODULES = ("random", "jr", "jrandom")
_MODULES = ("jnp", "np", "numpy", "onp")
_FUNCTIONS = (ast.FunctionDef, ast.AsyncFunctionDef, ast.Lambda)
_FLOAT_WORDS = ("Float", "Inexact", "Complex", "Real", "float32", "float64")  # annotations that say a float array
ALL = "every use"


def roles_by_use(definition: ast.AST | None, params: dict[str, inspect.Parameter],
                 roles: dict[str, Any]) -> dict[str, Any]:
    """The new role of each parameter of ``roles`` whose name and annotation decide nothing and
    whose uses in ``definition``'s body agree on one row of the table."""
    if not isinstance(definition, (ast.FunctionDef, ast.AsyncFunctionDef)):
        return {}
    open_to = {name: _open_to(params[name], role) for name, role in roles.items() if name in params}
    open_to = {name: uses for name, uses in open_to.items() if uses}
    if not open_to:
        return {}
    parents = {child: node for node in ast.walk(definition) for child in ast.iter_child_nodes(node)}
    found = {}
    for name, uses in open_to.items():
        use = agreed_use(_uses(definition, name, parents))
        if use is not None and (uses == ALL or use in uses):
            found[name] = _role(name, use)
    return found


def use_of_parameter(definition: ast.AST, name: str) -> Any:
    """The one use of the table ``name``'s loads in ``definition``'s body agree on, or None
    (agreed_use), whatever its name and annotation say (argsources/passed_on.py asks it for names
    the ladder does not read)."""
    parents = {child: node for node in ast.walk(definition) for child in ast.iter_child_nodes(node)}
    return agreed_use(_uses(definition, name, parents))


def is_tuple(role: Any) -> bool:
    """The role of a tuple of arrays, ``(TUPLE, length)``."""
    return isinstance(role, tuple) and len(role) == 2 and role[0] == TUPLE


def agreed_use(uses: list[Any] | None) -> Any:
    """The one use all of ``uses`` make (neutral ones aside; an iteration agrees with an unpacking
    of any length; a size agrees with an array's uses, which a Python int serves too, while an
    array can never be a size), or None where they disagree, there are none, or the body rebinds
    the name."""
    if uses is None:
        return None
    kinds = {use for use in uses if use != NEUTRAL}
    if DESCRIBED in kinds:  # its shape or dtype read: an index's too, else an array's
        kinds = {INDEX} if kinds == {DESCRIBED, INDEX} else kinds - {DESCRIBED} | {ARRAY}
    if kinds and all(kind == ITERATED or isinstance(kind, int) for kind in kinds):
        lengths = {kind for kind in kinds if isinstance(kind, int)}
        return None if len(lengths) > 1 else lengths.pop() if lengths else ITERATED_LENGTH
    if kinds == {SIZE, ARRAY}:  # a size in arithmetic too (``jnp.ones(2 * n)``, ``n + lamb``): an int does both
        return SIZE
    if len(kinds) != 1 or ARRAY in kinds:
        return None
    return kinds.pop()


def _open_to(param: inspect.Parameter, role: Any) -> Any:
    """The uses that may decide the parameter's value: ALL where the role came from nothing (no
    annotation and a name the ladder does not read, or ``Any``, a one-leaf pytree by default, on a
    name that does not say pytree); only an index where an array annotation that is not a float
    one (``Array``, ``ArrayLike``, ``int | Array``) leaves the dtype open, as for an index name
    (sizes.index_role); none else."""
    annotation = param.annotation
    if role == "array":
        if annotation is param.empty:
            return ALL
        text = annotation if isinstance(annotation, str) else str(annotation)
        return () if any(word in text for word in _FLOAT_WORDS) else (INDEX,)
    text = annotation if isinstance(annotation, str) else getattr(annotation, "_name", None) or repr(annotation)
    return ALL if role == "pytree" and str(text).removeprefix("typing.") == "Any" \
        and not pytrees.named_pytree(param.name) else ()


def _role(name: str, use: Any) -> Any:
    if use == INDEX:
        return sizes.INDEX_ROLE
    if use == SIZE:
        return ("static", STATIC_SIZE)
    if use == CALLED:
        return ("static", standins.SCALAR if standins.SCALAR_NAME.fullmatch(name.lower()) else standins.FIRST_ARGUMENT)
    if use == FLAG:
        return ("static", False)
    if use == KEY:
        return "key"
    return (TUPLE, use)  # unpacked to ``use`` names


def _uses(definition: ast.AST, name: str, parents: dict[ast.AST, ast.AST]) -> list[Any] | None:
    """Each use of ``name`` in the body, outside nested functions that take a parameter of that
    name; None when the body binds the name again. An item of it that a local takes (``s = p[0]``,
    ``i, j = p[:, 0], p[:, 1]``) is an index where that local's uses agree on one."""
    found = []
    for node in occurrences(definition, name, parents):
        if not isinstance(node.ctx, ast.Load):
            return None
        local = _item_local(node, parents)
        index = local is not None and _local_use(definition, local, parents) == INDEX
        found.append(INDEX if index else use_of(node, parents))
    return found


def occurrences(definition: ast.AST, name: str, parents: dict[ast.AST, ast.AST]) -> list[ast.Name]:
    """``name`` in the body, outside nested functions that take a parameter of that name."""
    return [node for statement in definition.body for node in ast.walk(statement)  # type: ignore[attr-defined]
            if isinstance(node, ast.Name) and node.id == name and not shadowed(node, name, definition, parents)]


def _item_local(node: ast.AST, parents: dict[ast.AST, ast.AST]) -> ast.Name | None:
    """The local an item or slice of ``node`` is assigned to (``s = p[0]``; ``i, j = p[:, 0], p[:, 1]``
    for either), or None."""
    item = parents.get(node)
    if not (isinstance(item, ast.Subscript) and item.value is node):
        return None
    value, target = item, parents.get(item)
    if isinstance(target, ast.Tuple):  # one of a tuple unpacked to as many names
        value, target = target, parents.get(target)
    if not (isinstance(target, ast.Assign) and target.value is value and len(target.targets) == 1):
        return None
    names = target.targets[0]
    if value is item:
        return names if isinstance(names, ast.Name) else None
    if not isinstance(names, (ast.Tuple, ast.List)) or len(names.elts) != len(value.elts):  # type: ignore[attr-defined]
        return None
    name = names.elts[value.elts.index(item)]  # type: ignore[attr-defined]
    return name if isinstance(name, ast.Name) else None


def _local_use(definition: ast.AST, local: ast.Name, parents: dict[ast.AST, ast.AST]) -> Any:
    """The one use ``local``'s loads agree on (agreed_use), or None where the body binds it again
    or it is a parameter."""
    arguments = definition.args  # type: ignore[attr-defined]
    every = [*arguments.posonlyargs, *arguments.args, *arguments.kwonlyargs, arguments.vararg, arguments.kwarg]
    if any(arg is not None and arg.arg == local.id for arg in every):
        return None
    uses = []
    for node in occurrences(definition, local.id, parents):
        if node is local:
            continue
        if not isinstance(node.ctx, ast.Load):
            return None
        uses.append(use_of(node, parents))
    return agreed_use(uses)


def shadowed(node: ast.AST, name: str, definition: ast.AST, parents: dict[ast.AST, ast.AST]) -> bool:
    """Whether ``node`` (a ``name`` inside ``definition``) lies in a nested function that takes a
    parameter of that name: another value than the outer one's."""
    while node is not definition and node in parents:
        node = parents[node]
        if isinstance(node, _FUNCTIONS) and node is not definition:
            arguments = node.args
            every = [*arguments.posonlyargs, *arguments.args, *arguments.kwonlyargs, arguments.vararg, arguments.kwarg]
            if any(arg is not None and arg.arg == name for arg in every):
                return True
    return False


def use_of(node: ast.AST, parents: dict[ast.AST, ast.AST]) -> Any:
    """The table's row for one occurrence of a parameter: INDEX, SIZE, CALLED, FLAG, ITERATED,
    an int (unpacked to so many names), NEUTRAL or ARRAY. Arithmetic around the name carries its
    use, and so does taking its items for an index (``x[p[:, 0]]``: p's items index)."""
    name, first = node, parents.get(node)
    parent, climbed, items = first, False, False
    while _carries(node, parent):
        items = items or isinstance(parent, ast.Subscript)
        node, parent, climbed = parent, parents.get(parent), True  # type: ignore[arg-type]
    context = _context(node, parent, parents)
    if context == INDEX or context is not None and not items:
        return context
    if isinstance(first, ast.Subscript) and first.value is name and isinstance(first.slice, ast.Constant) \
            and type(first.slice.value) is int:
        return NEUTRAL  # an item: a tuple's or an array's
    return ARRAY if climbed else _plain_use(node, parent, parents)


def _carries(node: ast.AST, parent: ast.AST | None) -> bool:
    """``parent`` passes ``node``'s use on: arithmetic, or an item of it (``node[...]``)."""
    return isinstance(parent, ast.BinOp) and isinstance(parent.op, _ARITHMETIC) or \
        isinstance(parent, ast.UnaryOp) and isinstance(parent.op, (ast.USub, ast.UAdd)) or \
        isinstance(parent, ast.Subscript) and parent.value is node


def _context(node: ast.AST, parent: ast.AST | None, parents: dict[ast.AST, ast.AST]) -> Any:
    """INDEX or SIZE where ``node`` is one in ``parent`` (a call's argument: NEUTRAL or ARRAY
    too); None where the place says neither."""
    if isinstance(parent, (ast.Tuple, ast.List)) and _sized_call(parent, parents.get(parent)):
        return SIZE
    if isinstance(parent, ast.Tuple) and isinstance(parents.get(parent), ast.Subscript) \
            and parents[parent].slice is parent:  # type: ignore[attr-defined]
        return INDEX
    if isinstance(parent, ast.Slice):
        return SIZE
    if isinstance(parent, ast.Subscript) and parent.slice is node:
        return INDEX
    if isinstance(parent, ast.Call) and parent.func is not node:
        return _call_use(node, parent)
    return None


def _plain_use(node: ast.AST, parent: ast.AST | None, parents: dict[ast.AST, ast.AST]) -> Any:
    """use_of's rows for the name itself (no arithmetic around it)."""
    if isinstance(parent, ast.Call) and parent.func is node:
        return CALLED
    if isinstance(parent, ast.Assign) and parent.value is node and len(parent.targets) == 1 \
            and isinstance(parent.targets[0], (ast.Tuple, ast.List)):
        targets = parent.targets[0].elts
        return ITERATED if any(isinstance(t, ast.Starred) for t in targets) else len(targets)
    if isinstance(parent, (ast.For, ast.comprehension)) and parent.iter is node or isinstance(parent, ast.Starred):
        return ITERATED
    if isinstance(parent, ast.Compare) and all(isinstance(op, (ast.Is, ast.IsNot)) for op in parent.ops):
        return NEUTRAL
    if isinstance(parent, ast.Attribute) and parent.attr in _DESCRIBED_BY:
        return DESCRIBED  # its shape, rank or dtype: an index's as well as an array's
    if isinstance(parent, ast.BoolOp):  # a flag where the whole test is one
        return FLAG if _tested(parent, parents) else ARRAY
    return FLAG if _tested(node, parents) else ARRAY


def _tested(node: ast.AST, parents: dict[ast.AST, ast.AST]) -> bool:
    """``node`` is a truth test: an ``if``'s, ``while``'s, ``assert``'s or ``... if node else ...``'s,
    or ``not node``."""
    parent = parents.get(node)
    if isinstance(parent, ast.UnaryOp) and isinstance(parent.op, ast.Not):
        return True
    if isinstance(parent, ast.BoolOp):
        return _tested(parent, parents)
    return isinstance(parent, (ast.If, ast.While, ast.IfExp, ast.Assert)) and parent.test is node


def _call_use(node: ast.AST, call: ast.Call) -> Any:
    """The use of an argument of ``call``: an index, a size, neutral, else an array's."""
    callee = _callee(call)
    position = next((i for i, arg in enumerate(call.args) if arg is node), None)
    keyword = next((k.arg for k in call.keywords if k.value is node), None)
    if callee in _INDEX_CALLS and (position == 1 or keyword in _INDEX_CALLS[callee]):
        return INDEX
    if callee in _SHAPE_CALLS and (position == 0 or keyword in _SHAPE_CALLS[callee]) or callee == "range" \
            or _reshape_size(call, position) or callee == "arange" and position is not None:
        return SIZE
    if callee in _NEUTRAL_CALLS and isinstance(call.func, ast.Name) and position == 0:
        return NEUTRAL
    if callee in _KEY_CALLS and _by_random(call) and (position == 0 or keyword == "key"):
        return KEY
    return ARRAY


def seeds_a_key(definition: ast.AST | None, name: str) -> bool:
    """``definition``'s body makes a key from ``name``: ``jax.random.PRNGKey(name)``,
    ``random.key(name)`` (brax's ``run_batch(seed)``): an integer seed, not a key."""
    if not isinstance(definition, (ast.FunctionDef, ast.AsyncFunctionDef)):
        return False
    return any(isinstance(node, ast.Call) and _callee(node) in ("PRNGKey", "key") and _by_random(node)
               and node.args and isinstance(node.args[0], ast.Name) and node.args[0].id == name
               for statement in definition.body for node in ast.walk(statement))


def _by_random(call: ast.Call) -> bool:
    """``jax.random.f(...)``, ``random.f(...)`` or ``jr.f(...)``; not ``np.random.f(...)``."""
    func = call.func
    if not isinstance(func, ast.Attribute):
        return False
    owner = func.value
    if isinstance(owner, ast.Name):
        return owner.id in _RANDOM_MODULES
    return isinstance(owner, ast.Attribute) and owner.attr == "random" and isinstance(owner.value, ast.Name) \
        and owner.value.id == "jax"


def _sized_call(sequence: ast.AST, call: ast.AST | None) -> bool:
    """``sequence`` is the shape a call takes: ``jnp.zeros((p, 3))``, ``x.reshape((p, -1))``."""
    if not isinstance(call, ast.Call):
        return False
    position = next((i for i, arg in enumerate(call.args) if arg is sequence), None)
    keyword = next((k.arg for k in call.keywords if k.value is sequence), None)
    callee = _callee(call)
    return callee in _SHAPE_CALLS and (position == 0 or keyword in _SHAPE_CALLS[callee]) or \
        _reshape_size(call, position) or keyword == "shape" and callee == "reshape"


def _reshape_size(call: ast.Call, position: int | None) -> bool:
    """An argument of ``x.reshape(...)`` (every one a size), or ``jnp.reshape(x, shape)``'s shape."""
    func = call.func
    if position is None or not (isinstance(func, ast.Attribute) and func.attr == "reshape"):
        return False
    by_module = isinstance(func.value, ast.Name) and func.value.id in _MODULES
    return position >= 1 if by_module else True


def _callee(call: ast.Call) -> str | None:
    func = call.func
    return func.attr if isinstance(func, ast.Attribute) else func.id if isinstance(func, ast.Name) else None
