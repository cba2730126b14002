"""Arguments inferred when nothing else is known (``infer-arguments``, the last source): a short
ladder of abstract signatures from the parameters' names, annotations, defaults and how the body
uses them. The worker keeps the first signature that traces (analyze.py); one that fails is no
finding, and a finding seen with an inferred signature says so.

Per parameter: one with a default keeps it; ``int``/``bool`` annotations are Python values
(static); ``float`` is a weakly typed f32 scalar, as jit sees a Python float; names like ``key``,
``rng``, ``seed``, ``*_key``, ``prng*`` are typed keys; a parameter named or annotated as a pytree
(``tree``, ``params``, ``state``, ``Any``, ``PyTree``) is a one-leaf pytree, an array
(pytrees.py); names and annotations of functions and objects (``fn``, ``model``, ``Callable``,
``str``, ...) cannot be inferred, and then nothing is (unless the body only passes one on as a
function, a loop's carry or a tuple it unpacks: passed_on.py); names of counts, indices and shapes are
read by sizes.py, which also gives a function of sizes alone its one signature. A parameter that
neither its name nor its annotation decides takes the value its uses in the body require
(usage.py: an index, a size, a function, a tuple, a flag); one the body never reads and nothing
else guesses, a placeholder (unused.py); one annotated with a bare container
(``dict``, ``tuple``, ``NamedTuple``, ...) the value its uses show (containers.py: ``{}``, a dict
of keys, a tuple of arrays), else none; one whose attributes the body reads, a made-up object
with those attributes (made_up.py), as does one annotated with a class nothing here guesses.
Every other parameter is an f32 array,
of rank 0, then 1, then 2 (never less than the body shows, up to rank 4: ``x.shape[1]`` means
rank 2, ``x[..., 0]`` rank 1, ``n, d, k = x.shape`` rank 3, and rank_floors.py's floors: ``jax.vmap(f)(x)``
rank 1, ``jnp.sum(x, axis=1)`` rank 2), its dimensions one shared symbolic size ``n``; a rung that fails
with an error naming one parameter's rank or float index is tried once more with it raised
(rank_retry.py, from worker/analyze.py). A method's ``self`` is the instances source's
(instances.py), which uses this ladder for the method's other parameters and its class's fields;
a function's parameter annotated with a class jaxlint builds gets an instance (built_parameters.py,
the source that runs this ladder for functions).
"""
from __future__ import annotations

import ast
import collections.abc
import functools
import inspect
import types
import typing
from typing import Any, Callable

from jaxlint.scan.functions import FUNCTION_PARAMETER, KEY_PARAMETER
from jaxlint.scan.index import first_line
from jaxlint.worker.argsources import (
    ArgumentRequest,
    ArgumentSet,
    containers,
    descriptions,
    lax_options,
    made_up,
    made_up_values,
    passed_on,
    pytrees,
    rank_floors,
    sizes,
    unused,
    usage,
)
from jaxlint.worker.instrument import unrecorded

SOURCE = "inferred"
_OPAQUE_NAMES = frozenset({
    "self", "cls", "f", "fn", "fun", "func", "function", "callback", "model", "module", "net", "params",
    "state", "opt_state", "tree", "pytree", "updates", "grads", "config", "cfg", "options", "name", "path",
    "dtype", "shape", "axis", "axes", "mesh", "sharding", "transform", "optimizer", "schedule", "solver",
    "term", "terms", "kernel", "distribution", "dist", "args", "kwargs", "aux", "carry", "init", "step",
})
_OPAQUE_SUFFIXES = ("_fn", "_fun", "_func", "_state", "_params", "_tree", "_config", "_cfg", "_dtype", "_shape",
                    "_axis", "_name", "_init", "_update", "_kwargs", "_args")
