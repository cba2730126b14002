"""The digests of the test modules and ``conftest.py`` files as pytest imported them, for the
test-run store (engine/tested_by.py: an edit of a test makes the entries of what it reached stale).

pytest imports them with its own loader, not jaxlint's watched import, so their bytes are hashed
around the import: a test module just before pytest collects it and again just after (an edit in
between leaves its digest unknown, ``read_digests.note``), a ``conftest.py`` when pytest registers
it, right after its import. An edit after that, while the session runs, then leaves the entries
stale, as for a module; an edit made just before the session, which the modification times of
git's racy rule could not tell from one made during it, does not.
"""
from __future__ import annotations

import os
from typing import Any, MutableMapping

from jaxlint import read_digests


def note_conftest(read: MutableMapping[str, str], plugin: Any) -> None:
    """A plugin pytest registered: when it is a ``conftest.py`` module, its bytes now."""
    file = getattr(plugin, "__file__", None)
    if isinstance(file, str) and os.path.basename(file) == "conftest.py":
        note_file(read, file)


def note_file(read: MutableMapping[str, str], path: str) -> None:
    try:
        with open(path, "rb") as handle:
            data = handle.read()
    except OSError:
        read[os.path.abspath(path)] = read_digests.UNKNOWN
        return
    read_digests.note(read, path, data)
