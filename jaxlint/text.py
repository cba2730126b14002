"""Source text: reading and writing user files without changing their encoding or line endings,
line breaks as Python counts them, byte and character columns, text edits, and the one splitter of
bracketed text at its top-level separators (hint comments, HLO attributes, signatures)."""
from __future__ import annotations

import errno
import functools
import hashlib
import io
import os
import re
import tokenize
from dataclasses import dataclass
from typing import Iterable, Iterator

from jaxlint.model import Edit, Span


@dataclass
class SourceFile:
    path: str
    text: str  # decoded, newlines exactly as in the file
    encoding: str
    bom: bool
    digest: str = ""  # sha256 of the bytes read: a write checks the file still holds them


class NotWritten(OSError):
    """A fixed file was left as it is on disk, for the reason given."""


class SourceError(Exception):
    """The file's bytes are not text Python can read (bad coding cookie, undecodable bytes)."""

    def __init__(self, message: str, data: bytes) -> None:
        super().__init__(message)
        self.message = message
        self.data = data  # the raw bytes, e.g. to check whether the file mentions jax at all


def read_source(path: str) -> SourceFile:
    """Decode as Python would: PEP 263 coding cookie, UTF-8 BOM, else UTF-8.

    Raises OSError if the file cannot be read and SourceError if it cannot be decoded.
    """
    with open(path, "rb") as handle:
        data = handle.read()
    return decode_source(path, data)


def decode_source(path: str, data: bytes) -> SourceFile:
    """``data``, the bytes of ``path``, decoded as ``read_source`` decodes a file's (SourceError)."""
    if not data.startswith(b"\xef\xbb\xbf") and b"coding" not in data[:_second_line_end(data)]:
        # No BOM and no word "coding" in the first two lines (where Python looks), so no cookie:
        # UTF-8, as the tokenizer would say (its detect_encoding costs more than the rest of the read).
        try:
            return SourceFile(path, data.decode("utf-8"), "utf-8", False, hashlib.sha256(data).hexdigest())
        except UnicodeDecodeError:
            pass  # the tokenizer's own error, below
    try:
        encoding, _ = tokenize.detect_encoding(io.BytesIO(data).readline)
        text = data.decode(encoding)
    except SyntaxError as error:  # unknown coding, or a cookie that contradicts the BOM
        raise SourceError(error.msg, data) from None
    except UnicodeDecodeError as error:
        line = data[: error.start].count(b"\n") + 1
        raise SourceError(f"cannot decode line {line} as {error.encoding}: {error.reason}", data) from None
    bom = encoding == "utf-8-sig"
    return SourceFile(path, text, "utf-8" if bom else encoding, bom, hashlib.sha256(data).hexdigest())


def _second_line_end(data: bytes) -> int:
    """Where the second line ends (as tokenize.detect_encoding's readline splits lines: at b"\\n")."""
    first = data.find(b"\n")
    second = data.find(b"\n", first + 1) if first >= 0 else -1
    return len(data) if second < 0 else second


# Real path -> (sha256 of the bytes this process last wrote there, the name written through): a
# file found changed to exactly those bytes was changed by jaxlint, through another of its names.
_OWN_WRITES: dict[str, tuple[str, str]] = {}


