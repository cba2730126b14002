"""The retrace service rules get through ``SourceContext.retrace`` (jaxlint.rules.base.Retracer):
trace a variant of one of the module's jitted functions (an argument replaced, or made a traced
input) with the arguments jaxlint knows for it: the hint comment's, else the first recorded
signature (import-time calls are not kept for this). Nothing runs on data."""
from __future__ import annotations

import inspect
from typing import Any, Mapping

import jax
import jax.numpy as jnp

from jaxlint.config import signatures
from jaxlint.ir.build import build_program
from jaxlint.model import Settings, Target
from jaxlint.rules.base import TRACED_SCALAR, Retraced, RetraceError
from jaxlint.rules.jx601_trace_error import is_jax_tracing_error
from jaxlint.worker.argsources import ArgumentError, ArgumentRequest, ArgumentSet, hint, recorded
from jaxlint.worker.errors import describe_error
from jaxlint.worker.trace import resolve, trace_function


class ModuleRetracer:
    """Retraces functions of one imported module (the worker's, during its job)."""

    def __init__(self, module: Any, path: str, settings: Settings) -> None:
        self.module, self.path, self.settings = module, path, settings
        self.used = False  # a rule retraced a function: its code ran unrecorded

    def argument(self, target: Target, param: str) -> Any:
        known = self._bound(target)
        return None if known is None else known[1].arguments.get(param)

    def trace(self, target: Target, overrides: Mapping[str, Any]) -> Retraced:
        self.used = True
        found = self._bound(target)
        if found is None:
            raise RetraceError("no arguments known for the function (a hint or recorded signatures)")
        python_function, bound = found  # a fresh binding: changed in place
        markers: dict[str, jax.ShapeDtypeStruct] = {}
        for param, value in overrides.items():
            if value is TRACED_SCALAR:
                value = markers[param] = jax.ShapeDtypeStruct((), jnp.float32, weak_type=True)
            bound.arguments[param] = value
        variant = ArgumentSet("retrace", tuple(bound.args), dict(bound.kwargs))
        try:
            closed = trace_function(python_function, variant)
        except (Exception, SystemExit) as error:  # user code under a new trace
            raise RetraceError(describe_error(error), is_jax_tracing_error(error)) from None
        # make_jaxpr's inputs are the abstract leaves in order: where each marker went.
        leaves = [leaf for leaf in jax.tree_util.tree_leaves((variant.args, variant.kwargs))
                  if isinstance(leaf, jax.ShapeDtypeStruct)]
        inputs = {param: next(i for i, leaf in enumerate(leaves) if leaf is marker)
                  for param, marker in markers.items()}
        return Retraced(build_program(closed), inputs)

    def recorded(self, target: Target) -> list[dict[str, str]]:
        file, root = self.settings.signatures, self.settings.root
        if not file or not root:
            return []
        try:
            functions = signatures.load(file)
        except signatures.SignaturesError:
            return []  # the recorded argument source reports it
        entry = functions.get(signatures.function_key(self.path, root, target.qualname))
        if entry is None or entry["params"] != target.params:
            return []
        return list(entry["signatures"])

    def _bound(self, target: Target) -> tuple[Any, inspect.BoundArguments] | None:
        """(the Python function under the jit, its known arguments bound to its signature)."""
        function = resolve(self.module, target.bound_name or target.qualname)
        try:
            python_function = inspect.unwrap(function) if function is not None else None
        except ValueError:  # a __wrapped__ cycle
            return None
        if python_function is None or python_function is function or not inspect.isfunction(python_function):
            return None  # not a jit wrapper around a Python function
        request = ArgumentRequest(target, function, self.module, self.path, self.settings, lambda _: None)
        for source in (hint, recorded):
            try:
                found = source.arguments(request)
            except ArgumentError:
                return None
            if found:
                try:
                    return python_function, inspect.signature(python_function).bind_partial(
                        *found[0].args, **found[0].kwargs)
                except TypeError:
                    return None
        return None
