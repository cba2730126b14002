"""A method's parameter its own class makes: dynamax's ``SSM.log_prob(self, params: ParameterSet,
...)`` takes the parameters ``params, props = model.initialize(key)`` returns, whose sizes are the
model's (a ``ParamsLGSSM`` the builder guesses has arrays of the symbolic size, which the built
model's ``state_dim=2`` disagrees with). A method of the class named ``init``, ``initialize``,
``init_*`` or ``initialize_*`` whose return annotation is the parameter's class, or a tuple
holding it (``-> Tuple[ParamsLGSSM, ParamsLGSSM]``), makes it. Parameters annotated alike take
the tuple's items in turn (``fit_em(params: ParameterSet, props: PropertySet)`` from ``->
Tuple[ParamsLGSSM, ParamsLGSSM]``: items 0 and 1). An item of the parameter's class, of a
subclass of it, or of any class where the annotation is a ``Protocol`` the class has every member
of (an empty one: any class) makes it. The maker's own required parameters get the ladder's
values, and a key parameter whose default is None a key (``initialize(key=None)`` raises without
one); a maker whose own parameters the ladder cannot guess is not used. A ``state`` its class's
init makes from the method's own values is made_state.py's (in the trace, sharing them).

The maker runs abstractly (``jax.eval_shape``) on the built instance, once per signature, under
the safeguards of a built instance's ``__init__``: its arrays become the parameter's abstract
values, inputs of the trace like any guess, what else it returns (dynamax's bijectors in
``props``) kept. Its own code is no part of the method's program (it is linted on its own): a
``jr.dirichlet`` it draws is no softmax the method takes the log of, a key it splits twice for
two items no reuse.
"""
from __future__ import annotations

import inspect
import sys
import types
import typing
from typing import Any

from jaxlint.scan.functions import KEY_PARAMETER
from jaxlint.worker import guards
from jaxlint.worker.argsources import made_state
from jaxlint.worker.argsources.annotations import evaluated_annotations
from jaxlint.worker.argsources.field_roles import has_abstract, method_parameters, role_value
from jaxlint.worker.argsources.inferred import Uninferable
from jaxlint.worker.built_instances import InstanceFields, made

MADE = "made by its class"  # a role: (MADE, class name, maker's name, its own parameters' roles, item or None)
MAKER_SECONDS = 5.0  # one maker's abstract run, as a built instance's __init__ (plain_classes.INIT_SECONDS)

_NAMES = ("init", "initialize")
_PREFIXES = ("init_", "initialize_")
_NOTHING = (typing.Any, type(None), object)  # annotations that name no class (``Any`` is a class on 3.11)
# Classes whose values the ladder makes itself (a number, a string, an array): no maker needed.
_LADDERS_OWN = ("builtins", "jax", "jaxlib", "numpy")


def is_made(role: Any) -> bool:
    return isinstance(role, tuple) and len(role) == 5 and role[0] == MADE


def made_roles(owner: type, callee: Any) -> dict[str, tuple]:
    """The roles of ``callee``'s parameters a maker of ``owner`` makes, by name."""
    try:
        signature = inspect.signature(callee)
    except (TypeError, ValueError):
        return {}
    hints = evaluated_annotations(inspect.unwrap(callee), signature)
    makers = _makers(owner, callee)
    taken: set[tuple[str, int | None]] = set()
    found = {}
    for param in list(signature.parameters.values())[1:]:
        annotation = hints.get(param.name)
        if param.default is not param.empty or not _made_class(annotation) or _state_made(owner, callee, param.name):
            continue
        for name, items, is_tuple, own in makers:
            index = next((i for i, item in enumerate(items) if (name, i) not in taken and _makes(item, annotation)),
                         None)
            if index is None:
                continue
            taken.add((name, index))
            found[param.name] = (MADE, owner.__name__, name, own, index if is_tuple else None)
            break
    return found


def _state_made(owner: type, callee: Any, name: str) -> bool:
    """A ``state`` made_state.py makes in the trace from the method's own values (jaxopt's
    ``init_state(init_params)`` for ``update(params, state)``): not made apart from them."""
    return (name == "state" or name.endswith("_state")) and made_state.state_role(owner, callee, name) is not None


def _makers(owner: type, callee: Any) -> list[tuple[str, list[Any], bool, dict[str, Any]]]:
    """(name, the classes it returns, whether in a tuple, its own parameters' roles) of each maker
    of ``owner`` whose own parameters the ladder guesses."""
    found = []
    for name in dir(owner):
        if not (name in _NAMES or name.startswith(_PREFIXES)):
            continue
        function = inspect.getattr_static(owner, name, None)
        if not inspect.isfunction(function) or function is getattr(callee, "__func__", callee):
            continue
        returned = _returned(function)
        is_tuple = typing.get_origin(returned) is tuple
        items = [item if _made_class(item) else None
                 for item in (typing.get_args(returned) if is_tuple else [returned])]
        if not any(items) or Ellipsis in typing.get_args(returned):
            continue
        try:
            own = {**method_parameters(function), **_keys(function)}
        except Uninferable:
            continue
        found.append((name, items, is_tuple, own))
    return found


