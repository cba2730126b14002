"""Functions registered with ``functools.singledispatch`` under a name that a later def rebinds
(lineax's ``@materialise.register(AddLinearOperator) def _(operator)``, 84 of them named ``_``):
the module's name holds the last such def only, so each one is found in its dispatcher's registry
by its code (file, first line, name), and is traced with its first parameter annotated with the
class it is registered for, as the dispatcher calls it."""
from __future__ import annotations

import functools
import inspect
import types
from collections.abc import Mapping
from typing import Any, Iterator

from jaxlint.model import Target


def shadowed(function: Any, target: Target, path: str) -> bool:
    """Whether ``function``, found under the target's name, is another def of the same name in
    the same file (the name was rebound after the target's def)."""
    code = _code(function)
    return code is not None and code.co_name == target.name and code.co_firstlineno != target.first_line \
        and _same_file(code.co_filename, path)


class Registrations:
    """The defs the dispatchers of a module (or of a module it imports) registered, by their
    code's (first line, name) in the module's file: read once per module."""

    def __init__(self, module: Any, path: str) -> None:
        self.table: dict[tuple[int, str], tuple[Any, type]] = {}
        for registry in _registries(module):
            for owner, function in list(registry.items()):
                code = _code(function)
                if code is not None and isinstance(owner, type) and _same_file(code.co_filename, path):
                    self.table.setdefault((code.co_firstlineno, code.co_name), (function, owner))

    def function(self, target: Target) -> Any:
        """The target's def as registered, its first parameter annotated with its class where
        the def leaves it unannotated; None when no registry holds it."""
        found = self.table.get((target.first_line, target.name))
        return None if found is None else _annotated(*found)


def _registries(module: Any) -> Iterator[Mapping]:
    seen: set[int] = set()
    values = list(vars(module).values())
    values += [v for value in values if isinstance(value, types.ModuleType) for v in list(vars(value).values())]
    for value in values:
        try:
            registry = getattr(value, "registry", None) if callable(value) else None
        except Exception:  # the user's __getattr__
            continue
        if isinstance(registry, Mapping) and id(registry) not in seen:
            seen.add(id(registry))
            yield registry


def _annotated(function: Any, owner: type) -> Any:
    """A wrapper of ``function`` whose first parameter's annotation is ``owner`` (the others and
    the globals its string annotations need are the function's)."""
    try:
        parameters = list(inspect.signature(function).parameters.values())
    except (TypeError, ValueError):
        return function
    if not parameters or parameters[0].annotation is not inspect.Parameter.empty:
        return function

    @functools.wraps(function)
    def dispatched(*args: Any, **kwargs: Any) -> Any:
        return function(*args, **kwargs)

    dispatched.__annotations__ = {**getattr(function, "__annotations__", {}), parameters[0].name: owner}
    dispatched.__signature__ = inspect.Signature([parameters[0].replace(annotation=owner), *parameters[1:]])
    return dispatched


def _code(function: Any) -> types.CodeType | None:
    try:
        return getattr(inspect.unwrap(function), "__code__", None)
    except (ValueError, Exception):  # a __wrapped__ cycle, the user's __getattr__
        return None


def _same_file(filename: str, path: str) -> bool:
    import os

    try:
        return os.path.samefile(filename, path)
    except OSError:
        return False
