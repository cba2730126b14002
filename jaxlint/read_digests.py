"""What the test-run store's entries vouch for (engine/store.py): the sha256 of each project file
as the session read it, not as it is when the session ends. A file edited while the tests or the
traces after them run (an editor's save, an agent's edit) would otherwise be hashed after the edit,
and its entry would vouch for code the session never ran.

Modules the watched import compiles (watched_imports.py) and the script ``jaxlint run`` runs are
hashed from the very bytes compiled. Any other file (a module imported before jaxlint started, or
by another kind of loader) is hashed when the entry is written, which vouches for what ran only
if the file has not changed since the session started: its modification and change times must be
older than the start by ``RACY_SECONDS`` (git's rule for racy entries: a time that close to the
start cannot tell, filesystems keep times as coarse as 2 s). Otherwise its digest is unknown
(``""``, equal to no digest) and the entry is stale at once: check re-runs its tests.

The same rule guards what long-lived processes remember of a file by its stamp (``settled_stamp``:
the editor server's pytest configuration, a worker's signatures file): a stamp
younger than ``RACY_SECONDS`` is not trusted, the file is read again.
"""
from __future__ import annotations

import hashlib
import os
import time
from typing import Iterable, Mapping, MutableMapping

RACY_SECONDS = 2.0
UNKNOWN = ""  # never a file's digest: an entry holding it is stale


def note(read: MutableMapping[str, str], path: str, data: bytes) -> None:
    """Keep the digest of ``data``, the bytes of ``path`` a loader compiled; a file compiled twice
    from different bytes (a reload after an edit) ran both: its digest is unknown."""
    digest = hashlib.sha256(data).hexdigest()
    path = os.path.abspath(path)
    read[path] = digest if read.get(path, digest) == digest else UNKNOWN


def merged(reads: Iterable[Mapping[str, str]]) -> dict[str, str]:
    """The digests of several processes (xdist's workers): a file two of them read differently is unknown."""
    found: dict[str, str] = {}
    for read in reads:
        for path, digest in read.items():
            found[path] = digest if found.get(path, digest) == digest else UNKNOWN
    return found


def unchanged_since(path: str, started: float) -> bool:
    """Whether ``path`` (its modification and change times) was last changed ``RACY_SECONDS``
    before ``started`` (``time.time()``), so that its bytes now are those read after that."""
    try:
        info = os.stat(path)
    except OSError:
        return True  # gone: its digest says so
    return max(info.st_mtime_ns, info.st_ctime_ns) < (started - RACY_SECONDS) * 1e9


def settled_stamp(path: str) -> tuple[int, ...] | None:
    """The file's (or folder's) modification and change times, size and inode, for a memo of what
    was read from it: None when it changed within ``RACY_SECONDS`` of now, since an edit in the
    same tick of the clock that keeps the size would leave the same stamp (a memo never matches
    None: the file is read again); ``(-1,)`` when it does not exist."""
    try:
        info = os.stat(path)
    except OSError:
        return (-1,)
    if max(info.st_mtime_ns, info.st_ctime_ns) >= (time.time() - RACY_SECONDS) * 1e9:
        return None
    return (info.st_mtime_ns, info.st_ctime_ns, info.st_size, info.st_ino)