def _made_class(annotation: Any) -> bool:
    """A class of the user's (or a library's) whose values only its makers know."""
    return isinstance(annotation, type) and annotation not in _NOTHING \
        and getattr(annotation, "__module__", "").partition(".")[0] not in _LADDERS_OWN


def _returned(function: Any) -> Any:
    try:
        return typing.get_type_hints(function).get("return")
    except Exception:  # a name imported under TYPE_CHECKING: no annotation to go by
        return None


def _keys(function: Any) -> dict[str, str]:
    """A key's role for each parameter named like a key whose default is None."""
    params = list(inspect.signature(function).parameters.values())[1:]
    return {p.name: "key" for p in params if p.default is None and KEY_PARAMETER.fullmatch(p.name.lower())}


def _makes(item: type, annotation: type) -> bool:
    """A value of class ``item`` passes for ``annotation``."""
    if item is None:
        return False
    if item is annotation:
        return True
    if getattr(annotation, "_is_protocol", False):
        members = {name for name in vars(annotation) if not name.startswith("_")} | \
            set(getattr(annotation, "__annotations__", {}))
        return all(hasattr(item, member) or member in getattr(item, "__annotations__", {}) for member in members)
    try:
        return issubclass(item, annotation)
    except TypeError:
        return False


class Pending:
    """A parameter its class's maker makes, before the maker runs on the signature's instance."""

    def __init__(self, maker: str, own: dict[str, Any], item: int | None) -> None:
        self.maker, self.own, self.item = maker, own, item


def value(role: tuple, n: Any, rank: int) -> Pending:
    """The maker's call for ``role``: its own arguments of rank ``rank``."""
    _, _, maker, own, item = role
    own_values = {name: role_value(r, (n,) * rank if r == "array" else (), n, rank) for name, r in own.items()}
    return Pending(maker, own_values, item)


class NotMade(Exception):
    """The maker raised, ran past its limit, or returned what is not a value of arrays."""


def evaluated(arguments: dict[str, Any], self_name: str) -> dict[str, Any]:
    """``arguments`` with each ``Pending`` the abstract value its maker returns on the instance
    ``arguments[self_name]`` (one run per maker, its items shared); NotMade with why."""
    results: dict[str, Any] = {}
    found = dict(arguments)
    for name, pending in arguments.items():
        if not isinstance(pending, Pending):
            continue
        if pending.maker not in results:
            results[pending.maker] = _run(arguments[self_name], pending)
        result = results[pending.maker]
        try:
            found[name] = result if pending.item is None else result[pending.item]
        except Exception:  # not the tuple its annotation says
            raise NotMade(f"{pending.maker} returned no item {pending.item}: {type(result).__name__}") from None
    if results and not has_abstract(found):
        raise NotMade("it returned no arrays, and no other value is an input")
    return found


def _run(instance: Any, pending: Pending) -> Any:
    import jax

    leaves, tree = jax.tree_util.tree_flatten((instance, pending.own))
    spots = [i for i, leaf in enumerate(leaves) if isinstance(leaf, jax.ShapeDtypeStruct)]
    returned: dict[str, Any] = {}

    def run(*inputs: Any) -> list[Any]:
        filled = list(leaves)
        for i, value in zip(spots, inputs):
            filled[i] = value
        self, own = jax.tree_util.tree_unflatten(tree, filled)
        out, returned["tree"] = jax.tree_util.tree_flatten(getattr(made(self), pending.maker)(**own))
        returned["leaves"] = out
        return [leaf for leaf in out if isinstance(leaf, jax.Array)]

    owner = instance.owner if isinstance(instance, InstanceFields) else type(instance)
    module = sys.modules.get(owner.__module__) or types.ModuleType(owner.__module__)
    try:
        with guards.without_side_effects(module), guards.guessed_call_limit(MAKER_SECONDS) as limit:
            shapes = iter(jax.eval_shape(run, *[leaves[i] for i in spots]))
    except guards.TimeUp:
        if not limit.fired:  # an outer limit's: its caller's
            raise
        guards.LOAD_DEPENDENT.fired = True
        raise NotMade(f"{pending.maker} ran past {MAKER_SECONDS:g} s") from None
    except Exception as error:  # the user's maker: its error is the reason
        raise NotMade(f"{pending.maker}: {type(error).__name__}: {error}") from None
    out = [_abstract(next(shapes)) if isinstance(leaf, jax.Array) else leaf for leaf in returned["leaves"]]
    return jax.tree_util.tree_unflatten(returned["tree"], out)


def _abstract(shape: Any) -> Any:
    import jax

    return jax.ShapeDtypeStruct(shape.shape, shape.dtype, weak_type=bool(getattr(shape, "weak_type", False)))
