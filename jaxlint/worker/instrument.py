"""Worker-side instrumentation: record the arguments of import-time calls, mark vmap outputs.

Two hooks, both installed before the user's module is imported:
- a profile hook records the arguments of the first call of every function defined in the
  module's file, as abstract values, whether the call is direct, through a jit wrapper or
  through ``.lower(...)`` / ``.trace(...)`` (a jit wrapper calls the Python function with tracers),
  and, for a call through wrappers, what the module passed to the outermost one (callsite.py);
- ``jax.vmap`` is wrapped so each vmap application inside a trace leaves a record (call site,
  output tree, which outputs JAX itself confirms unbatched) and an identity marker on each output
  leaf (a named scope, ``VmapRecord.marker``), which ir.build turns back into the plain value and
  keeps in ``Program.vmap_outputs`` under the leaf's ``VmapLeaf``.
"""
from __future__ import annotations

import contextlib
import functools
import itertools
import sys
import threading
from dataclasses import dataclass
from types import CodeType, FrameType
from typing import Any, Iterator

import jax
import numpy as np

from jaxlint.ir import MARKER_PREFIX, VmapRecord
from jaxlint.jaxapi import jaxprs, tracers
from jaxlint.model import Span
from jaxlint.worker.callsite import OuterCall, outer_call
from jaxlint.worker.frames import parameter_names, split_arguments

_real_vmap = jax.vmap
_state = threading.local()
_counter = itertools.count()
# Outputs per vmap call whose batching jaxlint confirms with a trace each; bounded for cost.
MAX_CONFIRMED_LEAVES = 16


def abstractify(tree: Any) -> Any:
    """Arrays and tracers -> ShapeDtypeStruct; every other leaf (Python values) kept as is."""
    array_types = tracers.array_types()

    def convert(leaf: Any) -> Any:
        if isinstance(leaf, (np.ndarray, np.generic)):
            if leaf.dtype.kind in "OSU":  # objects and strings: static values, not arrays
                return leaf
            # As JAX sees it: float64 NumPy data becomes float32 unless x64 is on.
            return jax.ShapeDtypeStruct(leaf.shape, jax.dtypes.canonicalize_dtype(leaf.dtype))
        if tracers.is_tracer(leaf) or isinstance(leaf, array_types):
            return jaxprs.shape_dtype_struct(leaf)
        return leaf

    return jax.tree_util.tree_map(convert, tree)


