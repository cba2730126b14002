"""A Python call read from its frame or code object, without JAX: the parameter names, the
arguments split back into positional and keyword ones, and a profile hook on every thread. Shared
by the worker's import-time recorder and the pytest plugins, which watch calls the same way."""
from __future__ import annotations

import inspect
import sys
import threading
from types import CodeType
from typing import Any, Callable

Previous = tuple[Any, Any]


def parameter_names(code: CodeType) -> tuple[str, ...]:
    """Every parameter, in order: positional, keyword-only, then ``*args`` and ``**kwargs``."""
    count = (code.co_argcount + code.co_kwonlyargcount + bool(code.co_flags & inspect.CO_VARARGS)
             + bool(code.co_flags & inspect.CO_VARKEYWORDS))
    return code.co_varnames[:count]


def split_arguments(code: CodeType, values: list[Any]) -> tuple[list[Any], dict[str, Any]]:
    """The call's positional and keyword arguments from the values of ``parameter_names(code)``."""
    names = parameter_names(code)
    positional, keyword_only = code.co_argcount, code.co_kwonlyargcount
    args = list(values[:positional])
    kwargs = dict(zip(names[positional:positional + keyword_only], values[positional:positional + keyword_only]))
    index = positional + keyword_only
    if code.co_flags & inspect.CO_VARARGS:
        args.extend(values[index])
        index += 1
    if code.co_flags & inspect.CO_VARKEYWORDS:
        kwargs.update(values[index])
    return args, kwargs


def set_profile(hook: Callable[..., Any]) -> Previous:
    """Install ``hook`` on this thread and the threads started later; the hooks it replaced."""
    previous = (sys.getprofile(), threading.getprofile())
    sys.setprofile(hook)
    threading.setprofile(hook)
    return previous


def restore_profile(previous: Previous) -> None:
    sys.setprofile(previous[0])
    threading.setprofile(previous[1])
