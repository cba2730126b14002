"""Pure stand-ins for a function, a transformation or a dtype a factory or a function takes (``logdensity_fn``,
``fn: Callable``, ``inner: GradientTransformation``), so that the closures it returns can be made
and traced: where a closure calls one, the stand-in computes something plain of its arguments,
with no operation any rule reports.

For a function, two kinds, by the parameter's name or its ``Callable[..., R]`` annotation (or a
union of callables and classes, no arrays or numbers: distrax's ``BijectorLike``): a
scalar of a tree (``-0.5 * sum(x ** 2)`` over the first argument's leaves) where the name says the
function gives one (``logdensity_fn``, ``loss_fn``, ``energy_fn``, ...) or ``R`` is ``float``;
else the first argument as it is. A parameter annotated with a NamedTuple of ``init`` and
``update`` (optax's ``GradientTransformation``) gets the identity transformation: ``init`` makes
``()``, ``update`` returns the updates and the state as they came (``optax.identity()``). What a
stand-in returns is a value of its own in the jaxpr (0 added), so no finding turns on the stand-in
being the identity. A ``dtype`` (``*_dtype``) parameter gets float32; an initializer (annotated
with jax's ``Initializer``, or named ``kernel_init``) ``jax.nn.initializers.lecun_normal()``.
"""
from __future__ import annotations

import inspect
import re
import types
import typing
from typing import Any, Callable

from jaxlint.scan.functions import FUNCTION_PARAMETER

# Names of functions that return a scalar of their argument: log-densities, losses, energies.
SCALAR_NAME = re.compile(r"\w*(?:logdensity|log_density|logprob|log_prob|logpdf|log_likelihood|loglik|loss|energy"
                         r"|potential|objective|neg_log)\w*")
# Names of parameters and fields that take an array initializer (flax's and brax's ``kernel_init``).
INITIALIZER_NAME = re.compile(r"\w*(?:kernel|bias|weight|embedding|scale)_init(?:ializer)?")
_UNIONS = (typing.Union, types.UnionType)
_CALLABLE_TEXT = ("Callable", "collections.abc.Callable", "typing.Callable")


class StandIn:
    """A pure function standing in for the user's, shown in signatures by what it computes."""

    def __init__(self, compute: Callable[..., Any], text: str) -> None:
        self.compute, self.text = compute, text
        self.__name__ = self.__qualname__ = "stand_in"

    def __call__(self, *args: Any, **kwargs: Any) -> Any:
        return self.compute(*args)

    def __repr__(self) -> str:
        return self.text


def _first(*args: Any) -> Any:
    """Its first argument; called with none (``fn(*args)`` where jaxlint left ``*args`` empty:
    equinox's ``filter_closure_convert(fn, *args)``), a float32 0, a value of its own."""
    if not args:
        import jax.numpy as jnp

        return jnp.zeros((), "float32")
    return _apart(args[0])


def _minus_half_sum_of_squares(*args: Any) -> Any:
    import jax
    import jax.numpy as jnp

    return _apart(-0.5 * sum(jnp.sum(jnp.square(leaf)) for leaf in jax.tree_util.tree_leaves(args[0])))


def _apart(tree: Any) -> Any:
    """``tree`` with 0 added to each array leaf: the same numbers and gradient, but a value of its
    own in the jaxpr, so no rule takes it for the argument (a guard on ``x`` is not one on
    ``fn(x)``: ``where(x > 0, log(fn(x)), 0)`` is no finding, as ``fn`` could be ``exp``)."""
    import jax
    import jax.numpy as jnp

    def apart(leaf: Any) -> Any:
        is_array = isinstance(leaf, jax.Array) or hasattr(leaf, "aval")
        return leaf + jnp.zeros((), leaf.dtype) if is_array and jnp.issubdtype(leaf.dtype, jnp.inexact) else leaf

    return jax.tree_util.tree_map(apart, tree)


FIRST_ARGUMENT = StandIn(_first, "<stand-in: its first argument>")
SCALAR = StandIn(_minus_half_sum_of_squares, "<stand-in: -0.5*sum(x**2)>")


def _empty_state(*args: Any) -> Any:
    return ()


def _updates_as_they_are(*args: Any) -> Any:
    return _apart(args[0]), args[1]


def _second(*args: Any) -> Any:
    return _apart(args[1])


def _carry_and_x(*args: Any) -> Any:
    return _apart(args[0]), _apart(args[1])


def _false(*args: Any) -> Any:
    import jax.numpy as jnp

    return jnp.zeros((), bool)


# For a function passed on where JAX asks for one of a form (argsources/passed_on.py): a
# ``fori_loop`` body, a ``scan`` body, a ``while_loop`` condition.
SECOND_ARGUMENT = StandIn(_second, "<stand-in: its second argument>")
CARRY_AND_X = StandIn(_carry_and_x, "<stand-in: (carry, x)>")
FALSE = StandIn(_false, "<stand-in: False>")
EMPTY_STATE = StandIn(_empty_state, "<stand-in: ()>")
UPDATES_AS_THEY_ARE = StandIn(_updates_as_they_are, "<stand-in: (updates, state)>")


