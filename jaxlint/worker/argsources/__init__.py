"""Abstract arguments for a target: where they come from, in order of precedence.

A source is a function ``(request: ArgumentRequest) -> list[ArgumentSet]`` in its own module of
this package. The first source (in ``PRECEDENCE``) that returns signatures wins; a function may
have several (e.g. two batch sizes), each traced. A source that exists but is unusable (a
malformed hint) raises ``ArgumentError``, reported as a finding.
"""
from __future__ import annotations

import importlib
from dataclasses import dataclass, field
from typing import Any, Callable

from jaxlint.model import Settings, Target


@dataclass
class ArgumentSet:
    source: str  # "hint", "import-call", ...
    args: tuple
    kwargs: dict
    # What to trace instead of the resolved target, when the arguments only fit another entry
    # point that runs it (a flax linen ``model.apply`` for ``MLP.__call__``); None: the target.
    call: Any = None
    # The parameters whose values are instances jaxlint built (a method's ``self``, instances.py):
    # a finding at a point among their fields alone is left out (analysis/instance_points.py).
    built: tuple[str, ...] = ()
    # The parameters given a one-leaf pytree for a pytree (argsources/pytrees.py): shown as such.
    one_leaf: tuple[str, ...] = ()
    # No input at all: every value is a constant jaxlint chose (a size-only function, sizes.py).
    # The function counts as linted only where its own lines made an operation.
    constant: bool = False
    # Some sizes are jaxlint's guesses (an nnx module made from guessed sizes): the findings that
    # judge lengths, bytes or padding are left out, as in a constant trace (sizes.py).
    chosen_sizes: bool = False
    # The parameters that are an enclosing function's, for a nested function built from its code
    # (worker/nested_code.py): shown after its own, "with its outer's".
    outer: tuple[str, ...] = ()


@dataclass
class ArgumentRequest:
    """What a source may consult for one target, in the worker after the module is imported."""

    target: Target
    function: Any  # the object the target resolves to (a function, jit wrapper, method, ...)
    module: Any
    path: str  # the module's file
    settings: Settings  # the run's configuration (examples and signatures files, root)
    # The first import-time call of a function object, or None (see record.CallRecorder).
    recorded_call: Callable[[Any], Any]
    # The examples files' registrations for this module (argsources.examples.run_examples).
    examples: list[Any] = field(default_factory=list)
    # Notes a source leaves when it knows of a signature it cannot use (a stale record).
    notes: list[str] = field(default_factory=list)
    index: Any = None  # the module's scan.index.SourceIndex (how the body uses each parameter)


class ArgumentError(Exception):
    """The source exists but is unusable (a malformed hint): reported as a finding."""


# Module names in this package, highest precedence first.
# "instances" guesses a method's ``self`` (and its other parameters), "built_parameters" a function's
# (inferred.py's ladder, with an instance for a parameter annotated with a class jaxlint builds).
PRECEDENCE = ["hint", "examples", "annotations", "recorded", "import_call", "instances", "built_parameters"]
Source = Callable[[ArgumentRequest], list[ArgumentSet]]


def sources() -> list[tuple[str, Source]]:
    return [(name, importlib.import_module(f"{__name__}.{name}").arguments) for name in PRECEDENCE]


def arguments_for(request: ArgumentRequest) -> list[ArgumentSet]:
    """The signatures of the first source that knows the target (ArgumentError on a bad one)."""
    for _, source in sources():
        found = source(request)
        if found:
            return found
    return []
