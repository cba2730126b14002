"""The project's other files that a trace went through, read once each: the program rules check
a helper's operations in the helper's own file (jaxlint.rules.base), where the user fixes them."""
from __future__ import annotations

from typing import Callable

from jaxlint.scan.index import SourceIndex
from jaxlint.text import read_source


class ProjectSources:
    """``path in sources``: is it a project file; ``sources.get(path)``: its text and index."""

    def __init__(self, is_project: Callable[[str], bool],
                 known: dict[str, tuple[str, SourceIndex]] | None = None) -> None:
        self.is_project = is_project
        self.loaded: dict[str, tuple[str, SourceIndex] | None] = dict(known or {})
        self.verdicts: dict[str, bool] = {}

    def __call__(self, path: str) -> bool:
        if path not in self.verdicts:
            self.verdicts[path] = path.endswith(".py") and self.is_project(path)
        return self.verdicts[path]

    def get(self, path: str) -> tuple[str, SourceIndex] | None:
        """Text and index of a project file; None for other files and unreadable ones."""
        if path not in self.loaded:
            self.loaded[path] = None
            if self(path):
                try:
                    text = read_source(path).text
                    self.loaded[path] = (text, SourceIndex(path, text))
                except Exception:  # unreadable, undecodable, deleted or not Python: nothing to check there
                    pass
        return self.loaded[path]
