"""Catching JAX's float64 truncations while a function is traced: with x64 off, JAX warns that an
explicitly requested 64-bit dtype "will be truncated", with the warning's file pointing wherever
JAX's ``stacklevel`` lands (often inside ``jax/_src/numpy``). The recorder keeps the frames that
were running instead, so a rule can point at the user's line that asked."""
from __future__ import annotations

import itertools
import linecache
import sys
import sysconfig
import warnings
from types import FrameType, TracebackType
from typing import Any

from jaxlint.ir import Location, Truncation
from jaxlint.jaxapi import logs, tracebacks
from jaxlint.model import Span

_MAX_FRAMES = 32  # a request is rarely more than a few calls below the project's outermost frame
_STDLIB = tuple({sysconfig.get_paths()[key] for key in ("stdlib", "platstdlib")})


class TruncationRecorder:
    """``with TruncationRecorder() as found:`` the truncations warned about inside the block,
    in order. Only JAX's truncation warnings are caught (and not shown); every other warning
    goes where it went before. On exit only the recorder's own filter and hook are taken out:
    the filters the code changed inside the block (a module's at import) stay as it left them."""

    def __init__(self) -> None:
        self.found: list[Truncation] = []
        self._shown: Any = None
        self._filter: Any = None

    def __enter__(self) -> list[Truncation]:
        # "always": a request JAX warned about once already (during the tests, at import) is
        # seen again; a user's "error" filter must not make the trace fail here either.
        warnings.filterwarnings("always", message=logs.TRUNCATION_MESSAGE, category=UserWarning)
        self._filter = warnings.filters[0]
        self._shown, warnings.showwarning = warnings.showwarning, self._show
        return self.found

    def __exit__(self, kind: type[BaseException] | None, error: BaseException | None,
                 trace: TracebackType | None) -> None:
        if warnings.showwarning == self._show:
            warnings.showwarning = self._shown
        try:
            warnings.filters.remove(self._filter)
        except ValueError:  # the code replaced the filter list inside the block
            pass

    def _show(self, message: Any, category: type[Warning], filename: str, lineno: int, file: Any = None,
              line: str | None = None) -> None:
        parsed = logs.truncation(str(message)) if issubclass(category, UserWarning) else None
        if parsed is None:
            self._shown(message, category, filename, lineno, file, line)
            return
        try:
            frames = _frames(sys._getframe(1))
        except Exception:  # an unusual frame must not stop the trace
            frames = ()
        self.found.append(Truncation(*parsed, frames=frames))


def _frames(frame: FrameType | None) -> tuple[Location, ...]:
    """The running frames outside JAX, jaxlint and the standard library, innermost first."""
    found = []
    while frame is not None and len(found) < _MAX_FRAMES:
        path = frame.f_code.co_filename
        if not path.startswith("<") and not path.startswith(_STDLIB) and tracebacks.is_user_file(path):
            found.append(Location(path, _span(frame)))
        frame = frame.f_back
    return tuple(found)


def _span(frame: FrameType) -> Span:
    """The span of the expression the frame is executing (the call that asked), in characters;
    its whole line where Python keeps no columns (before 3.11)."""
    path, line = frame.f_code.co_filename, frame.f_lineno
    positions = getattr(frame.f_code, "co_positions", None)
    if positions is not None and frame.f_lasti >= 0:
        start, end, start_col, end_col = next(itertools.islice(positions(), frame.f_lasti // 2, None),
                                              (None, None, None, None))
        if start is not None and start_col is not None and end is not None and end_col is not None:
            # co_positions columns are UTF-8 byte offsets; spans count characters.
            return Span(start, tracebacks.char_column(path, start, start_col), end,
                        tracebacks.char_column(path, end, end_col))
    return Span(line, 0, line, len(linecache.getline(path, line).rstrip("\r\n")))
