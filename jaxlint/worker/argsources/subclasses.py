"""The concrete subclasses of an abstract base class that a field is annotated with (numpyro's
``base_dist: Distribution``, diffrax's ``term: AbstractTerm``): the classes instances.py may build
in its place, in an order that does not depend on import order."""
from __future__ import annotations

import inspect

_MAX_CANDIDATES = 12  # the subclasses tried, each built by the builder's rules (cheap: no trace)


def concrete_subclasses(base: type) -> list[type]:
    """``base``'s subclasses, at any depth, defined in its own top-level package (never a test
    module's, nor one only a user's code defines), that are not abstract, sorted by module and
    name; the first ``_MAX_CANDIDATES``."""
    package = base.__module__.partition(".")[0]
    found, seen, todo = [], {base}, [base]
    while todo:
        for sub in _subclasses(todo.pop()):
            if sub in seen:
                continue
            seen.add(sub)
            todo.append(sub)
            module = sub.__module__
            if module.partition(".")[0] != package or "test" in module or sub.__name__.startswith("_"):
                continue
            if not inspect.isabstract(sub) and not getattr(sub, "__abstractvars__", None):
                found.append(sub)
    found.sort(key=lambda sub: (sub.__module__, sub.__qualname__))
    return found[:_MAX_CANDIDATES]


def _subclasses(owner: type) -> list[type]:
    try:
        return list(type.__subclasses__(owner))
    except TypeError:  # a metaclass whose __subclasses__ differs
        return []
