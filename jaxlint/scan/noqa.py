"""Reading suppression comments the way ruff reads ``# noqa``, with the tokenizer: a ``#`` inside
a string is not a comment, and multi-line statements are known (a statement spanning lines
accepts its suppression on its first or last line).

Spellings: ``# noqa`` (every code), ``# noqa: JX101, JX201`` (codes or rule names, separated by
commas or spaces; other tools' codes are kept and ignored), ``# jaxlint: ignore[JX101]``,
``# jaxlint: ignore`` (every code), and on a line of its own ``# jaxlint: noqa`` (the whole file)
or ``# jaxlint: noqa: JX101`` (those codes in the whole file).
"""
from __future__ import annotations

import bisect
import functools
import io
import re
import tokenize
from dataclasses import dataclass, field
from typing import AbstractSet, Any, Iterable, Iterator, Mapping

from jaxlint.text import line_runs, split_lines

_DIRECTIVE = re.compile(
    r"#\s*(?:(?P<noqa>noqa)|jaxlint\s*:\s*(?:(?P<file>noqa)|(?P<ignore>ignore)))(?![\w-])",
    re.IGNORECASE)
_COLON = re.compile(r"\s*:")
_BRACKET = re.compile(r"\s*\[")
_CLOSE = re.compile(r"[\s,]*\]")
_SEPARATOR = re.compile(r"[\s,]*")
_CODE = re.compile(r"[A-Za-z]+[0-9]+(?![\w-])")
_NAME = re.compile(r"[a-z][a-z0-9]*(?:-[a-z0-9]+)+(?![\w-])")
# Cheap test before tokenizing: a file without these words has no suppression comment.
MAY_HAVE_DIRECTIVES = re.compile(r"noqa|jaxlint\s*:\s*ignore", re.IGNORECASE)
_SKIPPED = (tokenize.COMMENT, tokenize.NL, tokenize.INDENT, tokenize.DEDENT, tokenize.ENDMARKER,
            tokenize.ENCODING)


@dataclass(frozen=True)
class Item:
    """One code or name in a directive, at [start, end) columns of its line."""

    text: str
    start: int
    end: int
    code: str | None  # the jaxlint code it names; None for another tool's code


@dataclass(eq=False)
class Directive:
    line: int
    start: int  # column of its ``#``
    end: int  # column just after it (after the last code, or the ``]``)
    kind: str  # "noqa" or "jaxlint: ignore", as messages name it
    items: list[Item] | None  # None: bare, every code
    file_level: bool
    line_text: str  # the physical line, without its line break
    comment_start: int  # the comment may hold other text before or after the directive
    comment_end: int
    used: set[str] = field(default_factory=set)  # codes it suppressed in this run

    @property
    def codes(self) -> set[str]:
        return {item.code for item in self.items or [] if item.code is not None}

    def covers(self, code: str) -> bool:
        return self.items is None or code in self.codes


@dataclass
class Comments:
    """What the tokenizer says about one source text."""

    directives: list[Directive]
    # line -> (first, last) line of the multi-line statement (logical line) it belongs to
    statements: Mapping[int, tuple[int, int]]
    commentable: AbstractSet[int]  # lines whose end can take a comment (not in a string, no backslash)
    complete: bool  # False: tokenizing stopped at an error; lines after it are unknown

    def line_directives(self, line: int) -> list[Directive]:
        return [d for d in self.directives if d.line == line and not d.file_level]

    def accepting_lines(self, line: int) -> list[int]:
        """Lines whose directives cover a finding reported on ``line``: the line itself, and the
        first and last lines of the multi-line statement it is part of."""
        first, last = self.statements.get(line, (line, line))
        return list(dict.fromkeys([line, first, last]))


