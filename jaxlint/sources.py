"""Reading and writing user files without changing their encoding or line endings."""
from __future__ import annotations

import io
import os
import tempfile
import tokenize
from dataclasses import dataclass


@dataclass
class SourceFile:
    path: str
    text: str  # decoded, newlines exactly as in the file
    encoding: str
    bom: bool


def read_source(path: str) -> SourceFile:
    with open(path, "rb") as handle:
        data = handle.read()
    encoding, _ = tokenize.detect_encoding(io.BytesIO(data).readline)
    bom = encoding == "utf-8-sig"
    text = data.decode(encoding)
    return SourceFile(path, text, "utf-8" if bom else encoding, bom)


def write_atomic(source: SourceFile, text: str) -> None:
    """Write through a temporary file in the same folder and rename it over the original."""
    data = (b"\xef\xbb\xbf" if source.bom else b"") + text.encode(source.encoding)
    folder = os.path.dirname(os.path.abspath(source.path))
    mode = os.stat(source.path).st_mode & 0o7777
    handle, temp = tempfile.mkstemp(prefix=".jaxlint-", suffix=".py", dir=folder)
    try:
        with os.fdopen(handle, "wb") as out:
            out.write(data)
            out.flush()
            os.fsync(out.fileno())
        os.chmod(temp, mode)
        os.replace(temp, source.path)
    except BaseException:
        if os.path.exists(temp):
            os.unlink(temp)
        raise
