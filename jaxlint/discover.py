"""Find the Python files to lint and work out how to import them."""
from __future__ import annotations

import errno
import os
import re

# Folder names never worth walking into: VCS data, caches, build output, installed packages.
_SKIP_DIRS = frozenset({"__pycache__", "build", "dist", "site-packages", "node_modules"})
_JAX_WORD = re.compile(r"\bjax\b")


def _skip_dir(parent: str, name: str) -> bool:
    if name.startswith(".") or name in _SKIP_DIRS:
        return True
    # A virtual environment under any name (``env``, ``venv311``...) is third-party code.
    return os.path.isfile(os.path.join(parent, name, "pyvenv.cfg"))


def discover(paths: list[str]) -> list[str]:
    """Expand files and folders into sorted, de-duplicated absolute paths of ``.py`` files.

    Explicitly given files are kept wherever they live (the user asked for them); the skip
    rules only prune folders found while walking. Raises FileNotFoundError for a missing path.
    """
    found: set[str] = set()
    for given in paths:
        path = os.path.abspath(given)
        if os.path.isfile(path):
            if path.endswith(".py"):
                found.add(path)
        elif os.path.isdir(path):
            for folder, dirnames, filenames in os.walk(path):
                dirnames[:] = [d for d in dirnames if not _skip_dir(folder, d)]
                found.update(os.path.join(folder, f) for f in filenames if f.endswith(".py"))
        else:
            raise FileNotFoundError(errno.ENOENT, os.strerror(errno.ENOENT), given)
    return sorted(found)


def mentions_jax(source: str) -> bool:
    """Cheap pre-filter: a file that never says ``jax`` has nothing to trace and is never imported."""
    return _JAX_WORD.search(source) is not None


def find_root(path: str) -> str:
    """The folder to put on sys.path to import ``path``: the first ancestor that is not a package.

    Same rule as pytest's rootdir-based sys.path insertion (``prepend`` import mode).
    """
    folder = os.path.dirname(os.path.abspath(path))
    while os.path.isfile(os.path.join(folder, "__init__.py")):
        parent = os.path.dirname(folder)
        if parent == folder:  # a package at the filesystem root; nowhere further to go
            break
        folder = parent
    return folder


def module_name(path: str, root: str) -> str:
    """Dotted module name of ``path`` relative to ``root``: ``pkg/sub/mod.py`` -> ``pkg.sub.mod``."""
    rel = os.path.relpath(os.path.abspath(path), os.path.abspath(root))
    parts = os.path.splitext(rel)[0].split(os.sep)
    if parts[-1] == "__init__" and len(parts) > 1:
        parts.pop()
    if any(p in ("", os.curdir, os.pardir) for p in parts):
        raise ValueError(f"{path} is not inside {root}")
    return ".".join(parts)
