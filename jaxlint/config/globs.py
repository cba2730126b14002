"""Path patterns as ruff matches them (exclude, extend-exclude, per-file-ignores).

ruff compiles each pattern with globset's defaults, where ``*`` also matches ``/``. A pattern is
tried against the absolute path (the pattern joined to the folder of the configuration that
gave it) and, when it has no ``/``, against the file or folder name alone: ``tests`` matches
every folder named tests, ``tests/*.py`` only those under ``<config folder>/tests``.
"""
from __future__ import annotations

import os
import posixpath
import re
from dataclasses import dataclass
from functools import cached_property, lru_cache


class PatternError(ValueError):
    """A glob that cannot be compiled (an unclosed ``[`` or ``{``)."""


@lru_cache(maxsize=None)
def compile_glob(pattern: str) -> re.Pattern[str]:
    """The regular expression of a globset glob (``literal_separator`` off, as in ruff)."""
    return re.compile(_translate(pattern) + r"\Z", re.DOTALL)


def _translate(pattern: str) -> str:
    out: list[str] = []
    i, depth = 0, 0  # depth: open ``{`` alternations
    while i < len(pattern):
        char = pattern[i]
        if pattern.startswith("**/", i) and (i == 0 or pattern[i - 1] == "/"):
            out.append("(?:.*/)?")  # zero or more folders
            i += 3
        elif char == "*":
            out.append(".*")
            while i < len(pattern) and pattern[i] == "*":
                i += 1
        elif char == "?":
            out.append(".")
            i += 1
        elif char == "[":
            end = pattern.find("]", i + 2 if pattern[i + 1:i + 2] in ("!", "^") else i + 1)
            if end < 0:
                raise PatternError(f"unclosed `[` in the glob {pattern!r}")
            body = pattern[i + 1:end]
            negated = body[:1] in ("!", "^")
            body = body[1:] if negated else body
            out.append("[" + ("^" if negated else "") + body.replace("\\", "\\\\") + "]")
            i = end + 1
        elif char == "{":
            out.append("(?:")
            depth += 1
            i += 1
        elif char == "}" and depth:
            out.append(")")
            depth -= 1
            i += 1
        elif char == "," and depth:
            out.append("|")
            i += 1
        elif char == "\\" and i + 1 < len(pattern):
            out.append(re.escape(pattern[i + 1]))
            i += 2
        else:
            out.append(re.escape(char))
            i += 1
    if depth:
        raise PatternError(f"unclosed `{{` in the glob {pattern!r}")
    return "".join(out)


def _posix(path: str) -> str:
    return path.replace(os.sep, "/")


@dataclass(frozen=True)
class PathPattern:
    """One user pattern and the folder it is relative to."""

    pattern: str
    base: str  # absolute folder

    def check(self) -> None:
        """Raise PatternError if the glob does not compile."""
        compile_glob(self.pattern)

    @cached_property
    def parts(self) -> tuple[str | None, str, str]:
        """(regex of the name or None, base prefix, regex of the rest of an absolute path)."""
        name = _translate(self.pattern) if "/" not in self.pattern else None
        if self.pattern.startswith("/"):
            return name, "", _translate(posixpath.normpath(self.pattern))
        # The base (and the ../ leading the pattern) is a literal folder: it may hold `[` or `*`.
        components = self.pattern.split("/")
        leading = next((i for i, c in enumerate(components) if c not in (".", "..", "")), len(components))
        folder = _posix(os.path.normpath(os.path.join(self.base, *components[:leading])))
        rest = posixpath.normpath("/".join(components[leading:])) if leading < len(components) else ""
        return name, folder.rstrip("/") + "/", _translate(rest)

    def matches(self, path: str) -> bool:
        """``path``: absolute."""
        return PathMatcher([self]).matches(path)


class PathMatcher:
    """Several patterns compiled together: one regex for names, one per base folder."""

    def __init__(self, patterns: list[PathPattern]) -> None:
        names = [p.parts[0] for p in patterns if p.parts[0] is not None]
        self.names = re.compile("(?:" + "|".join(names) + r")\Z", re.DOTALL) if names else None
        rests: dict[str, list[str]] = {}
        for pattern in patterns:
            _, prefix, rest = pattern.parts
            rests.setdefault(prefix, []).append(rest)
        self.paths = [(prefix, re.compile("(?:" + "|".join(r) + r")\Z", re.DOTALL)) for prefix, r in rests.items()]

    def matches(self, path: str) -> bool:
        """``path``: absolute."""
        if self.names is not None and self.names.match(os.path.basename(path)):
            return True
        path = _posix(path)
        return any(path.startswith(prefix) and rest.match(path[len(prefix):]) for prefix, rest in self.paths)


@dataclass(frozen=True)
class PerFileIgnore:
    """``"glob" = [codes]``; a glob starting with ``!`` applies to the files it does NOT match."""

    pattern: PathPattern
    negated: bool
    selectors: tuple[str, ...]

    @classmethod
    def parse(cls, glob: str, selectors: list[str], base: str) -> PerFileIgnore:
        negated = glob.startswith("!")
        return cls(PathPattern(glob[1:] if negated else glob, base), negated, tuple(selectors))

    def applies_to(self, path: str) -> bool:
        return self.pattern.matches(path) != self.negated

    @property
    def glob(self) -> str:
        return ("!" if self.negated else "") + self.pattern.pattern