def write_atomic(source: SourceFile, text: str) -> None:
    """Write through a temporary file in the same folder and rename it over the original.

    Readers see the old file or the new one, never a partial write. ``text`` keeps its own
    newlines (no translation) and is encoded as the file was; a character that the file's
    encoding cannot hold raises UnicodeEncodeError before anything is written. Raises NotWritten,
    writing nothing, when the file no longer holds the bytes read (the user saved it meanwhile:
    their edit wins; when the change is jaxlint's own write through another name of the file, the
    message says so) or has no write permission at all. Where a rename would change the file's
    identity (more hard links, another owner jaxlint cannot give it back to) or the folder cannot
    take a temporary file, the file is rewritten in place instead, which keeps them.
    ``source.digest`` becomes the new bytes'.
    """
    data = (b"\xef\xbb\xbf" if source.bom else b"") + text.encode(source.encoding)
    real = os.path.realpath(source.path)  # replace a symlink's target, not the link
    with open(real, "rb") as handle:
        current = handle.read()
    current_digest = hashlib.sha256(current).hexdigest()
    if source.digest and current_digest != source.digest:
        own_digest, written_as = _OWN_WRITES.get(real, ("", ""))
        if own_digest == current_digest:
            raise NotWritten(errno.EAGAIN, f"jaxlint fixed this file through {relative(written_as)} in this "
                             "run; run again to fix it", source.path)
        raise NotWritten(errno.EAGAIN, "it changed since jaxlint read it; your version is kept, run again to fix it",
                         source.path)
    info = os.stat(real)
    if not info.st_mode & 0o222:
        raise NotWritten(errno.EACCES, "the file is read-only", source.path)
    owner_kept = not hasattr(os, "getuid") or (info.st_uid, info.st_gid) == (os.getuid(), os.getgid()) \
        or os.getuid() == 0  # no owners to keep on Windows; root can give the file back
    if info.st_nlink > 1 or not owner_kept:
        _write_in_place(real, data)
    else:
        import tempfile  # only writers need it (with random and shutil, a few ms of a warm run)

        try:
            # Not .py: a temporary file left by a killed process is never linted.
            handle_number, temp = tempfile.mkstemp(prefix=".jaxlint-", suffix=".tmp", dir=os.path.dirname(real))
        except PermissionError:  # a folder the user may not write to, holding a file they may
            _write_in_place(real, data)
        else:
            _replace(handle_number, temp, real, data, info)
    source.digest = hashlib.sha256(data).hexdigest()
    _OWN_WRITES[real] = (source.digest, source.path)


def _replace(handle: int, temp: str, real: str, data: bytes, info: os.stat_result) -> None:
    try:
        with os.fdopen(handle, "wb") as out:
            out.write(data)
            out.flush()
            os.fsync(out.fileno())
        os.chmod(temp, info.st_mode & 0o7777)
        if hasattr(os, "chown") and (info.st_uid, info.st_gid) != (os.getuid(), os.getgid()):
            os.chown(temp, info.st_uid, info.st_gid)  # only as root (see write_atomic)
        os.replace(temp, real)
    except BaseException:
        if os.path.exists(temp):
            os.unlink(temp)
        raise


def _write_in_place(real: str, data: bytes) -> None:
    """Overwrite the file's own bytes: its inode, links, owner and mode stay, at the price of a
    moment in which a reader could see a partial file."""
    with open(real, "r+b") as out:
        out.write(data)
        out.truncate()
        out.flush()
        os.fsync(out.fileno())


def write_text_atomic(path: str, text: str | bytes, prefix: str = ".jaxlint-") -> None:
    """Write a jaxlint-made UTF-8 file (report, page, signatures), or bytes, through a temporary
    file and a rename: a reader sees the old file or the whole new one. The permissions are the
    replaced file's, else what a plain open() gives (mkstemp's are 0600). Raises OSError."""
    import tempfile

    folder = os.path.dirname(os.path.abspath(path))
    handle, temp = tempfile.mkstemp(prefix=prefix, suffix=".tmp", dir=folder)
    try:
        with (os.fdopen(handle, "wb") if isinstance(text, bytes)
              else os.fdopen(handle, "w", encoding="utf-8", newline="")) as out:
            out.write(text)
        os.chmod(temp, _new_file_mode(path))
        os.replace(temp, path)
    except BaseException:
        if os.path.exists(temp):
            os.unlink(temp)
        raise


def _new_file_mode(path: str) -> int:
    try:
        return os.stat(path).st_mode & 0o7777
    except OSError:
        umask = os.umask(0)
        os.umask(umask)
        return 0o666 & ~umask


# Line breaks as Python's tokenizer (and so ast, Span and tracebacks) counts them. Not
# str.splitlines, which also splits at \f, \v, \x1c-\x1e, \x85, \u2028 and \u2029.
LINE_BREAK = re.compile(r"\r\n|\r|\n")


def split_lines(text: str) -> list[str]:
    """``text`` cut at Python's line breaks, without them; line ``n`` is item ``n - 1``. Text that
    ends in a break has a last, empty line: ``"a\\nb\\n"`` -> ``["a", "b", ""]``."""
    return LINE_BREAK.split(text)


