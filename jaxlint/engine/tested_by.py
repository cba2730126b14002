"""The test files and ``conftest.py`` files a test run's store entry depends on (engine/store.py).

What the tests call, and with which arrays, is written in the tests and their fixtures: an edit of
a test module or of a ``conftest.py`` above it can change the calls a module's functions were
traced with, so the entry of every module whose functions those tests reached is stale after it,
as after an edit of the module. The tests are those the entry names per function (the first
three that reached it, those whose calls gave it a signature first: ``watched_calls``); the
``conftest.py`` files are those pytest loads for them, from the test's folder up to the project's
root. Their digests are taken as a module's are (``read_digests``): a file changed since the
session started is unknown, and the entry stale at once.
"""
from __future__ import annotations

import os
from typing import Iterable, Iterator

from jaxlint.text import ancestors


def files_of_tests(root: str, node_ids: Iterable[str]) -> set[str]:
    """The absolute paths of the test files the node ids (relative to ``root``, as the store keeps
    them) name, and of the ``conftest.py`` files above each, up to ``root``."""
    files: set[str] = set()
    for node_id in node_ids:
        file = node_id.partition("::")[0]
        path = os.path.normpath(os.path.join(root, file)) if file else ""
        if path and path not in files and os.path.isfile(path):
            files.add(path)
            files.update(_conftests(os.path.dirname(path), os.path.abspath(root)))
    return files


def _conftests(folder: str, root: str) -> Iterator[str]:
    """Each ``conftest.py`` from ``folder`` up to ``root`` (or, for a test outside it, up to the
    folder they share)."""
    try:
        stop = os.path.commonpath([folder, root])
    except ValueError:  # another drive
        stop = folder
    for each in ancestors(folder):
        candidate = os.path.join(each, "conftest.py")
        if os.path.isfile(candidate):
            yield candidate
        if each == stop:
            return