def frame_span(frame: FrameType) -> Span | None:
    """Span of the expression the frame is executing (Python 3.11 co_positions).

    Columns are UTF-8 byte offsets, as co_positions and ``ast`` give them (not characters).
    """
    try:
        positions = list(frame.f_code.co_positions())
        start_line, end_line, start_col, end_col = positions[frame.f_lasti // 2]
    except (AttributeError, IndexError, ValueError):
        return Span(frame.f_lineno, 0, frame.f_lineno, 0)
    if start_line is None:
        return Span(frame.f_lineno, 0, frame.f_lineno, 0)
    return Span(start_line, start_col or 0, end_line or start_line, end_col or 0)


# ---------------------------------------------------------------------------------------------
# Import-time call recording


@dataclass
class RecordedCall:
    args: tuple
    kwargs: dict
    # When the module called the function through wrappers (a jit of a vmap): the object its
    # expression called and the arguments it passed, abstract; None for a direct call.
    outer: OuterCall | None = None


class CallRecorder:
    """First call of each code object defined in ``files``, as abstract arguments; and every code
    object called at all (``ran``)."""

    def __init__(self, files: set[str]) -> None:
        self.files = files
        self.calls: dict[CodeType, RecordedCall] = {}
        self.ran: dict[int, CodeType] = {}

    def _profile(self, frame: FrameType, event: str, arg: Any) -> None:
        if event != "call":
            return
        code = frame.f_code
        if id(code) not in self.ran:
            self.ran[id(code)] = code
        if code.co_filename not in self.files or code in self.calls or code.co_name == "<module>":
            return
        try:
            self.calls[code] = _arguments_of(frame)
        except Exception:  # an argument jaxlint cannot abstract: leave the function unrecorded
            return
        try:
            outer = outer_call(frame, self.files)
            if outer is not None:
                outer.args = [abstractify(a) for a in outer.args]
                outer.kwargs = {k: abstractify(v) for k, v in outer.kwargs.items()}
            self.calls[code].outer = outer
        except Exception:  # the wrapper's arguments cannot be read: the function's own stay
            pass

    def __enter__(self) -> CallRecorder:
        self._previous = sys.getprofile()
        sys.setprofile(self._profile)
        return self

    def __exit__(self, *exc: Any) -> None:
        sys.setprofile(self._previous)


class RanRecorder:
    """Every code object called between ``start`` and ``stop`` (by id: hashing a code object
    hashes its bytecode, on every call). Only until the first trace: a profile hook made tracing
    two to two and a half times slower (diffrax's modules). A trace function, not a profile one:
    Python calls it for calls only (a profile function also sees returns and every call of a
    builtin), and returning None asks for no line events."""

    current: RanRecorder | None = None  # the one recording now (``unrecorded`` pauses it)

    def __init__(self) -> None:
        self.ran: dict[int, CodeType] = {}
        self._previous: Any = None
        self._on = False

    def _trace(self, frame: FrameType, event: str, arg: Any) -> None:
        if id(frame.f_code) not in self.ran:
            self.ran[id(frame.f_code)] = frame.f_code

    def start(self) -> None:
        if not self._on:
            self._previous, self._on = sys.gettrace(), True
            RanRecorder.current = self
            sys.settrace(self._trace)

    def stop(self) -> None:
        if self._on:
            sys.settrace(self._previous)
            self._on = False
            RanRecorder.current = None


@contextlib.contextmanager
def unrecorded() -> Iterator[None]:
    """jaxlint's own work that calls no user code (building abstract arguments from JAX's
    symbolic shapes): not recorded, which tripled its time (optax: 0.2 s to 0.6 s in all)."""
    recorder = RanRecorder.current
    if recorder is not None:
        recorder.stop()
    try:
        yield
    finally:
        if recorder is not None:
            recorder.start()


def _arguments_of(frame: FrameType) -> RecordedCall:
    code, local = frame.f_code, frame.f_locals
    args, kwargs = split_arguments(code, [local[name] for name in parameter_names(code)])
    return RecordedCall(tuple(abstractify(a) for a in args), {k: abstractify(v) for k, v in kwargs.items()})


# ---------------------------------------------------------------------------------------------
# vmap records


VMAP_RECORDS: dict[str, VmapRecord] = {}


def _leaf_axes(out_axes: Any, out_tree: Any, num_leaves: int) -> list[Any] | None:
    """out_axes broadcast to every output leaf (out_axes is a tree prefix of the output)."""
    if out_axes is None or isinstance(out_axes, int):
        return [out_axes] * num_leaves
    try:
        full = jax.tree_util.tree_map(lambda _: 0, out_tree, is_leaf=lambda x: x is None)
        axes = jax.tree_util.tree_map(
            lambda axis, sub: [axis] * len(jax.tree_util.tree_leaves(sub)),
            out_axes, full, is_leaf=lambda x: x is None)
        return [a for group in jax.tree_util.tree_leaves(axes, is_leaf=lambda x: isinstance(x, list))
                for a in group]
    except Exception:
        return None


def _confirm_unbatched(record: VmapRecord, leaf: int) -> bool:
    """JAX's own verdict: tracing with out_axes=None at this leaf succeeds iff it is unbatched."""
    axes = list(record.leaf_axes)
    axes[leaf] = None
    out_axes = jax.tree_util.tree_unflatten(record.out_treedef, axes)
    _state.confirming = True
    try:
        jaxprs.eval_shape(_real_vmap(record.fun, in_axes=record.in_axes, out_axes=out_axes,
                                     **record.options), *record.args, **record.kwargs)
        return True
    except Exception:
        return False
    finally:
        _state.confirming = False


def real_vmap() -> Any:
    """JAX's own ``jax.vmap``, which a VmapRecorder replaces while it is installed."""
    return _real_vmap


class VmapRecorder:
    """Wraps ``jax.vmap`` while a module is imported and traced."""

    def __init__(self, files: set[str]) -> None:
        self.files = files

    def __enter__(self) -> VmapRecorder:
        jax.vmap = self._vmap
        return self

    def __exit__(self, *exc: Any) -> None:
        jax.vmap = _real_vmap

    def _vmap(self, fun: Any, in_axes: Any = 0, out_axes: Any = 0, **options: Any) -> Any:
        vmapped = _real_vmap(fun, in_axes=in_axes, out_axes=out_axes, **options)
        files = self.files

        @functools.wraps(vmapped)
        def apply(*args: Any, **kwargs: Any) -> Any:
            out = vmapped(*args, **kwargs)
            caller = sys._getframe(1)
            if getattr(_state, "confirming", False) or caller.f_code.co_filename not in files:
                return out
            leaves, treedef = jax.tree_util.tree_flatten(out)
            if not any(tracers.is_tracer(leaf) for leaf in leaves):
                return out  # eager call: no jaxpr to annotate
            try:
                return _mark(fun, in_axes, out_axes, options, args, kwargs, caller, leaves, treedef)
            except Exception:  # instrumentation must never change whether user code works
                return out

        return apply


def _mark(fun: Any, in_axes: Any, out_axes: Any, options: dict, args: tuple, kwargs: dict,
          caller: FrameType, leaves: list, treedef: Any) -> Any:
    leaf_axes = _leaf_axes(out_axes, jax.tree_util.tree_unflatten(treedef, leaves), len(leaves))
    if leaf_axes is None:
        return jax.tree_util.tree_unflatten(treedef, leaves)
    tag = f"{MARKER_PREFIX}{next(_counter)}"
    paths = [jax.tree_util.keystr(p) for p, _ in jax.tree_util.tree_flatten_with_path(
        jax.tree_util.tree_unflatten(treedef, leaves))[0]]
    record = VmapRecord(tag, caller.f_code.co_filename, frame_span(caller), fun, in_axes, out_axes,
                        options, abstractify(args), abstractify(kwargs), treedef, paths, leaf_axes)
    for index, axis in enumerate(leaf_axes):
        if axis is None or index >= MAX_CONFIRMED_LEAVES:
            record.unbatched.append(None)
        else:
            record.unbatched.append(_confirm_unbatched(record, index))
    VMAP_RECORDS[tag] = record
    marked = []
    for index, leaf in enumerate(leaves):
        if leaf_axes[index] is None or not tracers.is_tracer(leaf):
            marked.append(leaf)
            continue
        with jax.named_scope(record.marker(index)):
            marked.append(jax.lax.optimization_barrier(leaf))
    return jax.tree_util.tree_unflatten(treedef, marked)