def for_parameter(param: inspect.Parameter) -> Any:
    """The stand-in for a parameter that takes a function (by its ``Callable`` annotation or,
    without one, by its name) or a transformation, or None for any other parameter."""
    annotation = param.annotation
    if param.name.lower() == "dtype" or param.name.lower().endswith("_dtype"):
        return _float32() if annotation is param.empty or "dtype" in str(annotation).lower() else None
    transformation = _transformation(annotation)
    if transformation is not None:
        return transformation
    if _is_initializer(param):
        return initializer()
    text = annotation if isinstance(annotation, str) else inspect.formatannotation(annotation)
    if annotation is param.empty:
        if not FUNCTION_PARAMETER.fullmatch(param.name.lower()):
            return None
    elif not str(text).startswith(_CALLABLE_TEXT) and not _callable_union(annotation):
        return None
    if SCALAR_NAME.fullmatch(param.name.lower()) or _returns_float(annotation):
        return SCALAR
    return _tuple_stand_in(annotation) or FIRST_ARGUMENT


def for_parameters(function: Any) -> dict[str, Any]:
    """A stand-in for each parameter of ``function`` that takes a function or a transformation and
    has no default (blackjax's ``kernel(rng_key, state, logdensity_fn, step_size)``)."""
    try:
        parameters = inspect.signature(function).parameters.values()
    except (TypeError, ValueError):
        return {}
    found = {}
    for param in parameters:
        if param.default is param.empty and param.kind not in (param.VAR_POSITIONAL, param.VAR_KEYWORD):
            stand_in = for_parameter(param)
            if stand_in is not None:
                found[param.name] = stand_in
    return found


def _is_initializer(param: inspect.Parameter) -> bool:
    """Annotated with jax's ``Initializer`` protocol (``jax.nn.initializers.Initializer``), or named
    as one (``kernel_init``) without an annotation or with a ``Callable`` one."""
    annotation = param.annotation
    if isinstance(annotation, type) and annotation.__name__ == "Initializer" \
            and annotation.__module__.split(".")[0] in ("jax", "jaxlib"):
        return True
    text = annotation if isinstance(annotation, str) else inspect.formatannotation(annotation)
    plain = annotation is param.empty or str(text).startswith(_CALLABLE_TEXT)
    return plain and INITIALIZER_NAME.fullmatch(param.name.lower()) is not None


def initializer() -> StandIn:
    """``jax.nn.initializers.lecun_normal()``, a real initializer a user passes (flax's ``Dense``
    default): it runs only in ``model.init``, whose variables are the traced program's inputs."""
    import jax

    initializer = jax.nn.initializers.lecun_normal()
    return StandIn(lambda *args: initializer(*args), "jax.nn.initializers.lecun_normal()")


def _float32() -> Any:
    import jax.numpy as jnp

    return jnp.dtype("float32")


def _transformation(annotation: Any) -> Any:
    """The identity transformation where the annotation (or a member of its union) is a NamedTuple
    of ``init`` and ``update`` (optax's ``GradientTransformation``): ``init`` makes an empty
    state, ``update`` passes the updates and the state on, as ``optax.identity()`` does."""
    members = typing.get_args(annotation) if typing.get_origin(annotation) in _UNIONS else (annotation,)
    for member in members:
        fields = getattr(member, "_fields", None) if isinstance(member, type) else None
        if fields and issubclass(member, tuple) and {"init", "update"} <= set(fields):
            try:
                return member(**{name: EMPTY_STATE if name == "init" else UPDATES_AS_THEY_ARE for name in fields})
            except Exception:  # a NamedTuple whose other fields mean something else: no stand-in
                return None
    return None


def _callable_union(annotation: Any) -> bool:
    """A union with a ``Callable`` member and no array or number member: a function or an object
    (distrax's ``BijectorLike``, jax_md's ``DisplacementOrMetricFn``), which a function stands in
    for; ``Union[float, Array, Callable]`` (a schedule or a constant) is an array's."""
    if typing.get_origin(annotation) not in _UNIONS:
        return False
    members = typing.get_args(annotation)
    texts = [inspect.formatannotation(member) for member in members]
    if not any(text.startswith(_CALLABLE_TEXT) for text in texts):
        return False
    return not any(member in (int, float, complex, bool) or (not text.startswith(_CALLABLE_TEXT) and any(
        word in text for word in ("Array", "ndarray", "Numeric", "Scalar"))) for member, text in zip(members, texts))


def _tuple_stand_in(annotation: Any) -> StandIn | None:
    """For ``Callable[..., tuple[R1, R2]]`` (a function with an auxiliary output, optimistix's
    ``fn: Callable[[Y, Any], tuple[Scalar, Aux]]``): a stand-in returning a tuple of as many
    items, each a scalar of the first argument where its type says a scalar (``float``, a
    jaxtyping array of shape ``''``), else the first argument; None for any other annotation
    (``tuple[X, ...]``, a bare ``tuple``, more than four items)."""
    returned = typing.get_args(annotation)[-1] if typing.get_origin(annotation) is not None \
        and typing.get_args(annotation) and not isinstance(annotation, str) else None
    items = typing.get_args(returned) if typing.get_origin(returned) is tuple else ()
    if not 2 <= len(items) <= 4 or Ellipsis in items:
        return None
    scalars = [item is float or getattr(item, "dim_str", None) == "" for item in items]
    parts = [SCALAR if scalar else FIRST_ARGUMENT for scalar in scalars]
    return StandIn(lambda *args: tuple(part.compute(*args) for part in parts),
                   f"<stand-in: ({', '.join(part.text[len('<stand-in: '):-1] for part in parts)})>")


def _returns_float(annotation: Any) -> bool:
    """``Callable[..., float]`` (the text ``..., float]`` for a string annotation)."""
    if isinstance(annotation, str):
        return annotation.replace(" ", "").endswith(",float]")
    arguments = typing.get_args(annotation)
    return bool(arguments) and arguments[-1] is float
