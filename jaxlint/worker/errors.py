"""Where user code failed, for the findings about it: the innermost frame in the analyzed file,
its span in characters, and the JX901/JX601 findings of an import or trace failure."""
from __future__ import annotations

import os
import traceback

from jaxlint.ir import compat
from jaxlint.model import Finding, Span, Target
from jaxlint.rules.analysis_failures import ImportErrorRule
from jaxlint.rules.jx601_trace_error import TraceError as TraceErrorRule
from jaxlint.rules.jx601_trace_error import hint_for, is_jax_tracing_error


def user_frames(error: BaseException, path: str) -> tuple[traceback.FrameSummary | None, str]:
    """The innermost frame in the analyzed file, and where the error was raised if that is
    deeper in another user file (" (raised at helpers.py:7)"), else ""."""
    frames = traceback.extract_tb(error.__traceback__)
    here = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))  # jaxlint's parent
    in_file = [f for f in frames if f.filename == path]
    outside = [f for f in frames if not f.filename.startswith(here) and "/jax/" not in f.filename
               and "importlib" not in f.filename and not f.filename.startswith("<")]
    frame = in_file[-1] if in_file else None
    raised = outside[-1] if outside else None
    if raised is None or raised.filename == path:
        return frame, ""
    name = os.path.relpath(raised.filename, os.path.dirname(path))
    return frame, f" (raised at {raised.filename if name.startswith('..') else name}:{raised.lineno})"


def _frame_span(frame: traceback.FrameSummary | None) -> Span:
    if frame is None or frame.lineno is None:
        return Span(1, 0, 1, 0)
    # Traceback columns are UTF-8 byte offsets; spans count characters.
    col = compat.char_column(frame.filename, frame.lineno, frame.colno or 0)
    end_line = frame.end_lineno or frame.lineno
    end_col = compat.char_column(frame.filename, end_line, frame.end_colno) if frame.end_colno else col
    return Span(frame.lineno, col, end_line, end_col)


def describe_error(error: BaseException) -> str:
    text = str(error).strip().splitlines()
    head = text[0].rstrip(".") if text else ""  # messages append "; ..." after it
    return f"{type(error).__name__}: {head}" if head else type(error).__name__


def import_error(error: BaseException, path: str) -> Finding:
    frame, raised = user_frames(error, path)
    if isinstance(error, SystemExit):
        message = f"the module exits while being imported (SystemExit({error.code!r})); it was not analyzed"
    elif is_jax_tracing_error(error):
        # The module traces code itself while imported: a tracing error, at the line that raised.
        message = (f"importing the module raised {describe_error(error)}{raised} while JAX traced it: "
                   f"{hint_for(error)}")
        return TraceErrorRule.finding(path, _frame_span(frame), message)
    else:
        message = f"importing the module raised {describe_error(error)}{raised}; its functions were not traced"
    return ImportErrorRule.finding(path, _frame_span(frame), message)


def trace_error(error: BaseException, path: str, target: Target, signature: str) -> Finding:
    frame, raised = user_frames(error, path)
    span = _frame_span(frame) if frame is not None else target.name_span
    hint = hint_for(error)
    message = f"tracing {target.qualname}({signature}) raised {describe_error(error)}{raised}" + (
        f": {hint}" if hint else "")
    return TraceErrorRule.finding(path, span, message, target=target.qualname)
