"""Tracing in the calling process rather than a worker: ``jaxlint.lint`` and ``pytest --jaxlint``
trace a live function object there, with JAX's caches cleared around the trace and vmap records
kept for the function's own file, as the worker keeps them for a module it imports."""
from __future__ import annotations

import contextlib
import re
from typing import Any, Iterator

import jax

from jaxlint import scan
from jaxlint.jaxapi import tracebacks
from jaxlint.model import Span, Target
from jaxlint.text import split_lines
from jaxlint.worker import instrument


@contextlib.contextmanager
def recording_vmaps(path: str, namespace: dict[str, Any]) -> Iterator[None]:
    """Trace inside this block to get vmap records for the vmaps called from ``path``.

    JAX's caches are cleared first (a cached trace would not run the Python code, so no records)
    and afterwards (the cached trace holds jaxlint's markers); the records made here are dropped
    on the way out (they hold the function and its arguments). ``namespace``: the globals of the
    traced function, where ``from jax import vmap`` bound the real vmap before recording began."""
    _exclude_jaxlint_frames()
    known = set(instrument.VMAP_RECORDS)
    jax.clear_caches()
    real_vmap = jax.vmap
    try:
        with instrument.VmapRecorder({path}), _rebound(namespace, real_vmap, jax.vmap):
            yield
    finally:
        jax.clear_caches()
        for tag in set(instrument.VMAP_RECORDS) - known:
            del instrument.VMAP_RECORDS[tag]


def target_for(path: str, text: str, name: str, qualname: str, first_line: int, params: list[str],
               targets: list[Target] | None = None) -> Target:
    """The scanned target defined at ``first_line`` (the CLI's spans), else one built from the
    def statement found there: findings about the whole function point at its name. ``targets``:
    the file's, when the caller has them (its source index), so the file is not scanned again."""
    try:
        if targets is None:
            targets = scan.scan_source(path, text) if text else []
    except Exception:  # the file changed since import and no longer parses
        targets = []
    found = [t for t in targets if t.first_line == first_line and t.name == name]
    if found:
        return found[0]
    span = Span(first_line, 0, first_line, 0)
    for index, source_line in enumerate(split_lines(text)[first_line - 1:first_line + 20], start=first_line):
        match = re.search(rf"\bdef\s+({re.escape(name)})\b", source_line)
        if match:  # past the decorators: point at the name, as scanned targets do
            span = Span(index, match.start(1), index, match.end(1))
            break
    return Target(name=name, qualname=qualname, kind="api", span=span, name_span=span, first_line=first_line,
                  params=params)


@contextlib.contextmanager
def _rebound(namespace: dict[str, Any], old: Any, new: Any) -> Iterator[None]:
    """Swap ``new`` in for ``old`` in ``namespace`` for the block (the traced function's module only)."""
    names = [name for name, value in list(namespace.items()) if value is old and old is not new]
    for name in names:
        namespace[name] = new
    try:
        yield
    finally:
        for name in names:
            if namespace.get(name) is new:
                namespace[name] = old


_excluded = False


def _exclude_jaxlint_frames() -> None:
    """As in the worker: op locations skip jaxlint's own frames (its tracing and marker code)."""
    global _excluded
    if not _excluded:
        tracebacks.exclude_from_user_frames()
        _excluded = True
