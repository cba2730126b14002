"""The concrete subclasses of an abstract base class that a field or a parameter is annotated with
(numpyro's ``base_dist: Distribution``, diffrax's ``term: AbstractTerm``, brax's ``env: Env``), or
whose own method is traced (``PipelineEnv.pipeline_step``): the classes instances.py may build in
its place, in an order that does not depend on import order. Which subclasses exist does: those of
the modules the worker has imported by then (the checked module's imports, and the modules of the
worker's earlier jobs), and those of the base's package that declare subclasses
(subclass_modules.py), imported for it."""
from __future__ import annotations

import inspect
import sys
from typing import Any, Callable

from jaxlint.worker.argsources import not_implemented, subclass_modules

_MAX_CANDIDATES = 12  # the subclasses tried, each built by the builder's rules (cheap: no trace)
_ARRAY_PACKAGES = ("jax", "jaxlib", "numpy")  # their abstract classes are array types, not classes to build


def concrete_subclasses(base: type, keep: Callable[[type], bool] = lambda sub: True,
                        private: bool = False) -> list[type]:
    """``base``'s subclasses, at any depth, defined in its own top-level package (never a test
    module's, nor one only a user's code defines), that are not abstract and that ``keep`` keeps,
    sorted by module and name; the first ``_MAX_CANDIDATES``. For a base with methods that only
    raise NotImplementedError (not_implemented.py; numpyro's ``Distribution``, distrax's, an ABC),
    not one abstract in fact itself, and those that fill more of those methods first (numpyro's
    ``Normal``, with a ``cdf``, before ``BetaBinomial``, without). None for a base of Python's own
    (``Sequence``, ``Mapping``): its subclasses there (``UserList``, ``Counter``) are no guess at
    what a caller passes; nor for JAX's or NumPy's (``jax.Array`` is an ABC to JAX 0.4.35, whose
    ``EArray`` is no array a caller passes). A class whose name starts with ``_`` is left out,
    unless ``private`` (a method's ``self`` that inherits the method: its code is the base's).
    The package's modules that define subclasses are imported first (subclass_modules.py)."""
    package = base.__module__.partition(".")[0]
    if package in sys.stdlib_module_names or package in _ARRAY_PACKAGES:
        return []
    subclass_modules.import_defining_modules(base)
    unfilled = not_implemented.unimplemented(base)
    found, seen, todo = [], {base}, [base]
    while todo:
        for sub in _subclasses(todo.pop()):
            if sub in seen:
                continue
            seen.add(sub)
            todo.append(sub)
            module = sub.__module__
            if module.partition(".")[0] != package or "test" in module \
                    or (sub.__name__.startswith("_") and not private):
                continue
            if inspect.isabstract(sub) or getattr(sub, "__abstractvars__", None) \
                    or (unfilled and not_implemented.abstract_in_fact(sub)):
                continue
            if keep(sub):
                found.append(sub)
    found.sort(key=lambda sub: (-not_implemented.filled(sub, unfilled), sub.__name__.startswith("_"), sub.__module__,
                                sub.__qualname__))
    return found[:_MAX_CANDIDATES]


def _subclasses(owner: type) -> list[type]:
    try:
        return list(type.__subclasses__(owner))
    except TypeError:  # a metaclass whose __subclasses__ differs
        return []


def inherits(sub: type, name: str, raw: Any) -> bool:
    """``sub`` has the attribute ``name`` as ``raw``, its base's (a method it does not override)."""
    try:
        return inspect.getattr_static(sub, name) is raw
    except AttributeError:
        return False
