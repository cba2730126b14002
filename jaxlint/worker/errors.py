"""Where user code failed, for the findings about it: the innermost frame in the analyzed file,
its span in characters, and the JX901/JX601 findings of an import or trace failure."""
from __future__ import annotations

import os
import traceback
from typing import Sequence

from jaxlint.jaxapi import tracebacks
from jaxlint.model import Finding, Span, Target
from jaxlint.rules.analysis_failures import ImportErrorRule
from jaxlint.rules.jx601_trace_error import TraceError as TraceErrorRule
from jaxlint.rules.jx601_trace_error import hint_for, is_jax_tracing_error
from jaxlint.scan.meshes import MeshLiteral


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
    col = tracebacks.char_column(frame.filename, frame.lineno, frame.colno or 0)
    end_line = frame.end_lineno or frame.lineno
    end_col = tracebacks.char_column(frame.filename, end_line, frame.end_colno) if frame.end_colno else col
    return Span(frame.lineno, col, end_line, end_col)


def error_text(error: BaseException) -> str:
    """``str(error)``, or "" where the user's exception cannot say it (a ``__str__`` that raises)."""
    try:
        return str(error)
    except Exception:
        return ""


def describe_error(error: BaseException) -> str:
    text = error_text(error).strip().splitlines()
    head = text[0].rstrip(".") if text else ""  # messages append "; ..." after it
    return f"{type(error).__name__}: {head}" if head else type(error).__name__


def import_error(error: BaseException, path: str, meshes: Sequence[MeshLiteral] = (),
                 devices: int | None = None, printed: str = "") -> Finding:
    """JX901 (or JX601) for a module whose import raised; ``meshes``: its literal mesh shapes,
    ``devices``: the CPU devices its job asked for (``Job.devices``); ``printed``: the last line
    the module printed, quoted when it exits (argparse says why only there)."""
    frame, raised = user_frames(error, path)
    if isinstance(error, SystemExit):
        said = f", after printing {printed!r}" if printed else ""
        message = f"the module exits while being imported (SystemExit({error.code!r})){said}; it was not analyzed"
    elif is_jax_tracing_error(error):
        # The module traces code itself while imported: a tracing error, at the line that raised.
        message = (f"importing the module raised {describe_error(error)}{raised} while JAX traced it: "
                   f"{hint_for(error)}")
        return TraceErrorRule.finding(path, _frame_span(frame), message)
    else:
        message = f"importing the module raised {describe_error(error)}{raised}; its functions were not traced"
        too_large = _mesh_too_large(frame, meshes)
        if too_large is not None:
            mesh, count = too_large
            message = (f"importing the module raised {describe_error(error)}{raised}: the mesh {mesh.shape} at line "
                       f"{mesh.line} takes {mesh.size} devices and the worker has {count} CPU "
                       f"device{'s' * (count != 1)}; set `devices = {mesh.size}` under [tool.jaxlint] or pass "
                       f"--devices {mesh.size}{_xla_flags_note(count, devices)}; its functions were not traced")
    return ImportErrorRule.finding(path, _frame_span(frame), message)


def _mesh_too_large(frame: traceback.FrameSummary | None,
                    meshes: Sequence[MeshLiteral]) -> tuple[MeshLiteral, int] | None:
    """The literal mesh on the line the import raised at, and the worker's device count, when
    the mesh takes more devices than there are."""
    here = [mesh for mesh in meshes if frame is not None and frame.lineno is not None and mesh.covers(frame.lineno)]
    if not here:
        return None
    try:
        import jax

        count = jax.device_count()
    except Exception:  # no backend: nothing to compare with
        return None
    mesh = max(here, key=lambda m: m.size)
    return (mesh, count) if mesh.size > count else None


def _xla_flags_note(count: int, devices: int | None) -> str:
    """When the user's XLA_FLAGS chose the count (jaxlint keeps theirs), where to change it."""
    if devices == count or "--xla_force_host_platform_device_count" not in os.environ.get("XLA_FLAGS", ""):
        return ""
    return " (the --xla_force_host_platform_device_count in your XLA_FLAGS, which jaxlint keeps, sets the count)"


def trace_error(error: BaseException, path: str, target: Target, signature: str) -> Finding:
    frame, raised = user_frames(error, path)
    span = _frame_span(frame) if frame is not None else target.name_span
    hint = hint_for(error)
    message = f"tracing {target.qualname}({signature}) raised {describe_error(error)}{raised}" + (
        f": {hint}" if hint else "")
    return TraceErrorRule.finding(path, span, message, target=target.qualname)
