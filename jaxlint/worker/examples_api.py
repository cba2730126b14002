"""``jaxlint.example(fn, *args, **kwargs)``: arguments for a function, in an examples file.

An examples file (``[tool.jaxlint] examples = [...]``) is ordinary Python that jaxlint runs in
its worker after importing the module under analysis; each call registers one signature of
``fn``. Real arrays are fine: jaxlint keeps only their shapes and dtypes. Outside jaxlint (a user
running the file by hand) a call only appends to ``REGISTRY``, so the file stays harmless.
Pure Python on purpose: ``import jaxlint`` must not import jax.
"""
from __future__ import annotations

import sys
from dataclasses import dataclass
from typing import Any


@dataclass
class Example:
    """One ``jaxlint.example`` call: what was registered, and where (for messages)."""

    function: Any
    args: tuple
    kwargs: dict
    file: str
    line: int


REGISTRY: list[Example] = []


def example(fn: Any, /, *args: Any, **kwargs: Any) -> None:
    """Register ``fn(*args, **kwargs)`` as one signature jaxlint traces ``fn`` with.

    ``fn`` may be a function, a jit wrapper, a bound method (``obj.method``), an Equinox module
    instance (its ``__call__``), a Flax linen ``model.apply`` (its ``__call__``, or the
    ``method=`` it names) or a linen module instance (variables from ``model.init``).
    """
    caller = sys._getframe(1)
    REGISTRY.append(Example(fn, args, kwargs, caller.f_code.co_filename, caller.f_lineno))


__all__ = ["Example", "REGISTRY", "example"]