_ARRAY_ANNOTATIONS = ("Array", "ndarray", "ArrayLike", "Float", "Numeric")
MAX_RANK = 2  # the ladder's last rung
MAX_BODY_RANK = 4  # the most a body's use of a parameter is taken to show
_UNIONS = (typing.Union, types.UnionType)
_PYTHON_NUMBERS = (int, float, complex, bool)


class Uninferable(Exception):
    """A parameter whose kind cannot be guessed: nothing is inferred for the function."""


class PerRank:
    """A given parameter whose value follows the rung's rank (an instance jaxlint builds, its
    fields of that rank): ``make(rank)`` is its value on that rung."""

    def __init__(self, make: Callable[[int], Any]) -> None:
        self.make = make


def ladder(request: ArgumentRequest, given: dict[str, Any] | None = None) -> list[ArgumentSet]:
    """The signatures to try, in order (the first that traces is kept). ``given``: parameters
    whose values the caller knows (a factory's state, worker/closures.py), passed as they are,
    or made per rung (``PerRank``)."""
    try:
        signature = inspect.signature(request.function)
    except (TypeError, ValueError):
        raise Uninferable("no signature") from None
    with unrecorded():  # from here on only jaxlint's and JAX's code runs
        return _signatures(request, signature, given or {})


@functools.cache
def symbolic_size() -> Any:
    """The one symbolic size ``n`` of every inferred shape: JAX refuses to mix two sizes made
    apart, even of one name (a factory's state and the arguments the ladder adds beside it)."""
    from jax import export

    return export.symbolic_shape("n")[0]


def _signatures(request: ArgumentRequest, signature: inspect.Signature, given: dict[str, Any]) -> list[ArgumentSet]:
    ranks = ranks_used(request)
    ranks.update(_scalar_union_ranks(signature, ranks))
    roles = _parameter_roles(request, signature, given)
    one_leaf = one_leaf_parameters(request, roles)
    arrays = [name for name, kind in roles.items() if ranked(kind)]
    star = _array_star_args(signature, given)
    if star is not None:
        arrays.append(star)
    past = [name for name in arrays if ranks.get(name, 0) > MAX_BODY_RANK]
    if past:
        raise Uninferable(f"parameter {past[0]}: its body reads it at rank {ranks[past[0]]}, past the "
                          f"{MAX_BODY_RANK} jaxlint guesses")
    if star is None and not any(ranked(kind) or kind in ("key", "float") or kind[0] == "given"
                                for kind in roles.values()):
        return _size_only(roles)
    n = symbolic_size()
    # A size jaxlint chose (an ``int``, a count, a size by its use): findings that judge lengths are
    # left out; an axis (sizes.LAST_AXIS, -1) is no size.
    chosen = any(kind[0] == "static" and type(kind[1]) is int and kind[1] >= 0
                 for kind in roles.values() if isinstance(kind, tuple))
    per_rank = any(isinstance(kind[1], PerRank) for kind in roles.values() if kind[0] == "given")
    found, seen = [], set()
    for rank in range(MAX_RANK + 1):
        shapes = {name: (n,) * max(rank, ranks.get(name, 0)) for name in arrays}
        # A built instance's fields take the rung's rank whatever the other shapes are.
        key = (rank if per_rank else 0, tuple(sorted(shapes.items(), key=lambda item: item[0])))
        if key in seen:
            continue
        seen.add(key)
        kwargs = {name: kind[1].make(rank) if kind[0] == "given" and isinstance(kind[1], PerRank)
                  else abstract(kind, shapes.get(name, ())) for name, kind in roles.items()}
        sized = chosen or descriptions.holds_description(kwargs)
        if star is None:
            found.append(ArgumentSet(SOURCE, (), kwargs, one_leaf=one_leaf, chosen_sizes=sized))
        else:
            args = _by_position(signature, kwargs) + (abstract("array", shapes[star]),) * STAR_ARRAYS
            found.append(ArgumentSet(SOURCE, args, kwargs, one_leaf=one_leaf, chosen_sizes=sized))
    return found