def physical_lines(text: str, keepends: bool = False) -> list[str]:
    """The lines a file holds, as iterating it in text mode gives them (without their breaks
    unless ``keepends``): a final break ends the last line and starts no new one.
    ``"a\\nb\\n"`` -> ``["a", "b"]``; ``""`` -> ``[]``."""
    if keepends:
        starts = line_starts(text)
        return [text[start:end] for start, end in zip(starts, (*starts[1:], len(text))) if start < end]
    lines = split_lines(text)
    if lines[-1] == "":
        lines.pop()
    return lines


def read_lines(path: str) -> list[str]:
    """A file's physical lines for showing them: UTF-8, undecodable bytes replaced. Raises OSError."""
    with open(path, encoding="utf-8", errors="replace", newline="") as handle:
        return physical_lines(handle.read())


@functools.lru_cache(maxsize=8)  # every edit and span of a file asks about the same text
def line_runs(lines: Iterable[int]) -> list[tuple[int, int]]:
    """Line numbers, sorted, as (first, last) runs of consecutive lines: how the caches keep
    sets of lines."""
    runs: list[tuple[int, int]] = []
    for line in sorted(lines):
        if runs and runs[-1][1] == line - 1:
            runs[-1] = (runs[-1][0], line)
        else:
            runs.append((line, line))
    return runs


def line_starts(text: str) -> tuple[int, ...]:
    """Character offset of each line's first character (one more than there are breaks)."""
    return (0, *(match.end() for match in LINE_BREAK.finditer(text)))


@functools.lru_cache(maxsize=8)
def _lines(text: str) -> tuple[str, ...]:
    return tuple(split_lines(text))


def newline_of(text: str) -> str:
    """The newline to write into ``text``: its first line break, else ``"\\n"``."""
    match = LINE_BREAK.search(text)
    return match.group() if match else "\n"


def line_code_span(line: int, line_text: str) -> Span:
    """The code on line ``line`` (``line_text``, without its break), without indentation and
    trailing blanks; an empty span at column 0 on a blank line."""
    code = line_text.rstrip()
    return Span(line, len(code) - len(code.lstrip()), line, len(code))


def char_column(line_text: str, byte_col: int) -> int:
    """Character column of a UTF-8 byte column (ast, co_positions and tracebacks count bytes)."""
    if line_text.isascii():
        return byte_col
    return len(line_text.encode("utf-8")[:byte_col].decode("utf-8", errors="ignore"))


def char_span(source: str, span: Span) -> Span:
    """``span`` with UTF-8 byte columns (ast, co_positions) -> character columns (jaxlint's Span);
    a column on a line that ``source`` does not have stays as it is."""
    if source.isascii():
        return span
    lines = _lines(source)

    def column(line: int, byte_col: int) -> int:
        return char_column(lines[line - 1], byte_col) if 0 < line <= len(lines) else byte_col

    return Span(span.start_line, column(span.start_line, span.start_col),
                span.end_line, column(span.end_line, span.end_col))


def offset_of(source: str, line: int, col: int) -> int:
    """Character offset of a (1-based line, 0-based column) position; a line after the last one
    counts from the end of ``source``."""
    starts = line_starts(source)
    if line - 1 >= len(starts):
        return len(source) + col
    return (starts[line - 1] if line > 0 else 0) + col


def apply_edits(source: str, edits: list[Edit]) -> str:
    """Apply edits; identical duplicates count once, overlapping ones raise ValueError."""
    ordered = sorted(set(edits), key=lambda e: (e.span.start_line, e.span.start_col,
                                                e.span.end_line, e.span.end_col))
    out, cursor, previous_start = [], 0, -1
    for edit in ordered:
        start = offset_of(source, edit.span.start_line, edit.span.start_col)
        end = offset_of(source, edit.span.end_line, edit.span.end_col)
        # Two different insertions at one point have no defined order: a conflict too.
        if start < cursor or (start == end == previous_start):
            raise ValueError("overlapping edits")
        out.append(source[cursor:start])
        out.append(edit.content)
        cursor, previous_start = end, start
    out.append(source[cursor:])
    return "".join(out)


def shift_position(source: str, edits: list[Edit], line: int, col: int) -> tuple[int, int]:
    """Where (line, col) of the original source lands after the edits."""
    offset = offset_of(source, line, col)
    before = [e for e in edits if offset_of(source, e.span.end_line, e.span.end_col) <= offset]
    moved = apply_edits(source[:offset], before)
    starts = line_starts(moved)
    return len(starts), len(moved) - starts[-1]


