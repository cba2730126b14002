"""Which classes the instance builder builds (instances.py): their kind ("namedtuple",
"dataclass" or "pytree"; a flax linen module, an abstract class or another class gives none) and
their fields' defaults and annotations."""
from __future__ import annotations

import dataclasses
import inspect
import sys
import typing
from typing import Any

from jaxlint.worker import plain_classes
from jaxlint.worker.argsources import forward_refs
from jaxlint.worker.argsources.annotations import evaluated_annotations
from jaxlint.worker.argsources.inferred import Uninferable

EMPTY = inspect.Parameter.empty
NO_KIND = "not a dataclass, NamedTuple or pytree class"


def buildable_kind(owner: type) -> str:
    """class_kind's, else "plain" for a class built through its ``__init__`` (plain_classes.py): a
    method's ``self``, or the subclass chosen for an abstract base (field_roles.py), never another
    field's or parameter's instance."""
    try:
        return class_kind(owner)
    except Uninferable as why:
        if str(why) != NO_KIND:
            raise
    plain_classes.check_buildable(owner)
    return plain_classes.KIND


def class_kind(owner: type) -> str:
    """"namedtuple", "dataclass" or "pytree"; Uninferable when no instance can be built."""
    linen = getattr(sys.modules.get("flax.linen"), "Module", None)  # never imported here: it is slow
    if isinstance(linen, type) and issubclass(owner, linen):
        raise Uninferable("a flax linen module: its methods run inside model.apply (an examples file "
                          "that registers the module traces them)")
    if is_abstract(owner):  # abc, equinox's AbstractVar
        raise Uninferable("an abstract class")
    if issubclass(owner, tuple) and hasattr(owner, "_fields"):
        return "namedtuple"
    if dataclasses.is_dataclass(owner):
        return "dataclass"
    if _is_pytree_class(owner):
        return "pytree"
    raise Uninferable(NO_KIND)


def init_signature(owner: type) -> inspect.Signature:
    """The parameters a call of the class takes: ``inspect.signature(owner)``, except where a
    metaclass's ``__call__(cls, *args, **kwargs)`` hides them (flax's ``Variable``): then its own
    ``__init__``'s, without ``self``. Raises TypeError or ValueError where there is none."""
    signature = inspect.signature(owner)
    passes_all = all(p.kind in (p.VAR_POSITIONAL, p.VAR_KEYWORD) for p in signature.parameters.values())
    init = owner.__dict__.get("__init__") or getattr(owner, "__init__", object.__init__)
    if not passes_all or not signature.parameters or init is object.__init__ \
            or type(owner).__call__ is type.__call__:
        return signature
    own = inspect.signature(init)
    return own.replace(parameters=list(own.parameters.values())[1:])


def is_abstract(owner: type) -> bool:
    return inspect.isabstract(owner) or bool(getattr(owner, "__abstractvars__", None))


def _is_pytree_class(owner: type) -> bool:
    """The class has ``register_pytree_node_class``'s methods (distrax registers its classes so
    when the first instance is made), or JAX flattens its instances: an empty one is not a leaf
    to it (JAX's registry has no public lookup)."""
    import jax

    if callable(getattr(owner, "tree_flatten", None)) and callable(getattr(owner, "tree_unflatten", None)):
        return True
    try:
        empty = object.__new__(owner)
    except Exception:
        return False
    try:
        return not jax.tree_util.treedef_is_leaf(jax.tree_util.tree_structure(empty))
    except Exception:  # the class's flatten ran, and failed on an instance without fields
        return True


def field_defaults(owner: type, kind: str) -> dict[str, Any]:
    """Each field's default (``EMPTY``: none): a pytree class's ``__init__`` parameters'."""
    if kind in ("pytree", plain_classes.KIND):
        try:
            signature = init_signature(owner)
        except (TypeError, ValueError):
            raise Uninferable("its __init__ has no signature") from None
        return {p.name: p.default for p in signature.parameters.values()
                if p.kind not in (p.VAR_POSITIONAL, p.VAR_KEYWORD)}
    if kind == "namedtuple":
        defaults = owner._field_defaults  # type: ignore[attr-defined]
        return {name: defaults.get(name, EMPTY) for name in owner._fields}  # type: ignore[attr-defined]
    return {f.name: field_default(f) for f in dataclasses.fields(owner)}


def class_hints(owner: type) -> dict[str, Any]:
    """Each field's annotation, forward references resolved (forward_refs.py); a field annotated
    ``Any`` takes the annotation of its class's ``__init__`` parameter of the same name, if any
    (gpjax's ``constant: Any``, set from ``constant: ScalarFloat | Float[Array, " O"]``)."""
    try:
        hints = {name: forward_refs.resolved(hint) for name, hint in typing.get_type_hints(owner).items()}
    except Exception:  # one unresolvable name fails them all: each field's own, one by one, then
        hints = forward_refs.class_annotations(owner)
    if any(hint is Any for hint in hints.values()):
        hints.update(_init_annotations(owner, [name for name, hint in hints.items() if hint is Any]))
    return hints


def _init_annotations(owner: type, names: list[str]) -> dict[str, Any]:
    try:
        init = owner.__init__
        annotations = evaluated_annotations(init, inspect.signature(init))
    except Exception:  # no signature, or one the annotations module cannot read
        return {}
    return {name: annotations[name] for name in names if annotations.get(name, Any) is not Any}


def field_default(field: dataclasses.Field) -> Any:
    if field.default is not dataclasses.MISSING:
        return field.default
    if field.default_factory is not dataclasses.MISSING:
        try:
            return field.default_factory()
        except Exception:
            return EMPTY
    return EMPTY
