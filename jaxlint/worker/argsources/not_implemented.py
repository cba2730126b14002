"""Classes abstract in fact, though not to ``abc`` (numpyro's ``Distribution`` and ``Transform``):
a method or property of the class's own body does nothing but ``raise NotImplementedError``, for a
subclass to fill. A field or parameter annotated with one gets a subclass, as for an abstract base
(field_roles.py); the subclasses that fill more of the base's such methods are tried first."""
from __future__ import annotations

import ast
import functools
import inspect
import textwrap
import types
from typing import Any


def abstract_in_fact(owner: type) -> bool:
    """Some function or property of ``owner``'s own body only raises NotImplementedError."""
    return bool(unimplemented(owner))


def unimplemented(owner: type) -> frozenset[str]:
    """The names of ``owner``'s own methods and properties that only raise NotImplementedError."""
    try:
        own = dict(vars(owner))
    except TypeError:
        return frozenset()
    return frozenset(name for name, raw in own.items() if _only_raises(_function(raw)))


def filled(sub: type, names: frozenset[str]) -> int:
    """How many of ``names`` ``sub`` has as something else than a NotImplementedError."""
    count = 0
    for name in names:
        try:
            raw = inspect.getattr_static(sub, name)
        except AttributeError:
            continue
        count += not _only_raises(_function(raw))
    return count


def _function(raw: Any) -> Any:
    if isinstance(raw, property):
        return raw.fget
    if isinstance(raw, (staticmethod, classmethod)):
        return raw.__func__
    return raw


def _only_raises(function: Any) -> bool:
    """``function``'s body (its docstring aside) is one ``raise NotImplementedError`` (called or not)."""
    code = getattr(function, "__code__", None)
    if not isinstance(code, types.CodeType) or "NotImplementedError" not in code.co_names:
        return False  # cheap: most methods never name it
    return _code_only_raises(code)


@functools.lru_cache(maxsize=4096)
def _code_only_raises(code: types.CodeType) -> bool:
    try:
        tree = ast.parse(textwrap.dedent(inspect.getsource(code)))
    except (OSError, TypeError, SyntaxError):
        return False
    definition = tree.body[0] if tree.body else None
    if not isinstance(definition, (ast.FunctionDef, ast.AsyncFunctionDef)):
        return False
    body = definition.body
    if body and isinstance(body[0], ast.Expr) and isinstance(body[0].value, ast.Constant) \
            and isinstance(body[0].value.value, str):
        body = body[1:]
    if len(body) != 1 or not isinstance(body[0], ast.Raise) or body[0].exc is None:
        return False
    raised = body[0].exc.func if isinstance(body[0].exc, ast.Call) else body[0].exc
    return isinstance(raised, ast.Name) and raised.id == "NotImplementedError"
