"""Functions registered with a dispatcher under a name that a later def rebinds: lineax's
``@materialise.register(AddLinearOperator) def _(operator)`` (``functools.singledispatch``, 84 of
them named ``_``), numpyro's ``@dispatch(Normal, Normal) def kl_divergence(p, q)``
(``multipledispatch``, 16 of them). The module's name holds the last such def, or the dispatcher,
so each one is found in its dispatcher's table by its code (file, first line, name), and is traced
with its parameters annotated with the classes it is registered for, as the dispatcher calls it."""
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
    # A target named by an assignment (``step = jax.jit(step)``, ``jitted = jax.jit(plain)``) is
    # found at another line than its code's, and is no rebound def.
    return target.kind != "jit-bound" and code is not None \
        and code.co_name == target.name == target.qualname.rpartition(".")[2] \
        and code.co_firstlineno != target.first_line and _same_file(code.co_filename, path)


class Registrations:
    """The defs the dispatchers of a module (or of a module it imports) registered, by their
    code's (first line, name) in the module's file: read once per module."""

    def __init__(self, module: Any, path: str) -> None:
        self.table: dict[tuple[int, str], tuple[Any, tuple[type, ...]]] = {}
        for registry in _registries(module):
            try:
                items = list(registry.items())
            except Exception:  # a mapping of the user's that refuses to be read
                continue
            for key, function in items:
                owners = key if isinstance(key, tuple) else (key,)  # multipledispatch: one class a parameter
                code = _code(function)
                if code is not None and owners and all(isinstance(owner, type) for owner in owners) \
                        and _same_file(code.co_filename, path):
                    self.table.setdefault((code.co_firstlineno, code.co_name), (function, owners))

    def function(self, target: Target) -> Any:
        """The target's def as registered, its first parameters annotated with their classes where
        the def leaves them unannotated; None when no registry holds it."""
        found = self.table.get((target.first_line, target.name))
        return None if found is None else _annotated(*found)


def _registries(module: Any) -> Iterator[Mapping]:
    seen: set[int] = set()
    values = list(vars(module).values())
    values += [v for value in values if isinstance(value, types.ModuleType) for v in list(vars(value).values())]
    for value in values:
        for attribute in ("registry", "funcs"):  # functools.singledispatch's; multipledispatch's
            try:
                registry = getattr(value, attribute, None) if callable(value) else None
            except Exception:  # the user's __getattr__
                continue
            if isinstance(registry, Mapping) and id(registry) not in seen:
                seen.add(id(registry))
                yield registry


def _annotated(function: Any, owners: tuple[type, ...]) -> Any:
    """A wrapper of ``function`` whose first parameters, where unannotated, are annotated with
    ``owners`` in turn (the others and the globals its string annotations need are the function's)."""
    try:
        parameters = list(inspect.signature(function).parameters.values())
    except (TypeError, ValueError):
        return function
    # ``object`` (a singledispatch's base def) takes anything: its parameter is guessed as a plain one's.
    chosen = {p.name: owner for p, owner in zip(parameters, owners) if p.annotation is inspect.Parameter.empty
              and p.kind in (p.POSITIONAL_ONLY, p.POSITIONAL_OR_KEYWORD) and owner is not object}
    if not chosen:
        return function  # the def itself, not the dispatcher: it takes its arguments by name too

    @functools.wraps(function)
    def dispatched(*args: Any, **kwargs: Any) -> Any:
        return function(*args, **kwargs)

    dispatched.__annotations__ = {**getattr(function, "__annotations__", {}), **chosen}
    dispatched.__signature__ = inspect.Signature([p.replace(annotation=chosen[p.name]) if p.name in chosen else p
                                                  for p in parameters])
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
