"""Where an equation came from in the user's source: JAX's user frames of its traceback (file, line,
columns), its name stack, and whether a jaxpr is one of JAX's own (library) functions."""
from __future__ import annotations

import linecache
import os
from typing import Any, Iterator

from jax._src import source_info_util

from jaxlint.jaxapi.install_dirs import JAX_DIR, PACKAGE_DIR
from jaxlint.jaxapi.version import JAX_VERSION


def exclude_from_user_frames() -> None:
    """Make frames in jaxlint's own files invisible to JAX's user-frame lookup."""
    source_info_util.register_exclusion(os.path.join(PACKAGE_DIR, ""))


def _user_frames(source_info: Any) -> Iterator[Any]:
    """JAX's user frames of an equation, innermost first (may raise on a malformed traceback)."""
    if JAX_VERSION >= (0, 7, 0):
        return source_info_util.user_frames(source_info.traceback)
    return source_info_util.user_frames(source_info)


def _located(frame: Any) -> tuple[str, int, int, int, int]:
    """(file, start_line, start_col, end_line, end_col) of a frame, columns in characters."""
    start_col = getattr(frame, "start_column", 0) or 0
    end_line = getattr(frame, "end_line", None) or frame.start_line
    end_col = getattr(frame, "end_column", None) or start_col
    # Frame columns come from co_positions: UTF-8 bytes. jaxlint's spans count characters.
    return (frame.file_name, frame.start_line, char_column(frame.file_name, frame.start_line, start_col),
            end_line, char_column(frame.file_name, end_line, end_col))


def user_location(source_info: Any) -> tuple[str, int, int, int, int] | None:
    """(file, start_line, start_col, end_line, end_col) of the innermost user frame, or None."""
    if source_info is None:
        return None
    try:
        if JAX_VERSION >= (0, 7, 0):
            frame = source_info_util.user_frame(source_info.traceback)  # cached by JAX
        else:
            frame = source_info_util.user_frame(source_info)
    except Exception:  # a malformed traceback must not stop the analysis
        return None
    return _located(frame) if frame is not None else None


def user_stack(source_info: Any) -> list[tuple[str, int, int, int, int]]:
    """(file, start_line, start_col, end_line, end_col) of every user frame of an equation,
    outermost first (a traced function's call of a helper, then the helper's line); [] when
    unknown. Read only for the few ops a rule asks about: a stack has dozens of frames."""
    if source_info is None:
        return []
    try:
        frames = list(_user_frames(source_info))
    except Exception:  # a malformed traceback must not stop the analysis
        return []
    return [_located(frame) for frame in reversed(frames)]


def user_position_in(source_info: Any, path: str) -> tuple[int, int] | None:
    """(line, character column) of the innermost user frame in the file ``path``, or None: the
    line of the analyzed file that made an equation, even when a helper in another file ran it."""
    if source_info is None:
        return None
    try:
        frame = next((f for f in _user_frames(source_info) if f.file_name == path), None)
    except Exception:  # a malformed traceback must not stop the analysis
        return None
    if frame is None:
        return None
    return frame.start_line, char_column(path, frame.start_line, getattr(frame, "start_column", 0) or 0)


def user_lines_in(source_info: Any, path: str) -> set[int]:
    """Lines of the file ``path`` on an equation's user call stack (the call site in a traced
    function and the helper lines below it); empty when unknown."""
    return user_lines_by_file(source_info, (path,)).get(path, set())


def user_lines_by_file(source_info: Any, paths: Any) -> dict[str, set[int]]:
    """``user_lines_in`` for each of ``paths`` (a collection of files) at once."""
    if source_info is None:
        return {}
    lines: dict[str, set[int]] = {}
    try:
        for frame in _user_frames(source_info):
            if frame.file_name in paths:
                lines.setdefault(frame.file_name, set()).add(frame.start_line)
    except Exception:  # a malformed traceback must not stop the analysis
        return {}
    return lines


def char_column(path: str, line: int, byte_col: int) -> int:
    """Character column of a UTF-8 byte column on a line of a file."""
    from jaxlint.text import char_column as column_in_text

    return column_in_text(linecache.getline(path, line), byte_col)


def name_stack_entries(source_info: Any) -> list[tuple[str, str]]:
    """The name stack as (kind, name) pairs, kind "transform" or "scope", outermost first.

    On old releases the string form of a bare transform can be empty, so read the elements.
    """
    stack = getattr(getattr(source_info, "name_stack", None), "stack", ())
    entries = []
    for element in stack:
        kind = "transform" if type(element).__name__ == "Transform" else "scope"
        entries.append((kind, str(getattr(element, "name", element))))
    return entries


# Before 0.7, the equations of a cached jaxpr of one of JAX's own jitted helpers (the inner jits of
# jax.random.normal, jnp.piecewise) keep the traceback of the call that first traced them, possibly
# in another function; from 0.7 their tracebacks stop at the jit (no user frame).
STALE_LIBRARY_TRACEBACKS = JAX_VERSION < (0, 7, 0)


def user_frames(source_info: Any) -> list[tuple[str, str, int]]:
    """(file, function, line) of each user frame of an equation's traceback, innermost first."""
    frames = getattr(getattr(source_info, "traceback", None), "frames", None) or []
    return [(f.file_name, f.function_name, f.line_num) for f in frames
            if source_info_util.is_user_filename(f.file_name)]


def is_library_jaxpr(jaxpr: Any) -> bool:
    """The jaxpr of a function defined inside JAX (``debug_info.func_src_info`` is "name at file:line")."""
    text = getattr(getattr(jaxpr, "debug_info", None), "func_src_info", None)
    if not isinstance(text, str) or " at " not in text:
        return False
    file = text.rpartition(" at ")[2].rpartition(":")[0]
    return os.path.abspath(file).startswith(JAX_DIR)


def is_user_file(path: str) -> bool:
    """Whether JAX counts ``path`` as user code (not JAX's own, nor an excluded library's)."""
    return bool(source_info_util.is_user_filename(path)) and not path.startswith(PACKAGE_DIR)


def arg_names(jaxpr: Any) -> list[str] | None:
    """The names of a jit's flattened arguments (``state['w']``), from its debug info; None when
    JAX does not say."""
    info = getattr(jaxpr, "debug_info", None)
    names = getattr(info, "arg_names", None)
    return list(names) if names is not None else None


def function_source(jaxpr: Any) -> tuple[str, str, int] | None:
    """(name, file, line) of the function a jit traced (``debug_info.func_src_info``)."""
    text = getattr(getattr(jaxpr, "debug_info", None), "func_src_info", None)
    if not isinstance(text, str) or " at " not in text:
        return None
    name, _, where = text.rpartition(" at ")
    file, _, line = where.rpartition(":")
    return (name, file, int(line)) if line.isdigit() else None
