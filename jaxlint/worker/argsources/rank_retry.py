"""The error-driven retry of an inferred rung (issue 48): where the ladder's rung (inferred.py,
instances.py, a factory's closure) fails with an error that says an array had too few dimensions
(``vmap was requested to map its argument along axis 0``, ``axis -1 is out of bounds for array of
dimension 0``, ``Too many indices``, ``must have ndim at least``, ...) or that an index was a
float (``Indexer must have integer or boolean type``), the expression the function's own frame was
running (the traceback's code positions, read in the body's AST) is asked which parameters it
names: a parameter itself, or a local whose values come from parameters (``j = i``, ``s = p[0]``,
through any chain of locals; a local assigned twice has the origins of both values). For the
index error only what its subscripts' indices name counts. Where that is exactly one array
parameter, it gets one rank more (or i32) and the rung is traced once more: at most one retry per
rung. An index's dtype a retry learned holds for the later rungs too (a parameter made i32 stays
i32 at rank 1), so two parameters that each need an integer are fixed on two rungs; a rung whose
signature a retry traced already is not traced again, its own retry taken from that trace's
error. A name read only for its shape (``n = x.shape[0]``, ``len(x)``) names no array; a nested def
names what its body reads. An error naming two parameters,
or none (a field of ``self``, a value the function built from no parameter), keeps the rung's
failure. worker/analyze.py runs it (``Retries``) for inferred signatures only.
"""
from __future__ import annotations

import ast
import dataclasses
import inspect
import re
from typing import Any

from jaxlint.worker.argsources import ArgumentRequest, ArgumentSet, inferred, named_retry
from jaxlint.worker.errors import error_text

MAX_RANK = 4  # inferred.MAX_BODY_RANK: never raised past it
_RANK_ERRORS = re.compile(
    r"vmap was requested to map its argument along axis|is out of bounds for array of dimension"
    r"|must be at least one-dimensional|dim -?\d+ out of range|Too many indices"
    r"|must have ndim at least|not enough values to unpack|iteration over a 0-d array")
_INDEX_ERROR = re.compile(r"Indexer must have integer or boolean type")
_SHAPE_ERROR = re.compile(r"tuple index out of range")  # an IndexError of ``x.shape[k]``
_BINDINGS = (ast.Assign, ast.AugAssign, ast.AnnAssign, ast.For, ast.AsyncFor, ast.comprehension, ast.NamedExpr)


class Retries:
    """One target's retries: the index dtypes they taught (``learned``: a parameter's rank and
    dtype), applied to its later rungs, and the signatures that failed."""

    def __init__(self, request: ArgumentRequest, size: Any) -> None:
        self.request, self.size = request, size  # the dimension a raised rank adds
        self.learned: dict[str, tuple[int, str]] = {}
        self._origins: dict[str, set[str]] | None = None
        self._failed: dict[tuple, BaseException] = {}  # the signatures traced that failed: their errors

    def applied(self, arguments: ArgumentSet) -> tuple[ArgumentSet, BaseException | None]:
        """``arguments`` with what earlier retries learned, and the error it failed with where that
        signature was traced already (a retry's raised parameter is the next rung's): not traced
        again, its retry is taken from that error."""
        kwargs = dict(arguments.kwargs)
        for name, (rank, dtype) in self.learned.items():
            value = kwargs.get(name)
            if _raisable(value) and (len(value.shape) < rank or value.dtype != dtype):
                kwargs[name] = _changed(value, max(rank, len(value.shape)), dtype, self.size)
        changed = dataclasses.replace(arguments, kwargs=kwargs) if kwargs != arguments.kwargs else arguments
        return changed, self._failed.get(_key(kwargs))

    def failed(self, arguments: ArgumentSet, error: BaseException) -> None:
        """Notes that ``arguments`` failed to trace with ``error``."""
        self._failed[_key(arguments.kwargs)] = error

    def retried(self, arguments: ArgumentSet, error: BaseException) -> ArgumentSet | None:
        """``arguments`` with the one parameter ``error`` names raised by a rank (or made i32), or
        None where the error is not one of those or does not name exactly one parameter."""
        text = error_text(error)
        index_error = _INDEX_ERROR.search(text) is not None
        shape_error = isinstance(error, IndexError) and _SHAPE_ERROR.search(text) is not None
        if not index_error and not shape_error and _RANK_ERRORS.search(text) is None:
            by_name = named_retry.raised(arguments, error, _raisable,
                                         lambda value, rank: _changed(value, rank, value.dtype, self.size))
            return None if by_name is None or _key(by_name.kwargs) in self._failed else by_name
        node = self._failing_node(error)
        if node is None:
            return None
        arrays = {name for name, value in arguments.kwargs.items() if _raisable(value)}
        if shape_error:  # ``x.shape[axis]`` past x's rank: x's own shape, read where it failed
            parts = [n.value.value for n in ast.walk(node) if isinstance(n, ast.Subscript) and _is_shape(n.value)]
        else:
            parts = [n.slice for n in ast.walk(node) if isinstance(n, ast.Subscript)] if index_error else [node]
        named = {origin for part in parts for name in _names(part) for origin in self.origins().get(name, ())} & arrays
        if len(named) != 1:
            return None
        [name] = named
        value = arguments.kwargs[name]
        if index_error and value.dtype.kind in "iub" or not index_error and len(value.shape) >= MAX_RANK:
            return None
        rank, dtype = (len(value.shape), "int32") if index_error else (len(value.shape) + 1, value.dtype)
        if index_error:  # a rank is the next rung's anyway; an index's dtype is learned for good
            self.learned[name] = (rank, dtype)
        kwargs = {**arguments.kwargs, name: _changed(value, rank, dtype, self.size)}
        return None if _key(kwargs) in self._failed else dataclasses.replace(arguments, kwargs=kwargs)

    def _failing_node(self, error: BaseException) -> ast.AST | None:
        definition, code = inferred.definition(self.request), _code(self.request.function)
        span = _failing_span(error, code) if definition is not None and code is not None else None
        return None if span is None else _node_at(definition, span)  # type: ignore[arg-type]

    def origins(self) -> dict[str, set[str]]:
        """Each name of the body -> the parameters its values come from (a parameter: itself)."""
        if self._origins is None:
            definition = inferred.definition(self.request)
            self._origins = _origins(definition) if definition is not None else {}
        return self._origins


