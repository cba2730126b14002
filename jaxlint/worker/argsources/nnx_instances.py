"""Methods and constructors of flax nnx modules: an nnx module is a plain class whose ``__init__``
makes its parameters (``nnx.Param`` arrays) from sizes and an ``rngs: nnx.Rngs``, so ``self`` is
made by calling its ``__init__`` with guessed values, outside the trace: each parameter without a
default gets its annotation's static value (instances.py's rules: 2 for an ``int``, False, 0.1, a
stand-in for a function), ``rngs`` gets ``nnx.Rngs(0)``, the defaults are kept. Its variables
(``nnx.split``: parameters, batch statistics, RNG keys) then become the trace's inputs, abstract,
and the module is merged back from them inside the trace, so that the method's operations are on
tracers. The signature shows the ``__init__`` values guessed and the variables:
``self=Linear(in_features=2, out_features=2, rngs=Rngs(0), variables={'bias': f32[2], 'kernel': f32[2,2]})``.
The method's arrays are guessed on the ladder's ranks with the symbolic ``n`` and then with ``n`` the
guessed size (2), which a layer's input must have (``x @ kernel``). A guessed size is a real value:
a bad point among the variables alone is left out (analysis/instance_points.py).

A parameter annotated with another nnx class gets a module of it made the same way (an abstract
one's first concrete subclass: ``RNN(cell=GRUCell(...))``), ``_MAX_DEPTH`` deep. Any subclass of nnx's
``Pytree`` is built so (a metric too); a method that takes no array runs on the variables alone.

A constructor (``__init__``) is traced by making the module inside the trace with ``rngs`` made from
a traced key, so that its initializers run on tracers; without ``rngs``, on jaxlint's constants (a
trace marked constant). An ``__init__`` that refuses the guesses, or a parameter with no guess (a
string, ``nnx.Module`` itself), means no instance: counted as not linted with why. Every size is
jaxlint's: the findings that judge lengths or bytes are left out (``chosen_sizes``, sizes.py).

flax is never imported here (it is slow): a class is an nnx module only where ``flax.nnx`` is
imported already.
"""
from __future__ import annotations

import functools
import inspect
import sys
import typing
from typing import Any

from jaxlint.worker import built_instances
from jaxlint.worker.argsources import ArgumentRequest, ArgumentSet, not_implemented, subclasses
from jaxlint.worker.argsources.annotations import evaluated_annotations
from jaxlint.worker.argsources.class_kinds import is_abstract
from jaxlint.worker.argsources.field_roles import field_role, has_abstract
from jaxlint.worker.argsources.inferred import SOURCE, Uninferable
from jaxlint.worker.built_instances import InstanceFields, built_then_called
from jaxlint.worker.plain_classes import guarded_init

_MAX_DEPTH = 2  # modules inside modules: Bidirectional's RNN, and its cell
SIZE = 2  # every guessed int: a layer's sizes, and the method's arrays' size on the concrete rungs
_RNGS = "rngs"


def is_nnx(owner: type) -> bool:
    """``owner`` is a subclass of nnx's ``Pytree`` (``Object`` before flax 0.11): a module, a
    metric, an optimizer; not ``nnx.Module`` or ``Pytree`` itself."""
    nnx = sys.modules.get("flax.nnx")
    bases = [getattr(nnx, name, None) for name in ("Pytree", "Object", "Module")]
    bases = [base for base in bases if isinstance(base, type)]
    return any(issubclass(owner, base) for base in bases) and owner not in bases


class _Shown:
    """A guessed ``__init__`` value that is no input (``nnx.Rngs(0)``), shown by its text."""

    def __init__(self, text: str) -> None:
        self.text = text

    def __repr__(self) -> str:
        return self.text


class _Nested:
    """Another nnx module an ``__init__`` takes (``RNN(cell)``), made from its own guessed values."""

    def __init__(self, owner: type, values: dict[str, Any]) -> None:
        self.owner, self.values = owner, values

    def __repr__(self) -> str:
        return f"{self.owner.__name__}({', '.join(f'{name}={value!r}' for name, value in self.values.items())})"


def init_values(owner: type, depth: int = 0) -> dict[str, Any]:
    """The guessed ``__init__`` arguments (``rngs`` a ``_Shown``, another module a ``_Nested``, ``_MAX_DEPTH``
    deep); Uninferable where one has no guess."""
    try:
        init = owner.__init__
        params = list(inspect.signature(init).parameters.values())[1:]
        hints = evaluated_annotations(init, inspect.signature(init))
    except (TypeError, ValueError):
        raise Uninferable("its __init__ has no signature") from None
    values: dict[str, Any] = {}
    for param in params:
        if param.kind in (param.VAR_POSITIONAL, param.VAR_KEYWORD):
            continue
        hint = hints.get(param.name, param.empty)
        if param.name == _RNGS or _names_rngs(hint):  # given even where optional: the module draws from it
            values[param.name] = _Shown("Rngs(0)")
            continue
        if param.default is not param.empty:
            continue
        nested = _nested(hint, depth)
        if nested is not None:
            values[param.name] = nested
            continue
        _, value = field_role(param.name, hint, param.empty, True, 0)
        values[param.name] = built_instances.made(value)
    return values


