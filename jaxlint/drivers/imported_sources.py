"""The source of each project module as the session imported it, for what the plugin reads after
the tests: the traces' rules (where a finding points, its fix) and the report's lines.

A file edited while the tests run (an editor's save, an agent's edit) must not be read new against
the code that ran: its lines would point elsewhere. The watched import (watched_imports.py) hands
over the bytes it compiled, and those are read. A module compiled twice from different bytes, or
one it did not compile (imported before jaxlint started, or by another kind of loader) whose
modification or change time is after the session's start, changed during the session and is read
as it is now, which the traces need, but its name is kept in ``changed``: the plugin leaves that
file's findings out of its report and says which file it was (the store's entries of it are stale
anyway: their digest is unknown). Under pytest-xdist a worker hands over the text of each file its
findings are in (``texts``), which the controller reads.
"""
from __future__ import annotations

import os
from typing import Iterable

from jaxlint.text import SourceFile, decode_source, read_source


class ImportedSources:
    """The project files' texts as the session compiled them, and those that changed meanwhile."""

    def __init__(self) -> None:
        self.held: dict[str, bytes | None] = {}  # path -> the bytes compiled (None: two different ones)
        self.received: dict[str, str | None] = {}  # path -> a worker's text (None: changed there)
        self.started: float | None = None  # the session's start (time.time()); None: never judged changed
        self.changed: set[str] = set()  # files a read found changed during the session

    def note(self, path: str, data: bytes) -> None:
        path = os.path.abspath(path)
        self.held[path] = data if self.held.get(path, data) == data else None

    def read(self, path: str) -> SourceFile:
        """``path`` as the session imported it, else as it is now (kept in ``changed`` when it
        changed since the session started); raises OSError and SourceError as ``read_source``."""
        path = os.path.abspath(path)
        data, text = self.held.get(path), self.received.get(path)
        if data is not None:
            return decode_source(path, data)
        if text is not None:
            return SourceFile(path, text, "utf-8", False)
        self.judge([path])
        return read_source(path)

    def judge(self, paths: Iterable[str]) -> None:
        """Keep in ``changed`` each of ``paths`` that changed during the session: compiled from two
        different texts, or not compiled here and modified since the session started."""
        for path in map(os.path.abspath, paths):
            if path in self.held or path in self.received:
                if self.held.get(path) is None and self.received.get(path) is None:
                    self.changed.add(path)
            elif self.started is not None and _changed_since(path, self.started):
                self.changed.add(path)

    def texts(self, paths: Iterable[str]) -> dict[str, str | None]:
        """The text of each file as read here, for the controller (None: changed during the session)."""
        found: dict[str, str | None] = {}
        for path in set(map(os.path.abspath, paths)):
            try:
                text = self.read(path).text
            except Exception:  # unreadable: the controller reads it as it is
                continue
            found[path] = None if path in self.changed else text
        return found

    def receive(self, texts: dict[str, str | None]) -> None:
        """A worker's texts; two workers that read a file differently: changed."""
        for path, text in texts.items():
            self.received[path] = text if self.received.get(path, text) == text else None


def _changed_since(path: str, started: float) -> bool:
    """Modified (or its times put back: changed) after ``started``."""
    try:
        info = os.stat(path)
    except OSError:
        return False  # gone: the read says so
    return max(info.st_mtime_ns, info.st_ctime_ns) >= started * 1e9