def _key(kwargs: dict[str, Any]) -> tuple:
    """A signature's key: values other than guessed arrays are told apart by identity (a rung's
    built instance is its own)."""
    return tuple((name, (value.shape, str(value.dtype)) if _raisable(value) else id(value))
                 for name, value in kwargs.items())


def _changed(value: Any, rank: int, dtype: Any, size: Any) -> Any:
    import jax

    dim = value.shape[0] if value.shape else size
    return jax.ShapeDtypeStruct((*value.shape, *(dim,) * (rank - len(value.shape))), dtype)


def _raisable(value: Any) -> bool:
    """An array the ladder guessed (f32 or i32, not a key, not a Python float's weak scalar)."""
    import jax
    import numpy as np

    return isinstance(value, jax.ShapeDtypeStruct) and isinstance(value.dtype, np.dtype) \
        and value.dtype.kind in "fiu" and not getattr(value, "weak_type", False)


def _code(function: Any) -> Any:
    """The code object whose frame runs the target's body."""
    function = function.fget if isinstance(function, property) else function
    try:
        return inspect.unwrap(function).__code__
    except (AttributeError, ValueError):
        return None


def _failing_span(error: BaseException, code: Any) -> tuple[int, int, int, int] | None:
    """The positions (line, end line, column, end column) of the instruction the innermost frame
    of ``code`` was running when ``error`` was raised."""
    found = None
    traceback = error.__traceback__
    while traceback is not None:
        frame_code = traceback.tb_frame.f_code
        if frame_code is code or (frame_code.co_filename, frame_code.co_firstlineno, frame_code.co_name) == \
                (code.co_filename, code.co_firstlineno, code.co_name):
            positions = list(frame_code.co_positions())
            at = traceback.tb_lasti // 2
            found = positions[at] if 0 <= at < len(positions) else None
        traceback = traceback.tb_next
    return None if found is None or None in found else found


def _node_at(definition: ast.AST, span: tuple[int, int, int, int]) -> ast.AST | None:
    """The expression (or statement) of ``definition`` at exactly ``span``."""
    for node in ast.walk(definition):
        if isinstance(node, (ast.expr, ast.stmt)) and \
                (node.lineno, node.end_lineno, node.col_offset, node.end_col_offset) == span:
            return node
    return None


def _origins(definition: ast.FunctionDef | ast.AsyncFunctionDef) -> dict[str, set[str]]:
    """Each parameter -> itself; each local -> the parameters the values bound to it name, through
    other locals (to a fixed point). A name the body never binds (a global, a module) names none."""
    arguments = definition.args
    params = {a.arg for a in (*arguments.posonlyargs, *arguments.args, *arguments.kwonlyargs)}
    values: dict[str, list[ast.AST]] = {}
    for node in ast.walk(definition):
        if isinstance(node, _BINDINGS):
            value = node.iter if isinstance(node, (ast.For, ast.AsyncFor, ast.comprehension)) else node.value
            targets = node.targets if isinstance(node, ast.Assign) else [node.target]
            for name in (n for target in targets for n in ast.walk(target)):
                if isinstance(name, ast.Name) and value is not None:
                    values.setdefault(name.id, []).append(value)
        elif isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef)) and node is not definition:
            values.setdefault(node.name, []).append(node)  # a nested def: what its body reads
    found = {name: {name} for name in params}
    names = {local: {name for value in vs for name in _names(value)} for local, vs in values.items()}
    changed = True
    while changed:
        changed = False
        for local, used in names.items():
            origins = found.get(local, set()) | {o for name in used for o in found.get(name, ())}
            if origins != found.get(local, set()):
                found[local], changed = origins, True
    return found


def _is_shape(node: ast.AST) -> bool:
    """``x.shape`` of a name."""
    return isinstance(node, ast.Attribute) and node.attr == "shape" and isinstance(node.value, ast.Name)


def _names(node: ast.AST) -> list[str]:
    """The names ``node`` reads as arrays: not those only asked their shape, size, rank or dtype
    (``n = x.shape[0]``, ``len(x)``: a static int, not the array)."""
    if isinstance(node, ast.Attribute) and node.attr in ("shape", "size", "ndim", "dtype"):
        return []
    if isinstance(node, ast.Call) and isinstance(node.func, ast.Name) and node.func.id == "len":
        return []
    if isinstance(node, ast.Name):
        return [node.id]
    return [name for child in ast.iter_child_nodes(node) for name in _names(child)]