STAR_ARRAYS = 2  # the arrays an array-annotated ``*args`` gets: more than one, so that code combining them runs


def _array_star_args(signature: inspect.Signature, given: dict[str, Any]) -> str | None:
    """The name of a ``*args`` annotated as an array (``*masks: Optional[Array]``), which then gets
    STAR_ARRAYS arrays of the rung's rank; None where there is none (an unannotated ``*args`` passes
    nothing, as before)."""
    for param in signature.parameters.values():
        if param.kind == param.VAR_POSITIONAL and param.annotation is not param.empty and param.name not in given:
            try:
                return param.name if role(param, by_members=True) == "array" else None
            except Uninferable:
                return None
    return None


def _by_position(signature: inspect.Signature, kwargs: dict[str, Any]) -> tuple:
    """The parameters before ``*args``, moved out of ``kwargs`` (in place) into positional
    arguments, a default where the ladder gives none."""
    leading = []
    for param in signature.parameters.values():
        if param.kind == param.VAR_POSITIONAL:
            break
        leading.append(kwargs.pop(param.name) if param.name in kwargs else param.default)
    return tuple(leading)


def _parameter_roles(request: ArgumentRequest, signature: inspect.Signature, given: dict[str, Any]) -> dict[str, Any]:
    """Each parameter's role (without a default), by its name and annotation, then by its uses;
    Uninferable for the first that neither guesses, a made-up object aside where its annotation
    names a class jaxlint does not build and the body reads it by attribute (made_up.py)."""
    roles: dict[str, Any] = {}
    refused: dict[str, Uninferable] = {}
    reader = containers.Reader(definition(request))
    for param in signature.parameters.values():
        if param.name in given:
            roles[param.name] = ("given", given[param.name])
        elif param.kind in (param.VAR_POSITIONAL, param.VAR_KEYWORD) or param.default is not param.empty:
            continue  # *args empty, **kwargs empty, a default as it is
        elif attention_key(param, signature):
            roles[param.name] = "array"
        elif usage.seeds_a_key(definition(request), param.name):  # PRNGKey(seed): an integer seed
            roles[param.name] = sizes.INDEX_ROLE
        else:
            try:
                roles[param.name] = _role_or_passed_on(request, param)
            except Uninferable as why:
                try:  # a bare container: by how the body uses it (containers.py)
                    roles[param.name] = reader.role(param.name, param.annotation, why)
                except Uninferable:
                    if unused.unused(definition(request), param.name):  # its value cannot matter
                        roles[param.name] = ("static", unused.UNUSED)
                        continue
                    if not made_up.names_a_class(param.annotation):
                        raise
                    refused[param.name], roles[param.name] = why, made_up.UNBUILT
    roles.update(by_use(request, roles, signature))
    left = [name for name in refused if roles[name] == made_up.UNBUILT]
    if left:
        raise refused[left[0]]
    return roles


def attention_key(param: inspect.Parameter, signature: inspect.Signature) -> bool:
    """An attention's keys, not a PRNG key: a parameter named ``key`` (``*_key``) beside one named
    ``query`` (``*_query``), without an annotation or annotated as an array (``query: Array, key:
    Array``)."""
    name = param.name
    if "key" not in name or name.replace("key", "query") not in signature.parameters:
        return False
    if not KEY_PARAMETER.fullmatch(name.lower()):
        return False
    text = "" if param.annotation is param.empty else str(param.annotation)
    return not text or any(word in text for word in _ARRAY_ANNOTATIONS)


def _role_or_passed_on(request: ArgumentRequest, param: inspect.Parameter) -> Any:
    """role(), or where it cannot guess an unannotated parameter, what the body does with it
    (passed_on.value_role: a loop's carry, an unpacked tuple)."""
    try:
        return role(param, by_members=True)
    except Uninferable:
        found = passed_on.value_role(definition(request), request.function, param.name) \
            if param.annotation is param.empty else None
        if found is None:
            raise
        return found