def relative(path: str) -> str:
    """``path`` as reports show it: relative to the working folder when inside it."""
    try:
        rel = os.path.relpath(path)
    except ValueError:
        return path
    return path if rel.startswith("..") else rel


def ancestors(path: str) -> Iterator[str]:
    """``path``, then each folder above it, up to the filesystem root (no normalizing: an
    absolute path gives absolute folders)."""
    while True:
        yield path
        parent = os.path.dirname(path)
        if parent == path:
            return
        path = parent


def size_text(nbytes: float) -> str:
    """A byte count as findings write it: ``1.5 MiB``, ``64.0 KiB``, ``12 bytes``."""
    for unit, scale in (("GiB", 2**30), ("MiB", 2**20), ("KiB", 2**10)):
        if nbytes >= scale:
            return f"{nbytes / scale:.1f} {unit}"
    return f"{int(nbytes)} bytes"


BRACKETS = {"(": ")", "[": "]", "{": "}"}  # opener -> closer
CLOSING_BRACKETS = frozenset(BRACKETS.values())


class BracketError(ValueError):
    """Unbalanced brackets or an unterminated string literal; ``index`` is where, in the text."""

    def __init__(self, message: str, index: int) -> None:
        super().__init__(message)
        self.index = index


def outside_strings(text: str, start: int = 0, end: int | None = None, quotes: str = "'\"",
                    strict: bool = True) -> Iterator[tuple[int, str, int]]:
    """(index, char, depth) for the chars of text[start:end] outside string literals (opened by
    one of ``quotes``, tripled or not; a backslash escapes). A bracket reports the depth outside
    itself, so top-level brackets have depth 0. ``strict``: an unbalanced bracket or an
    unterminated string raises BracketError; otherwise a stray closer is a plain char and an
    unterminated string runs to the end (machine-written text such as HLO is taken as it comes)."""
    end = len(text) if end is None else end
    stack: list[int] = []  # indices of the open brackets
    i = start
    while i < end:
        ch = text[i]
        if ch in quotes:
            i = _string_end(text, i, end, strict)
            continue
        if ch in CLOSING_BRACKETS:
            if stack and BRACKETS[text[stack[-1]]] == ch:
                stack.pop()
            elif strict and not stack:
                raise BracketError(f"unbalanced brackets: {ch!r} closes nothing", i)
            elif strict:
                opener = stack[-1]
                raise BracketError(f"unbalanced brackets: {ch!r} does not match {text[opener]!r} "
                                   f"at column {opener}", i)
            elif stack:
                stack.pop()
        yield i, ch, len(stack)
        if ch in BRACKETS:
            stack.append(i)
        i += 1
    if stack and strict:
        raise BracketError(f"unbalanced brackets: {text[stack[-1]]!r} is never closed", stack[-1])


def _string_end(text: str, start: int, end: int, strict: bool) -> int:
    """Index just past the string literal whose opening quote is at text[start]."""
    quote = text[start] * 3 if text.startswith(text[start] * 3, start) else text[start]
    i = start + len(quote)
    while i < end:
        if text[i] == "\\":
            i += 2  # even raw strings can't end on an escaped quote
        elif text.startswith(quote, i):
            return i + len(quote)
        else:
            i += 1
    if strict:
        raise BracketError("unterminated string", start)
    return end


def split_outside_brackets(text: str, separator: str = ",", start: int = 0, end: int | None = None,
                           quotes: str = "'\"", strict: bool = True) -> list[tuple[int, int]]:
    """Ranges of text[start:end] between the ``separator`` chars outside brackets and string
    literals (``outside_strings``: ``quotes``, ``strict``); unstripped, empty ones kept."""
    end = len(text) if end is None else end
    pieces = []
    for i, ch, depth in outside_strings(text, start, end, quotes, strict):
        if ch == separator and depth == 0:
            pieces.append((start, i))
            start = i + 1
    pieces.append((start, end))
    return pieces


def top_level_items(text: str, separator: str = ",", quotes: str = "'\"", strict: bool = True) -> list[str]:
    """The stripped, non-empty pieces of ``split_outside_brackets``: ``a, f(b, c), [d]`` gives
    ``a``, ``f(b, c)`` and ``[d]``."""
    pieces = (text[s:e].strip() for s, e in split_outside_brackets(text, separator, quotes=quotes, strict=strict))
    return [piece for piece in pieces if piece]
