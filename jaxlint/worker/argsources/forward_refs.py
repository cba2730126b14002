"""Annotations that name a class only by text: a string annotation (``from __future__ import
annotations``) that ``typing.get_type_hints`` could not evaluate with the rest, a
``ForwardRef('gpjax.kernels.base.AbstractKernel')``, and a type variable whose bound is one
(gpjax's ``kernel: K``, ``K = TypeVar("K", bound="gpjax.kernels.base.AbstractKernel")``), resolved
to the class against the defining module's names, else as a dotted path through the modules
already imported, or one of the annotation's own package that is imported for it. What does not
resolve stays as it was."""
from __future__ import annotations

import sys
import typing
from typing import Any

from jaxlint.worker import guards
from jaxlint.worker.instrument import unrecorded

# A class there, or in Python's own modules (a union's ``types.UnionType``), is no class of the user's
# to build (equinox's AbstractVar[...], jaxtyping's PyTree[...]).
_NOT_USERS = ("jax", "jaxlib", "numpy", "jaxtyping", "equinox")


def resolved(annotation: Any, namespace: dict[str, Any] | None = None) -> Any:
    """``annotation`` with a string, a ForwardRef, or a type variable bound to a class of the
    user's (or to a string naming one) replaced by that class, and a generic class of the user's
    by the class (diffrax's ``term: AbstractTerm[_VF, _Control]``), as is jaxtyping's ``PyTree`` of a
    class of the user's (``terms: PyTree[AbstractTerm]``: one instance is such a tree); else
    ``annotation``."""
    origin = typing.get_origin(annotation)
    if isinstance(origin, type) and _users(origin):
        return origin
    leaf = getattr(annotation, "leaftype", None) if type(annotation).__name__ == "_MetaPyTree" else None
    if isinstance(leaf, type) and _users(leaf):  # jaxtyping's PyTree[AbstractTerm]: one term is such a tree
        return resolved(leaf, namespace)
    if isinstance(annotation, typing.TypeVar):
        bound = annotation.__bound__
        if bound is None:
            return annotation
        module = sys.modules.get(getattr(annotation, "__module__", "") or "")
        found = _class(bound, vars(module) if module is not None else namespace or {})
        return found if found is not None and _users(found) else annotation
    if isinstance(annotation, (str, typing.ForwardRef)):
        found = _class(annotation, namespace or {})
        return found if found is not None else annotation
    return annotation


def class_annotations(owner: type) -> dict[str, Any]:
    """Each annotated attribute of ``owner`` and its bases, resolved one by one against the
    module of the class that declares it (``typing.get_type_hints`` fails for all when one name
    does not resolve; a name that does not stays its text)."""
    found: dict[str, Any] = {}
    for klass in reversed(owner.__mro__):
        own = vars(klass).get("__annotations__")
        if not isinstance(own, dict):
            continue
        module = sys.modules.get(klass.__module__)
        namespace = {**(vars(module) if module is not None else {}), klass.__name__: klass}
        for name, annotation in own.items():
            found[name] = _evaluated(annotation, namespace)
    return found


def _evaluated(annotation: Any, namespace: dict[str, Any]) -> Any:
    if isinstance(annotation, str):
        try:
            annotation = eval(annotation, dict(namespace))  # noqa: S307 - the user's own annotation
        except Exception:
            return resolved(annotation, namespace)
    return resolved(annotation, namespace)


def _class(reference: Any, namespace: dict[str, Any]) -> Any:
    """The class ``reference`` (a class, a string or a ForwardRef) names; None if it names none."""
    if isinstance(reference, typing.ForwardRef):
        reference = reference.__forward_arg__
    if not isinstance(reference, str):
        return reference if isinstance(reference, type) else None
    try:
        found = eval(reference, dict(namespace))  # noqa: S307 - the user's own annotation
    except Exception:
        found = _dotted(reference, str(namespace.get("__name__", "")).partition(".")[0])
    return found if isinstance(found, type) else None


def _dotted(path: str, package: str) -> Any:
    """``package.module.Class`` through ``sys.modules``: the longest imported module prefix; a
    module of ``package`` (the annotation's own) not imported yet is imported for it."""
    parts = path.split(".")
    for cut in range(len(parts) - 1, 0, -1):
        name = ".".join(parts[:cut])
        module = sys.modules.get(name)
        if module is None and parts[0] == package:
            module = _imported(name)
        if module is None:
            continue
        found: Any = module
        for part in parts[cut:]:
            found = getattr(found, part, None)
        return found
    return None


def _imported(name: str) -> Any:
    with unrecorded():  # the package's own code, not the checked module's doing
        return guards.guarded_import(name)  # no such module (a class path's prefix), or one that fails: None


def _users(owner: type) -> bool:
    package = str(getattr(owner, "__module__", "")).partition(".")[0]
    return package not in _NOT_USERS and package not in sys.stdlib_module_names