def by_use(request: ArgumentRequest, roles: dict[str, Any], signature: inspect.Signature) -> dict[str, Any]:
    """The roles that how the body uses a parameter gives (usage.py), for the parameters of
    ``roles`` whose name and annotation decide nothing; a made-up object for one the body reads by
    attribute (made_up.py)."""
    node, params = definition(request), dict(signature.parameters)
    found = usage.roles_by_use(node, params, roles)
    found.update(made_up.roles_by_attributes(node, params, {**roles, **found}, ranks_used(request)))
    return found


def ranked(kind: Any) -> bool:
    """A role whose arrays take the rung's rank: an array, a one-leaf pytree, an index array, a
    tuple of arrays (usage.py), a dict of arrays (containers.py), a made-up object (made_up.py)."""
    return kind in ("array", "pytree", sizes.INDEX_ROLE) or usage.is_tuple(kind) or containers.ranked(kind) or \
        made_up.is_made_up(kind) and made_up.holds_array(kind)


def one_leaf_parameters(request: ArgumentRequest, roles: dict[str, Any]) -> tuple[str, ...]:
    """The parameters of ``roles`` given a one-leaf pytree (pytrees.py); Uninferable where the
    body needs one's structure (``state.position``), which the leaf has not."""
    names = tuple(name for name, kind in roles.items() if kind == "pytree")
    why = pytrees.structure_needed(definition(request), list(names))
    if why is not None:
        raise Uninferable(why)
    return names


def _size_only(roles: dict[str, Any]) -> list[ArgumentSet]:
    """A function of sizes alone (``_eig_state_init(num_dim: int)``): one signature of concrete
    sizes, marked constant (sizes.py). Any other function that takes no array is left alone: it
    computes nothing from inputs, and what it computes from its flags or its defaults is jaxlint's
    choosing (a function of nothing may be a test, a context manager, a platform check)."""
    values = sizes.size_only(roles)
    if values is None:
        raise Uninferable("no parameter takes an array")
    return [ArgumentSet(SOURCE, (), values, constant=True)]


def _scalar_union_ranks(signature: inspect.Signature, ranks: dict[str, int]) -> dict[str, int]:
    """Rank 1 at least for a parameter whose union admits an array or a Python number
    (``ArrayLike``, ``Array | float``): its rank 0 is a Python number's form, which a function
    written for arrays meets only by accident (blackjax's ``pareto_khat(x: ArrayLike)`` ravels a
    scalar to shape (1,) and indexes it at 5: a false JX503)."""
    floors = {}
    for param in signature.parameters.values():
        annotation = param.annotation
        members = typing.get_args(annotation) if typing.get_origin(annotation) in _UNIONS else ()
        if any(member in _PYTHON_NUMBERS for member in members) or \
                (isinstance(annotation, str) and "ArrayLike" in annotation):
            floors[param.name] = max(ranks.get(param.name, 0), 1)
    return floors


def abstract(kind: Any, shape: tuple) -> Any:
    """The value of a parameter of that role: an f32 array of ``shape``, a typed key, a weakly
    typed f32 scalar, or the static value."""
    import jax

    if made_up.is_made_up(kind):
        return made_up_values.value(kind, shape, shape[0] if shape else symbolic_size())
    if containers.is_mapping(kind):  # (containers.MAPPING, keys)
        return containers.mapping_value(kind, shape)
    if usage.is_tuple(kind):  # (usage.TUPLE, length)
        return tuple(jax.ShapeDtypeStruct(shape, "float32") for _ in range(kind[1]))
    if kind in ("array", "pytree"):  # a one-leaf pytree is an array (pytrees.py)
        return jax.ShapeDtypeStruct(shape, "float32")
    if kind == sizes.INDEX_ROLE:
        return jax.ShapeDtypeStruct(shape, "int32")
    if kind == "key":
        return jax.eval_shape(lambda: jax.random.key(0))
    if kind == "float":
        return jax.ShapeDtypeStruct((), "float32", weak_type=True)
    return kind[1]  # ("static", value) or ("given", value)


