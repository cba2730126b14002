"""Plain classes (not a dataclass, NamedTuple or pytree class) whose instance jaxlint builds for a
method's ``self`` by calling the class with inferred ``__init__`` arguments (argsources/instances.py
decides them, as for a pytree class's ``__init__`` parameters).

A plain instance cannot be a traced function's argument, so it is always made inside the trace
from the traced argument values (an ``InstanceFields``, built_instances.py): its ``__init__`` runs
under the trace, under the factories' safeguards (guards.py: what it prints discarded; its
module's globals, ``os.environ`` and JAX's configuration put back; ``INIT_SECONDS`` at most). An
``__init__`` that refuses the guesses or runs past the limit fails the trace, and the method is
counted as not linted with why. A test class (a unittest ``TestCase``, pytest's ``Test*`` in a
test file), an exception or an enum is never built.
"""
from __future__ import annotations

import enum
import functools
import sys
import types
import unittest
from typing import Any

from jaxlint.scan.functions import is_test_file
from jaxlint.worker import guards
from jaxlint.worker.argsources.inferred import Uninferable
from jaxlint.worker.built_instances import InstanceFields

KIND = "plain"
INIT_SECONDS = 3.0


class InitTimedOut(Exception):
    """A plain class's ``__init__`` ran past ``INIT_SECONDS``."""


def check_buildable(owner: type) -> None:
    """Raise Uninferable when ``owner`` is a class jaxlint does not build through its ``__init__``."""
    if issubclass(owner, unittest.TestCase) or _is_pytest_class(owner):
        raise Uninferable("a test class: its test runner makes its instances")
    if issubclass(owner, BaseException):
        raise Uninferable("an exception class")
    if issubclass(owner, enum.Enum):
        raise Uninferable("an enum")


def built(owner: type, fields: dict[str, Any]) -> InstanceFields:
    """``owner``'s instance, to be made inside the trace from ``fields`` (its ``__init__``'s arguments)."""
    return InstanceFields(owner, fields, functools.partial(guarded_init, owner))


def guarded_init(owner: type, fields: dict[str, Any]) -> Any:
    """``owner(**fields)`` under the safeguards; InitTimedOut past the limit (an ``Exception``, so
    the trace fails as on any other error, never the worker)."""
    module = sys.modules.get(owner.__module__) or types.ModuleType(owner.__module__)
    try:
        with guards.without_side_effects(module), guards.guessed_call_limit(INIT_SECONDS) as limit:
            return owner(**fields)
    except guards.TimeUp:
        if not limit.fired:  # an outer limit's (a guess's, a nested function's): its caller's
            raise
        guards.LOAD_DEPENDENT.fired = True  # what was linted depends on the load: not cached
        raise InitTimedOut(f"{owner.__name__}(...) ran past {INIT_SECONDS:g} s") from None


def _is_pytest_class(owner: type) -> bool:
    """A ``Test*`` class of a test file: pytest collects it and makes its instances."""
    if not owner.__name__.startswith("Test"):
        return False
    path = getattr(sys.modules.get(owner.__module__), "__file__", None)
    return isinstance(path, str) and is_test_file(path)