def read_comments(text: str, known: Mapping[str, str], tokens: Tokens | None = None) -> Comments:
    """The suppression directives of ``text`` (a file with a syntax error keeps the directives
    found before the error) and its statements. ``known``: code and kebab-case rule name -> code,
    for every jaxlint rule (``jaxlint.rules.codes_by_name()``). The text is tokenized once
    (``tokenized``), unless ``tokens`` (the scan cache's) are given; each call parses the
    directives afresh, since a run marks them ``used``."""
    tokens = tokens if tokens is not None else tokenized(text)
    physical_lines = split_lines(text)  # token.line is not one physical line on 3.12+
    directives = [directive for comment, line, column in tokens.comments
                  for directive in parse_comment(comment, line, column, physical_lines[line - 1], known)]
    return Comments(directives, tokens.statements, tokens.commentable, tokens.complete)


@dataclass(frozen=True)
class Tokens:
    """What the tokenizer says about one source text, directives aside."""

    comments: tuple[tuple[str, int, int], ...]  # (text, line, column) of the comments before any error
    statements: Mapping[int, tuple[int, int]]  # as Comments.statements (read-only: shared)
    commentable: AbstractSet[int]
    complete: bool  # False: an error token or a tokenizer error; lines after it are unknown
    # Lines of every comment token when the tokenizer read the whole text (error tokens included,
    # which it steps over), None when it raised: JX905's view, a hint quoted in a string is none.
    comment_lines: tuple[int, ...] | None


@functools.lru_cache(maxsize=8)
def tokenized(text: str) -> Tokens:
    """Tokenize ``text`` once, however many callers ask (the worker's traced lines and JX905, the
    parent's suppressions and fixer): as far as it goes for the directives and statements."""
    comments: list[tuple[str, int, int]] = []
    statements: dict[int, tuple[int, int]] = {}
    commentable: set[int] = set()
    inside_tokens: set[int] = set()
    every_comment: list[int] | None = []
    first: int | None = None
    complete = True
    try:
        for token in tokenize.generate_tokens(io.StringIO(text).readline):
            kind, (start_line, start_col), (end_line, _) = token.type, token.start, token.end
            if kind == tokenize.COMMENT:
                every_comment.append(start_line)  # type: ignore[union-attr]
            if kind == tokenize.ERRORTOKEN:  # e.g. an unterminated string: Python 3.12+ raises here
                complete = False
            if not complete:
                continue  # the directives and statements stop here; the comment lines go on
            if start_line < end_line and kind not in (tokenize.NEWLINE, tokenize.NL):
                inside_tokens.update(range(start_line, end_line))  # a string's line breaks
            if kind in (tokenize.NL, tokenize.COMMENT):
                commentable.add(start_line)
            if kind == tokenize.COMMENT:
                comments.append((token.string, start_line, start_col))
            if kind == tokenize.NEWLINE:
                commentable.add(start_line)
                if first is not None and start_line > first:
                    for line in range(first, start_line + 1):
                        statements[line] = (first, start_line)
                first = None
            elif kind not in _SKIPPED and first is None:
                first = start_line
    except (tokenize.TokenError, SyntaxError):  # IndentationError included
        complete = False
        every_comment = None
    return Tokens(tuple(comments), statements, frozenset(commentable - inside_tokens), complete,
                  tuple(every_comment) if every_comment is not None else None)


def tokens_to_json(tokens: Tokens) -> dict[str, Any]:
    """What ``read_comments`` needs of ``tokens``, as the scan cache keeps it: the comments that
    hold a directive (the others give it nothing), line sets as runs of lines, each statement once."""
    return {"comments": [list(c) for c in tokens.comments if _DIRECTIVE.search(c[0])],
            "statements": sorted(set(tokens.statements.values())),
            "commentable": line_runs(tokens.commentable), "complete": tokens.complete,
            "comment_lines": None if tokens.comment_lines is None else list(tokens.comment_lines)}


def tokens_from_json(data: dict[str, Any]) -> Tokens:
    comment_lines = data["comment_lines"]
    return Tokens(tuple((str(text), int(line), int(column)) for text, line, column in data["comments"]),
                  LineRanges(data["statements"]), LineRuns(data["commentable"]), bool(data["complete"]),
                  None if comment_lines is None else tuple(comment_lines))


