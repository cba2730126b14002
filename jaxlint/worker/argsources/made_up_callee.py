"""Made-up objects for parameters passed whole to a callee that reads their attributes (issue 48):
``def target(state, x): return helper(state) * x`` where only ``helper`` reads ``state.position``.
The target's body reads no attribute of ``state``, so made_up.py leaves it the ladder's array, and
the trace fails with ``DynamicJaxprTracer has no attribute position``. Where that error's object
is the value of exactly one parameter of the target (its frame in the traceback holds it), a
parameter the ladder gave an array and that the target's body uses only whole (passed on,
returned, bound to a name; never ``p * 2``, ``p[0]``, ``p.shape``, ``p.a``), the trace is retried
with that parameter a made-up object: the attributes the callee's def reads of its own name for it
(made_up.py's roles, from the callee's uses), else the one attribute named, an f32 array of the
ladder's rank. Further attributes are added as made_up_values.grown adds them (its limit counts
this first one). Shown in the signature as any made-up object (``state=<made up: position=f32[]>``).

Not made up: an error whose object is no parameter's value (an attribute of an array the body
computed), or that several parameters hold; a parameter the body uses as an array; a target traced
through another entry point (``ArgumentSet.call``).
"""
from __future__ import annotations

import ast
import dataclasses
import functools
import inspect
import textwrap
import types
from typing import Any

from jaxlint.worker.argsources import made_up, made_up_values
from jaxlint.worker.argsources.inferred import SOURCE
from jaxlint.worker.argsources.passed_on import definition_of


def made_up_for_callee(function: Any, arguments: Any, error: BaseException) -> Any:
    """``arguments`` with the parameter whose array a callee read an attribute of (``error``) made
    up as an object with that attribute; None where ``error`` is no such AttributeError, the
    parameter cannot be told, or the arguments are not the ladder's (an annotation's, a hint's or
    an example's array is the user's word: its trace error stands)."""
    if arguments.source != SOURCE:
        return None
    try:
        return _made_up_for_callee(function, arguments, error)
    except Exception:  # the user's objects on the failing frames (a __getattr__ that raises)
        return None


def _made_up_for_callee(function: Any, arguments: Any, error: BaseException) -> Any:
    import jax

    owner, name = getattr(error, "obj", None), getattr(error, "name", None)
    if not (isinstance(error, AttributeError) and isinstance(owner, jax.Array) and isinstance(name, str)) \
            or name.startswith("__") or name in made_up.array_attributes() or arguments.call is not None:
        return None
    code = getattr(inspect.unwrap(getattr(function, "__func__", function)), "__code__", None)
    frames = _frames(error)
    target_frames = [frame for frame in frames if frame.f_code is code]
    if code is None or not target_frames:
        return None
    try:
        signature = inspect.signature(function)
    except (TypeError, ValueError):
        return None
    held = [param for param in signature.parameters if target_frames[0].f_locals.get(param) is owner]
    if len(held) != 1 or not _used_whole(function, held[0]):
        return None
    spec = _callee_spec(frames[-1], owner, name)
    return _replaced(arguments, signature, held[0], spec)


def _frames(error: BaseException) -> list[types.FrameType]:
    frames, traceback = [], error.__traceback__
    while traceback is not None:
        frames.append(traceback.tb_frame)
        traceback = traceback.tb_next
    return frames


def _used_whole(function: Any, param: str) -> bool:
    """The target's body reads ``param`` only as a whole value (no array use, no attribute read)."""
    definition = definition_of(function)
    return definition is not None and made_up.used_whole_only(definition, param)


def _callee_spec(frame: types.FrameType, owner: Any, name: str) -> tuple:
    """The attributes the failing callee's def reads of the local that holds ``owner`` (made_up.py's
    roles by its uses), where they include ``name``; else ``name`` alone, an array."""
    local = [key for key, value in frame.f_locals.items() if value is owner]
    definition = _definition_of_code(frame.f_code) if len(local) == 1 else None
    spec = made_up.attributes_read(definition, local[0]) if definition is not None else None
    if spec is not None and name in dict(spec):
        return spec
    return ((name, "array"),)


@functools.lru_cache(maxsize=1024)
def _definition_of_code(code: types.CodeType) -> ast.FunctionDef | ast.AsyncFunctionDef | None:
    try:
        tree = ast.parse(textwrap.dedent(inspect.getsource(code)))
    except (OSError, TypeError, SyntaxError, IndentationError):
        return None
    first = tree.body[0] if tree.body else None
    return first if isinstance(first, (ast.FunctionDef, ast.AsyncFunctionDef)) else None


def _replaced(arguments: Any, signature: inspect.Signature, param: str, spec: tuple) -> Any:
    """``arguments`` with ``param``'s array replaced by the made-up object of ``spec`` (its rank);
    None where ``param`` has no array there."""
    import jax

    positional = [p.name for p in signature.parameters.values()
                  if p.kind in (p.POSITIONAL_ONLY, p.POSITIONAL_OR_KEYWORD)]
    index = positional.index(param) if param in positional else None
    if param in arguments.kwargs:
        current = arguments.kwargs[param]
    elif index is not None and index < len(arguments.args):
        current = arguments.args[index]
    else:
        return None
    if not isinstance(current, jax.ShapeDtypeStruct):
        return None
    shape = current.shape
    value = made_up_values.value((made_up.ROLE, spec, ()), shape, shape[0] if shape else None, grown=1)
    one_leaf = tuple(name for name in arguments.one_leaf if name != param)
    if param in arguments.kwargs:
        return dataclasses.replace(arguments, kwargs={**arguments.kwargs, param: value}, one_leaf=one_leaf)
    args = (*arguments.args[:index], value, *arguments.args[index + 1:])
    return dataclasses.replace(arguments, args=args, one_leaf=one_leaf)