def _nested(hint: Any, depth: int) -> _Nested | None:
    """A module for a parameter annotated with an nnx class of a library's (not ``nnx.Module``
    itself): the class, or, for an abstract one (``RNNCellBase``), its first concrete subclass
    (subclasses.py) whose own values can be guessed; None for another annotation."""
    if not isinstance(hint, type) or not is_nnx(hint):
        return None
    if depth >= _MAX_DEPTH:
        raise Uninferable(f"a {hint.__name__} nested past {_MAX_DEPTH} modules")
    abstract = is_abstract(hint) or not_implemented.abstract_in_fact(hint)
    whys = []
    for candidate in subclasses.concrete_subclasses(hint) if abstract else [hint]:
        try:
            return _Nested(candidate, init_values(candidate, depth + 1))
        except Uninferable as why:
            whys.append(f"{candidate.__name__}: {why}")
    raise Uninferable(f"no {hint.__name__} module can be made ({'; '.join(whys[:2]) or 'no concrete subclass'})")


def _names_rngs(hint: Any) -> bool:
    rngs = getattr(sys.modules.get("flax.nnx"), "Rngs", None)
    members = typing.get_args(hint) if typing.get_args(hint) else (hint,)
    return rngs is not None and any(member is rngs for member in members)


def _concrete(values: dict[str, Any], key: Any = 0) -> dict[str, Any]:
    """``values`` with each ``_Shown`` rngs made, ``nnx.Rngs(key)``, and each ``_Nested`` module."""
    from flax import nnx

    def made(value: Any) -> Any:
        if isinstance(value, _Shown):
            return nnx.Rngs(key)
        if isinstance(value, _Nested):
            return guarded_init(value.owner, _concrete(value.values, key))
        return value

    return {name: made(value) for name, value in values.items()}


def signatures(request: ArgumentRequest, owner: type, rungs: list[tuple[dict[str, Any], dict[str, Any]]]
               ) -> list[ArgumentSet]:
    """One signature per value of ``rungs`` (the method's guessed arguments, symbolic then sized):
    ``self`` the module made once from the guessed ``__init__`` values, merged in the trace from its
    abstract variables."""
    import jax
    from flax import nnx

    values = init_values(owner)
    try:
        graphdef, state = nnx.split(_made(owner, values))
        variables = jax.tree_util.tree_map(lambda leaf: jax.ShapeDtypeStruct(leaf.shape, leaf.dtype),
                                           state.to_pure_dict())
    except Exception as error:
        raise Uninferable(f"the nnx module cannot be made: {type(error).__name__}: {error}"[:300]) from None
    if not jax.tree_util.tree_leaves(variables) and not any(has_abstract(symbolic) for symbolic, _ in rungs):
        raise Uninferable("neither its variables nor the method's parameters take an array")
    self_name = request.target.params[0]
    instance = InstanceFields(owner, {**values, "variables": variables},
                              functools.partial(_merged, graphdef, state))
    call = built_then_called(request.function, self_name)
    # Both sizes where the method takes arrays; once where its arguments hold none (sized is the same).
    tried = [one for symbolic, sized in rungs for one in ((symbolic, sized) if has_abstract(symbolic) else (symbolic,))]
    return [ArgumentSet(SOURCE, (), {self_name: instance, **arguments}, call=call, built=(self_name,),
                        chosen_sizes=True) for arguments in tried]


def _made(owner: type, values: dict[str, Any]) -> Any:
    """The module, made abstractly (``nnx.eval_shape``: nothing computed), else, for an ``__init__``
    that reads its arrays' values (``if jnp.any(...)``), made in fact."""
    from flax import nnx

    try:
        return nnx.eval_shape(lambda: guarded_init(owner, _concrete(values)))
    except Exception:
        return guarded_init(owner, _concrete(values))


def _merged(graphdef: Any, state: Any, values: dict[str, Any]) -> Any:
    """The module merged from ``values``' variables (a copy of ``state``'s variables holds them:
    the module made outside the trace keeps its own)."""
    import jax
    from flax import nnx

    copy = jax.tree_util.tree_map(lambda leaf: leaf, state)
    nnx.replace_by_pure_dict(copy, values["variables"])
    return nnx.merge(graphdef, copy)


def constructor_signatures(request: ArgumentRequest, owner: type) -> list[ArgumentSet]:
    """The module's ``__init__`` traced: the module made inside the trace, ``rngs`` from a traced key."""
    import jax

    values = init_values(owner)
    if not any(isinstance(value, _Shown) for value in values.values()):  # every value jaxlint's
        return [ArgumentSet(SOURCE, (), values, call=_maker(owner), constant=True)]
    key = jax.ShapeDtypeStruct((), jax.random.key(0).dtype)
    keys = {name: key if isinstance(value, _Shown) else value for name, value in values.items()}
    return [ArgumentSet(SOURCE, (), keys, call=_maker(owner), chosen_sizes=True)]


def _maker(owner: type) -> Any:
    """The traced call: the module made with ``nnx.Rngs`` of each traced key, its arrays returned."""
    def make(**values: Any) -> list[Any]:
        import jax
        from flax import nnx

        key = next((value for value in values.values() if _is_key(value)), 0)
        instance = guarded_init(owner, _concrete({name: _Shown("") if _is_key(value) else value
                                                  for name, value in values.items()}, key))
        return [leaf for leaf in jax.tree_util.tree_leaves(nnx.state(instance)) if isinstance(leaf, jax.Array)]

    make.__name__ = make.__qualname__ = owner.__name__  # JAX's messages name the class
    return make


def _is_key(value: Any) -> bool:
    import jax

    return isinstance(value, jax.Array) and jax.dtypes.issubdtype(value.dtype, jax.dtypes.prng_key)
