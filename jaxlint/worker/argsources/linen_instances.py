"""Methods of flax linen modules: a linen method only runs inside ``model.apply`` (or on a bound
module), so ``self`` is the module made from its configuration fields (instances.py guesses each
as a static field: its default, else 2, False or 0.1 for an int, bool or float, a stand-in for a
function) and bound, inside the trace, to the variables ``model.init`` makes for the method's
guessed arguments (``jax.eval_shape``: shapes, nothing computed). The variables are the
program's inputs; the signature shows the configuration fields without a default and them:
``self=Dense(features=2, variables={'params': {'bias': f32[2], 'kernel': f32[n,2]}}), x=f32[n]``.
A module whose ``init`` fails on every guess is counted as not linted, with the error.
"""
from __future__ import annotations

import dataclasses
import functools
import sys
from typing import Any, Callable

from jaxlint.worker.argsources import ArgumentRequest, ArgumentSet, not_implemented, subclasses
from jaxlint.worker.argsources.class_kinds import EMPTY, field_default
from jaxlint.worker.argsources.inferred import SOURCE, Uninferable
from jaxlint.worker.built_instances import InstanceFields, built_then_called, made_static
from jaxlint.worker.plain_classes import guarded_init

_NOT_CONFIGURATION = ("parent", "name")  # linen's own dataclass fields
_MODULES_TRIED = 3  # a module field's candidate classes, in turn


def is_linen(owner: type) -> bool:
    """``owner`` is a flax linen module (flax is never imported here: it is slow): a dataclass
    subclass of ``nn.Module``, not ``nn.Module`` itself."""
    linen = getattr(sys.modules.get("flax.linen"), "Module", None)
    return isinstance(linen, type) and issubclass(owner, linen) and dataclasses.is_dataclass(owner)


def static_module(annotation: Any, configure: Callable[[type], dict[str, Any]]) -> Any:
    """A linen module for a field of another that holds one (flax's ``RNN.cell: RNNCellBase``):
    the class ``annotation`` names, or for a base abstract in fact (its methods raise
    NotImplementedError) its concrete subclass with the fewest configuration fields without a
    default (``GRUCell(features=2)``, not ``ConvLSTMCell``, which wants images; subclasses.py's
    order among equals), made
    by flax's constructor from ``configure``'s configuration (Uninferable: the next class). None for
    any other annotation, for ``nn.Module`` itself (any module at all: no guess at which), or when
    none can be made."""
    linen = getattr(sys.modules.get("flax.linen"), "Module", None)
    if not isinstance(annotation, type) or linen is None or annotation is linen or not is_linen(annotation):
        return None
    candidates = [annotation]
    if not_implemented.abstract_in_fact(annotation):  # the plainest first: fewest fields without a default
        candidates = sorted((sub for sub in subclasses.concrete_subclasses(annotation) if is_linen(sub)),
                            key=lambda sub: sum(field_default(f) is EMPTY for f in configuration_fields(sub)))
    for candidate in candidates[:_MODULES_TRIED]:
        try:
            configuration = configure(candidate)
            module = guarded_init(candidate, configuration)
        except Exception:  # Uninferable: a field with no value; or flax's constructor refuses them
            continue
        made_static(module, {f.name: configuration[f.name] for f in configuration_fields(candidate)
                             if f.name in configuration and field_default(f) is EMPTY})
        return module
    return None


def configuration_fields(owner: type) -> list[Any]:
    """The module's dataclass fields that configure it (not linen's ``parent`` and ``name``)."""
    return [f for f in dataclasses.fields(owner) if f.name not in _NOT_CONFIGURATION and f.init]


def signatures(request: ArgumentRequest, owner: type, method: str, configuration: dict[str, Any],
               shown: dict[str, Any], rungs: list[tuple[dict[str, Any], dict[str, Any]]]) -> list[ArgumentSet]:
    """One signature per rung of the method's guessed arguments whose ``init`` works: ``self`` the
    module of ``configuration`` bound in the trace to those variables (``shown``: the fields the
    signature names). Each rung is (with the symbolic ``n``, with ``n`` = 8): the second where
    ``init`` fails with the symbol (a shape it must compute with)."""
    try:
        module = guarded_init(owner, configuration)
    except Exception as error:
        raise Uninferable(f"the linen module cannot be made: {type(error).__name__}: {error}") from None
    self_name = request.target.params[0]
    found, errors = [], []
    for symbolic, concrete in rungs:
        values, variables = symbolic, None
        for values in (symbolic, concrete):
            try:
                variables = _variables(module, method, values)
                break
            except Exception as error:  # init refuses these shapes: the next ones
                errors.append(f"{type(error).__name__}: {error}"[:200])
        if variables is None:
            continue
        instance = InstanceFields(owner, {**shown, "variables": variables}, functools.partial(_bound, module))
        call = built_then_called(request.function, self_name)
        # Configuration fields without a default (``shown``) hold sizes jaxlint chose (``features=2``):
        # the findings that judge lengths are left out, as for nnx modules.
        found.append(ArgumentSet(SOURCE, (), {self_name: instance, **values}, call=call, chosen_sizes=bool(shown)))
    if not found:
        raise Uninferable(f"model.init failed on every guess: {errors[0] if errors else 'no guess'}")
    return found


def _bound(module: Any, values: dict[str, Any]) -> Any:
    return module.bind(values["variables"])


def _variables(module: Any, method: str, values: dict[str, Any]) -> Any:
    """``jax.eval_shape(module.init)`` for the method called with ``values`` (abstract leaves
    are inputs, others static)."""
    import jax

    leaves, treedef = jax.tree_util.tree_flatten(values)
    dynamic = [i for i, leaf in enumerate(leaves) if isinstance(leaf, jax.ShapeDtypeStruct)]

    def init(key: Any, *traced: Any) -> Any:
        filled = list(leaves)
        for index, value in zip(dynamic, traced):
            filled[index] = value
        return module.init(key, method=method, **jax.tree_util.tree_unflatten(treedef, filled))

    return jax.eval_shape(init, jax.random.PRNGKey(0), *[leaves[i] for i in dynamic])