def needs_instance(request: ArgumentRequest) -> bool:
    """A method whose first parameter is ``self`` (or a property): only an instance calls it."""
    if isinstance(request.function, property):
        return True
    qualname = request.target.qualname
    return "." in qualname and "<locals>" not in qualname and request.target.params[:1] == ["self"] \
        and not inspect.ismethod(request.function)


def role(param: inspect.Parameter, what: str = "parameter ", by_members: bool = False) -> Any:
    """"array", "pytree" (pytrees.py), "key", "float" or ("static", value); Uninferable when it cannot be guessed
    (``what`` comes before its name in the reason: "parameter ", "self."). ``by_members``: a union
    reads by its members (``ArrayLike``, ``Optional[Array]`` are arrays) and a type variable by its
    bound (distrax's ``EventT``), as for methods (instances.py); a function's are not guessed (on
    blackjax, rank-0 guesses for ArrayLike samples gave false JX503s)."""
    annotation = param.annotation
    if by_members and isinstance(annotation, typing.TypeVar):  # by the text of its bound or constraints
        admitted = annotation.__bound__ or annotation.__constraints__ or None
        annotation = param.empty if admitted is None else str(admitted)
    union = by_members and typing.get_origin(annotation) in (typing.Union, types.UnionType)
    if union and any(_unbound(member) for member in typing.get_args(annotation)):
        # ``A | VariableMetadata[A]`` (flax's ``Variable.value``): any value, an array among them;
        # the name decides, as for a bare type variable.
        annotation, union = param.empty, False
    text = _union_text(annotation) if union else annotation if isinstance(annotation, str) \
        else getattr(annotation, "__name__", repr(annotation))
    text = "" if annotation is param.empty else str(text)
    name = param.name
    static = sizes.axis_role(name, text) or lax_options.option_role(name, text)
    if static is not None:
        return static
    if text in ("int",):
        return ("static", 2)
    if text in ("bool",):
        return ("static", False)
    if text in ("float",):
        return "float"
    if KEY_PARAMETER.fullmatch(name.lower()) and not text.startswith(("int", "float")):
        return "key"
    by_name = sizes.shape_role(name, text) or sizes.count_role(name, text)
    if by_name is not None:
        return by_name
    described = descriptions.described_role(param.annotation) if what == "parameter " else None
    if described is not None:  # a ShapeDtypeStruct's description, a set of tags: static, not an input
        return described
    if what == "parameter " and pytrees.takes_pytree(name, text, opaque(name)):
        return "pytree"  # a one-leaf pytree; an instance's fields are not guessed so
    if text and not any(word in text for word in _ARRAY_ANNOTATIONS):
        raise Uninferable(f"{what}{name}: {text}")
    if not text and opaque(name):
        raise Uninferable(f"{what}{name} (a function, pytree or object, by its name)")
    return sizes.index_role(name, text) or "array"


def _union_text(annotation: Any) -> str:
    """A union's text without its ``Callable`` members where what is left is None alone or classes
    of the user's: what a function returns is no value of the parameter's (jaxopt's ``jac_fun:
    Optional[Callable[..., jnp.ndarray]] = None`` takes no array, ``Optional[Callable]``; distrax's
    ``BijectorLike``, a union of classes and ``Callable[[Array], Array]``, is built as its class). A
    union of a number and a function (optax's ``every_k_schedule: int | Callable``) keeps its text."""
    members = [member for member in typing.get_args(annotation) if not _is_callable(member)]
    if len(members) == len(typing.get_args(annotation)):
        return str(annotation)
    others = [member for member in members if member is not type(None)]
    if not others:
        return "Optional[Callable]"
    if all(isinstance(member, type) and member.__module__ != "builtins" for member in others):
        return f"Union[{', '.join(str(member) for member in members)}]"
    return str(annotation)


