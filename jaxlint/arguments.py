"""Abstract arguments for a target: where they come from, in order of precedence.

Each source returns an ``ArgumentSet`` or None. Sources today: a hint comment above the function,
and the first call the module made while it was imported. More sources plug in here.
"""
from __future__ import annotations

import inspect
from dataclasses import dataclass
from typing import Any, Callable

from jaxlint import hints
from jaxlint.model import Target


@dataclass
class ArgumentSet:
    source: str  # "hint", "import-call", ...
    args: tuple
    kwargs: dict


class ArgumentError(Exception):
    """The source exists but is unusable (a malformed hint): reported as a finding."""


def from_hint(target: Target, function: Any, recorded: Callable[[Any], Any]) -> ArgumentSet | None:
    if target.hint is None:
        return None
    try:
        spec = hints.parse_hint(target.hint)
    except hints.HintError as error:
        raise ArgumentError(f"malformed hint: {error}") from None
    params = [p for p in target.params if p not in ("self", "cls")] if target.params else None
    if params is not None:
        unknown = [name for name in spec if name not in target.params]
        if unknown:
            raise ArgumentError(f"hint names {', '.join(map(repr, unknown))}, not parameters of "
                                f"{target.name}({', '.join(target.params)})")
    try:
        values = hints.to_abstract(spec)
    except Exception as error:  # e.g. a dimension name JAX rejects
        raise ArgumentError(f"hint cannot be turned into abstract values: {error}") from None
    return ArgumentSet("hint", (), values)


def from_import_call(target: Target, function: Any, recorded: Callable[[Any], Any]) -> ArgumentSet | None:
    call = recorded(function)
    if call is None:
        return None
    args = call.args
    if inspect.ismethod(function) and args:
        # A classmethod resolves to a bound method; the recorded call includes ``cls``.
        args = args[1:]
    return ArgumentSet("import-call", args, call.kwargs)


SOURCES: list[Callable[..., ArgumentSet | None]] = [from_hint, from_import_call]


def arguments_for(target: Target, function: Any, recorded: Callable[[Any], Any]) -> ArgumentSet | None:
    """The first source that knows the target's arguments (raises ArgumentError on a bad one)."""
    for source in SOURCES:
        found = source(target, function, recorded)
        if found is not None:
            return found
    return None