class LineRanges(Mapping[int, tuple[int, int]]):
    """Each line of sorted, disjoint (first, last) ranges -> its range: a file's multi-line
    statements as the scan cache keeps them, looked up without listing every line (a warm run
    decodes every cached file's tokens, and settles few)."""

    def __init__(self, ranges: Iterable[Iterable[int]]) -> None:
        self._ranges = [(int(first), int(last)) for first, last in ranges]
        self._firsts = [first for first, _ in self._ranges]

    def __getitem__(self, line: int) -> tuple[int, int]:
        index = bisect.bisect_right(self._firsts, line) - 1
        if index >= 0 and line <= self._ranges[index][1]:
            return self._ranges[index]
        raise KeyError(line)

    def __iter__(self) -> Iterator[int]:
        return (line for first, last in self._ranges for line in range(first, last + 1))

    def __len__(self) -> int:
        return sum(last - first + 1 for first, last in self._ranges)


class LineRuns(AbstractSet[int]):
    """The lines of sorted, disjoint (first, last) runs, as a set (see LineRanges)."""

    def __init__(self, runs: Iterable[Iterable[int]]) -> None:
        self._ranges = LineRanges(runs)

    def __contains__(self, line: object) -> bool:
        return isinstance(line, int) and line in self._ranges

    def __iter__(self) -> Iterator[int]:
        return iter(self._ranges)

    def __len__(self) -> int:
        return len(self._ranges)


def parse_comment(comment: str, line: int, column: int, line_text: str,
                  known: Mapping[str, str]) -> list[Directive]:
    """The directives in one comment token (``# type: ignore  # noqa: JX101`` holds one);
    ``line_text``: its physical line, without the line break."""
    own_line = not line_text[:column].strip()
    found: list[Directive] = []
    position = 0
    for match in _DIRECTIVE.finditer(comment):
        if match.start() < position:
            continue
        parsed = _parse_directive(comment, match, known)
        if parsed is None:  # malformed (``# noqa:`` without codes): ignored, as ruff does
            continue
        kind, items, end = parsed
        position = end
        file_level = match.group("file") is not None and own_line
        absolute = None if items is None else [
            Item(i.text, column + i.start, column + i.end, i.code) for i in items]
        found.append(Directive(line, column + match.start(), column + end, kind, absolute,
                               file_level, line_text, column, column + len(comment)))
    return found


def _parse_directive(comment: str, match: re.Match,
                     known: Mapping[str, str]) -> tuple[str, list[Item] | None, int] | None:
    end = match.end()
    if match.group("ignore") is not None:
        bracket = _BRACKET.match(comment, end)
        if bracket is None:
            return "jaxlint: ignore", None, end
        items, after = _items(comment, bracket.end(), known)
        close = _CLOSE.match(comment, after)
        if not items or close is None:
            return None
        return "jaxlint: ignore", items, close.end()
    kind = "noqa" if match.group("noqa") is not None else "jaxlint: noqa"
    colon = _COLON.match(comment, end)
    if colon is None:
        return kind, None, end
    items, after = _items(comment, colon.end(), known)
    return (kind, items, after) if items else None


def _items(comment: str, position: int, known: Mapping[str, str]) -> tuple[list[Item], int]:
    """Codes (``JX101``, ``E501``) and jaxlint rule names, up to the first other word (ruff stops
    there too: ``# noqa: JX101 explanation`` names one code); columns relative to the comment."""
    items: list[Item] = []
    end = position
    while True:
        start = _SEPARATOR.match(comment, end).end()
        code = _CODE.match(comment, start)
        name = _NAME.match(comment, start)
        if code is not None:
            text = code.group()
            items.append(Item(text, start, code.end(), known.get(text.upper())))
        elif name is not None and name.group() in known:
            items.append(Item(name.group(), start, name.end(), known[name.group()]))
        else:
            return items, end
        end = items[-1].end
