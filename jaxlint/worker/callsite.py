"""The arguments a module's code passed to the outermost wrapper it called (a jit of a vmap, a
custom_jvp, a checkpoint...), read when the wrapped function's first frame starts.

A wrapper changes the arguments on their way in (vmap removes the batch axis), so the function's
own frame shows what the wrapper made of them, not what the module passed. The module's frame
still executes the call expression, and the first Python frame below it (JAX's entry point for
every wrapper: ``*args, **kwargs`` exactly as called) holds what it passed. The call expression
says which object was called: a name or an attribute chain, read without running any code
(``inspect.getattr_static``). Anything else (a call result, ``*args``) gives nothing, and the
caller keeps the function's own arguments.
"""
from __future__ import annotations

import ast
import builtins
import inspect
import linecache
from dataclasses import dataclass
from types import FrameType
from typing import Any

from jaxlint.worker.frames import parameter_names, split_arguments

MAX_WRAPPER_FRAMES = 200  # frames between the module's call and the function: JAX's own are < 100
TRACING_METHODS = ("lower", "trace")  # ``f.lower(x)`` passes x to f's wrapper stack
_MISSING = object()


@dataclass
class OuterCall:
    callee: Any  # the object the module's expression called (the jit of the vmap)
    args: list[Any]
    kwargs: dict[str, Any]


def outer_call(frame: FrameType, files: set[str]) -> OuterCall | None:
    """For the first frame of a function of ``files``: the wrapper call it came from, or None when
    the module called it directly or the call cannot be read."""
    entry = frame.f_back
    if entry is None or entry.f_code.co_filename in files:
        return None  # a direct call: the frame's own arguments are the module's
    for _ in range(MAX_WRAPPER_FRAMES):
        caller = entry.f_back
        if caller is None:
            return None
        if caller.f_code.co_filename in files:
            return _read(caller, entry)
        entry = caller
    return None


def _read(caller: FrameType, entry: FrameType) -> OuterCall | None:
    call = _call_expression(caller)
    if call is None or any(isinstance(a, ast.Starred) for a in call.args) \
            or any(k.arg is None for k in call.keywords):
        return None
    func, base = call.func, _MISSING
    if isinstance(func, ast.Attribute) and func.attr in TRACING_METHODS:
        func = func.value  # f.lower(x): the arguments of f's stack
    elif isinstance(func, ast.Attribute):
        base = _lookup(func.value, caller)
    callee = _lookup(func, caller)
    if callee is _MISSING:
        return None
    code = entry.f_code
    local = entry.f_locals
    args, kwargs = split_arguments(code, [local[name] for name in parameter_names(code)])
    if args and args[0] is callee:
        args = args[1:]  # the wrapper's own ``__call__(self, *args)``
    if len(args) == len(call.args) + 1 and base is not _MISSING and args and args[0] is base:
        pass  # obj.method(x): the wrapper, bound as a method, got obj first
    elif len(args) != len(call.args):
        return None
    if set(kwargs) != {k.arg for k in call.keywords}:
        return None
    return OuterCall(callee, args, kwargs)


def _call_expression(frame: FrameType) -> ast.Call | None:
    """The call the frame is executing, parsed from its source (co_positions, Python 3.11+)."""
    try:
        positions = list(frame.f_code.co_positions())
        start_line, end_line, start_col, end_col = positions[frame.f_lasti // 2]
    except (AttributeError, IndexError, ValueError):
        return None
    if None in (start_line, end_line, start_col, end_col):
        return None
    lines = [linecache.getline(frame.f_code.co_filename, n).encode() for n in range(start_line, end_line + 1)]
    if start_line == end_line:
        text = lines[0][start_col:end_col]
    else:
        text = lines[0][start_col:] + b"".join(lines[1:-1]) + lines[-1][:end_col]
    try:
        node = ast.parse(b"(" + text + b")", mode="eval").body
    except (SyntaxError, ValueError):
        return None
    return node if isinstance(node, ast.Call) else None


def _lookup(node: ast.expr, frame: FrameType) -> Any:
    """The value of a name or attribute chain, read without running code (no property, no
    ``__getattr__``); _MISSING for any other expression."""
    if isinstance(node, ast.Name):
        for namespace in (frame.f_locals, frame.f_globals, vars(builtins)):
            if node.id in namespace:
                return namespace[node.id]
        return _MISSING
    if isinstance(node, ast.Attribute):
        base = _lookup(node.value, frame)
        if base is _MISSING:
            return _MISSING
        try:
            value = inspect.getattr_static(base, node.attr)
        except AttributeError:
            return _MISSING
        return value.__func__ if isinstance(value, staticmethod) else value
    return _MISSING
