"""``jaxlint explain PATH::QUALNAME``: what one function compiles to, what is really computed more
than once, what it costs, and what each finding's fix saves.

``run.explain()`` returns the report: one plain JSON-able dict (``schema_version`` 1), rendered
as text (terminal.py), JSON, or an HTML page (html.py). User code runs only in a worker process: the
worker's analysis runs the job, and collect.py, the job kind explain registers, adds the compile.
Only collect.py and listing.py import JAX (in the worker).
"""
from __future__ import annotations

__all__ = ["ExplainError"]


class ExplainError(Exception):
    """Why explain cannot run: printed as ``jaxlint: <message>``, exit status 2."""


