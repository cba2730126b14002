"""JX508 float64-truncated: a 64-bit dtype asked for while x64 is off, which JAX truncates."""
from __future__ import annotations

import ast
import os
import re
from typing import Iterable

from jaxlint.ir import Location, Truncation
from jaxlint.model import Finding
from jaxlint.rules.base import ProgramContext, Rule

# What the truncated value loses, by the dtype that was asked for.
_CONSEQUENCE = {
    "float64": "the value is computed in float32 (about 7 significant digits, not 16)",
    "complex128": "the value is computed in complex64 (float32 parts)",
    "int64": "the value is int32 and wraps around past 2**31 - 1 where int64 would not",
    "uint64": "the value is uint32 and wraps around past 2**32 - 1 where uint64 would not",
}


class Float64Truncated(Rule):
    code = "JX508"
    name = "float64-truncated"
    summary = ("A float64, int64 or complex128 dtype asked for while x64 is off: JAX silently uses "
               "the 32-bit dtype instead.")
    severity = "warning"
    reads_helpers = False  # places each finding itself, at the project's line that asked

    @classmethod
    def check_program(cls, ctx: ProgramContext) -> Iterable[Finding]:
        reported = set()
        for truncation in ctx.program.truncations:
            place = _place(ctx, truncation)
            if place is None or place in reported:
                continue
            reported.add(place)
            yield cls.finding(place.path, place.span, _message(truncation, place), target=ctx.target.qualname)


# How code names each 64-bit dtype JAX truncates (NumPy's aliases included).
_NAMES = {"float64": ("float64", "double", "float_"), "complex128": ("complex128", "cdouble", "complex_"),
          "int64": ("int64", "longlong"), "uint64": ("uint64", "ulonglong")}


def _place(ctx: ProgramContext, truncation: Truncation) -> Location | None:
    """The project's frame that asked: the innermost whose call names the dtype (a helper that
    forwards its caller's ``dtype`` argument did not ask), else the innermost; None when no frame
    is in a file this program reports in."""
    frames = [frame for frame in truncation.frames if ctx.reports_in(frame.path)]
    return next((frame for frame in frames if _names_dtype(ctx, frame, truncation.requested)),
                frames[0] if frames else None)


def _names_dtype(ctx: ProgramContext, frame: Location, requested: str) -> bool:
    index = ctx.index_of(frame.path)
    call = index.node_at(frame.span, ast.Call) if index is not None else None
    if call is None:
        return False
    names = "|".join(_NAMES.get(requested, (requested,)))
    return re.search(rf"\b(?:{names})\b", index.text(call)) is not None


def _message(truncation: Truncation, place: Location) -> str:
    asked = f"`{truncation.api}` asks" if truncation.api else "this call asks"
    requester = truncation.frames[0]
    inside = "" if requester == place else (
        f" (inside {os.path.basename(requester.path)}:{requester.span.start_line}, which this line calls)")
    consequence = _CONSEQUENCE.get(truncation.requested, f"the value is {truncation.result}")
    return (f"{asked} for {truncation.requested}{inside}, but jax_enable_x64 is off: JAX makes it "
            f"{truncation.result}, so {consequence}. Enable x64 at startup "
            f'(`jax.config.update("jax_enable_x64", True)`) if {truncation.requested} is meant, or ask '
            f"for {truncation.result} explicitly.")
