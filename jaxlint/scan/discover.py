"""Find the Python files to lint and work out how to import them."""
from __future__ import annotations

import errno
import os
from typing import TYPE_CHECKING

from jaxlint.text import ancestors

if TYPE_CHECKING:
    from jaxlint.config import Config



def discover(paths: list[str], config: Config | None = None, empty: list[str] | None = None,
             missing: list[str] | None = None) -> list[str]:
    """Expand files and folders into sorted, de-duplicated absolute paths of Python files: the
    ``.py`` files in folders, and every file named explicitly, whatever its suffix (a script
    with a shebang, as pre-commit's ``types: [python]`` passes them; ruff checks those too).
    A folder given that holds no Python file is appended to ``empty``.

    Folders found while walking are skipped when ``exclude``/``extend-exclude`` match them (or
    they hold a virtual environment) or, with ``respect-gitignore``, git ignores them. Paths
    named explicitly are kept wherever they live (the user asked for them), unless
    ``force-exclude`` is on and they or a folder above them, up to the project root, is
    excluded (pre-commit names every file). A path given that does not exist is appended to
    ``missing``; without that list, it raises FileNotFoundError.

    A file reached under several names (symlinks, hard links, a linked folder named beside its
    target) is listed once, under the name with the fewest symlinks in it, then the first
    sorted: fixing it twice would make jaxlint's first write look like a concurrent edit.
    A folder symlink is walked only when named here (links found while walking are not
    followed: no cycles, no trees outside the project); a broken symlink named here or found
    is listed, and reading it is a JX900 finding.
    """
    if config is None:
        from jaxlint.config import resolve

        config = resolve([], None)
    found: set[str] = set()
    for given in paths:
        path = os.path.abspath(given)
        if not os.path.exists(path) and not os.path.islink(path):
            if missing is None:
                raise FileNotFoundError(errno.ENOENT, os.strerror(errno.ENOENT), given)
            missing.append(given)
            continue
        if config.force_exclude and _excluded_explicitly(path, config):
            continue
        if os.path.isfile(path) or os.path.islink(path) and not os.path.exists(path):
            found.add(path)
        elif os.path.isdir(path):
            walked = _walk(path, config)
            found.update(walked)
            if not walked and empty is not None:
                empty.append(given)
    return _one_name_per_file(sorted(found))


def _one_name_per_file(paths: list[str]) -> list[str]:
    """``paths`` (sorted) without the second and later names of one file."""
    chosen: dict[object, str] = {}
    for path in paths:
        identity = _identity(path)
        kept = chosen.get(identity)
        if kept is None or _symlinks_in(path) < _symlinks_in(kept):
            chosen[identity] = path
    return sorted(chosen.values())


def _identity(path: str) -> object:
    """What names one file: its device and inode (hard links too); a broken link is its own."""
    try:
        info = os.stat(path)
    except OSError:  # a broken link: listed under its own name
        return ("path", path)
    return ("inode", info.st_dev, info.st_ino)


def _symlinks_in(path: str) -> int:
    """How many of the path's components are symlinks."""
    return sum(os.path.islink(folder) for folder in ancestors(path))


def _walk(top: str, config: Config) -> list[str]:
    ignored = git_ignored(top) if config.respect_gitignore else set()
    found = []
    for folder, dirnames, filenames in os.walk(top):
        dirnames[:] = sorted(d for d in dirnames if not config.excluded(os.path.join(folder, d))
                             and not (ignored and _relative(top, os.path.join(folder, d)) + "/" in ignored))
        found.extend(os.path.join(folder, f) for f in filenames
                     if f.endswith(".py") and not config.excluded(os.path.join(folder, f), folder=False)
                     and not (ignored and _relative(top, os.path.join(folder, f)) in ignored))
    return found


def _relative(top: str, path: str) -> str:
    return os.path.relpath(path, top).replace(os.sep, "/")


def _excluded_explicitly(path: str, config: Config) -> bool:
    """The path or a folder above it, below the project root, is excluded (ruff's
    ``is_file_excluded``, short of the root itself: a project may live in a folder named build)."""
    root = os.path.abspath(config.root)
    for folder in ancestors(path):
        if folder == root:
            return False
        if config.excluded(folder):
            return True
    return False


def git_ignored(top: str) -> set[str]:
    """Paths under ``top`` that git ignores, relative to it with ``/`` separators (folders end
    with ``/``); empty outside a git work tree or without git."""
    if not _in_git_work_tree(top):
        return set()
    import subprocess  # imported here: a run that asks git nothing never loads it

    try:
        listed = subprocess.run(
            ["git", "-C", top, "ls-files", "-z", "--others", "--ignored", "--exclude-standard", "--directory"],
            capture_output=True, timeout=60, check=False)
    except (OSError, subprocess.SubprocessError):
        return set()
    if listed.returncode != 0:
        return set()
    return {entry for entry in listed.stdout.decode("utf-8", "surrogateescape").split("\0")
            if entry and entry not in ("./", ".")}


def _in_git_work_tree(top: str) -> bool:
    """Whether git could find a work tree for ``top``: a ``.git`` in it or a folder above it, or
    git's environment naming one. Outside one, starting git (and importing subprocess) was a
    tenth of a warm check's time, for git's "not a git repository"."""
    if os.environ.get("GIT_DIR") or os.environ.get("GIT_WORK_TREE"):
        return True
    return any(os.path.lexists(os.path.join(folder, ".git")) for folder in ancestors(os.path.abspath(top)))


def find_root(path: str) -> str:
    """The folder to put on sys.path to import ``path``: the first ancestor that is not a package.

    Same rule as pytest's rootdir-based sys.path insertion (``prepend`` import mode): a folder
    whose name is not an identifier (an unpacked release, ``pkg-1.0/``) is not a package even
    with an ``__init__.py``, since no import statement could name it.
    """
    folder = os.path.dirname(os.path.abspath(path))
    while os.path.isfile(os.path.join(folder, "__init__.py")) and os.path.basename(folder).isidentifier():
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