def _is_callable(annotation: Any) -> bool:
    return annotation in (collections.abc.Callable, typing.Callable) or \
        typing.get_origin(annotation) is collections.abc.Callable


def _unbound(annotation: Any) -> bool:
    """A type variable without a bound or constraints: it admits any value."""
    return isinstance(annotation, typing.TypeVar) and annotation.__bound__ is None and not annotation.__constraints__


def opaque(name: str) -> bool:
    """A parameter whose name says it takes a function, a pytree or an object."""
    name = name.lower()
    return name in _OPAQUE_NAMES or name.endswith(_OPAQUE_SUFFIXES) or bool(FUNCTION_PARAMETER.fullmatch(name))


def ranks_used(request: ArgumentRequest) -> dict[str, int]:
    """Least rank per parameter, from how the function's body uses it; a method's use of its
    instance's fields counts too, by ``self.<field>``."""
    node = definition(request)
    if node is None:
        return {}
    params = {a.arg for a in (*node.args.posonlyargs, *node.args.args, *node.args.kwonlyargs)}
    ranks: dict[str, int] = {}

    def at_least(name: str | None, rank: int) -> None:
        if (name or "").partition(".")[0] in params or (name or "").startswith("self."):
            ranks[name] = max(ranks.get(name, 0), rank)  # type: ignore[index]

    for child in ast.walk(node):
        if isinstance(child, ast.Subscript) and _is_shape(child.value):
            if isinstance(child.slice, ast.Constant) and isinstance(child.slice.value, int) and child.slice.value >= 0:
                at_least(_named(child.value.value), child.slice.value + 1)  # type: ignore[attr-defined]
        elif isinstance(child, ast.Subscript) and _named(child.value) and not _string_key(child.slice):
            index = child.slice
            parts = index.elts if isinstance(index, ast.Tuple) else [index]
            # ``...`` and ``None`` (a new axis) index no dimension of the array: ``x[:, None]`` is rank 1.
            at_least(_named(child.value), sum(1 for p in parts if not (isinstance(p, ast.Constant)
                                                                      and (p.value is ... or p.value is None))))
        elif isinstance(child, ast.Attribute) and child.attr in ("T", "mT"):
            at_least(_named(child.value), 2)
        elif isinstance(child, ast.BinOp) and isinstance(child.op, ast.MatMult):
            for side in (child.left, child.right):
                at_least(_named(side), 1)
        elif isinstance(child, ast.Assign) and isinstance(child.targets[0], ast.Tuple) and _is_shape(child.value):
            at_least(_named(child.value.value), len(child.targets[0].elts))  # type: ignore[attr-defined]
    for name, rank in rank_floors.floors(node, params).items():  # vmapped, reduced along an axis, ...
        at_least(name, rank)
    return ranks


def _named(node: ast.AST) -> str | None:
    """``x`` for a name, ``x.a.b`` for attributes of one (``self.x``; a made-up object's,
    made_up.py); None for anything else."""
    if isinstance(node, ast.Name):
        return node.id
    if isinstance(node, ast.Attribute):
        owner = _named(node.value)
        return None if owner is None else f"{owner}.{node.attr}"
    return None


def _string_key(node: ast.AST) -> bool:
    """A dict's key (``options["lower"]``): no dimension of an array."""
    return isinstance(node, ast.Constant) and type(node.value) is str


def _is_shape(node: ast.AST) -> bool:
    return isinstance(node, ast.Attribute) and node.attr == "shape" and _named(node.value) is not None


def definition(request: ArgumentRequest) -> ast.FunctionDef | ast.AsyncFunctionDef | None:
    """The target's ``def`` in the module's source index; None where it has none."""
    index = request.index
    if index is None:
        return None
    for node in index.functions:
        if first_line(node) == request.target.first_line and node.name == request.target.name:
            return node
    return None
