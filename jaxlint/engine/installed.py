"""What a check's results depend on outside the project, read without importing JAX or the
pipeline (the result cache, the test run's store and a replayed check share it): jaxlint itself
(its version and its files' sizes and times), Python, the installed distributions (the names of
the ``*.dist-info`` folders in site-packages: JAX's and jaxlib's versions among them) and the
environment variables JAX reads (``JAX_*``, ``XLA_FLAGS``)."""
from __future__ import annotations

import hashlib
import os
import sys

from jaxlint.about import __version__

_digest: str | None = None


def environment() -> str:
    """The sha256 of all of the above, once per process."""
    global _digest
    if _digest is None:
        parts = [__version__, sys.version, os.path.realpath(sys.executable), sys.prefix, package_stamp()]
        for folder in site_folders():
            try:
                names = sorted(os.listdir(folder))
            except OSError:
                continue
            parts += [n for n in names if n.endswith((".dist-info", ".egg-info", ".egg-link", ".pth"))]
        parts += sorted(f"{k}={v}" for k, v in os.environ.items() if k.startswith("JAX_") or k == "XLA_FLAGS")
        _digest = hashlib.sha256("\n".join(parts).encode()).hexdigest()
    return _digest


def site_folders() -> list[str]:
    """Where installed distributions live (not the current folder or the project's)."""
    import site

    folders = list(getattr(site, "getsitepackages", lambda: [])())
    user = getattr(site, "getusersitepackages", lambda: None)()
    return folders + ([user] if isinstance(user, str) else [])


def package_stamp() -> str:
    """jaxlint's own files, by size and modification time: an edited checkout is another jaxlint."""
    here = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
    stamp: list[str] = []
    _stamp_folder(here, "", stamp)
    return hashlib.sha256("\n".join(stamp).encode()).hexdigest()


def _stamp_folder(folder: str, relative: str, stamp: list[str]) -> None:
    """``relative/name:size:mtime_ns`` of each .py and .md file under ``folder``, sorted by name
    in each folder, a folder's files before its subfolders (as os.walk gave them before)."""
    with os.scandir(folder) as entries:
        listed = sorted(entries, key=lambda entry: entry.name)
    for entry in listed:
        if entry.name.endswith((".py", ".md")) and not entry.is_dir():
            info = entry.stat()
            stamp.append(f"{relative}{entry.name}:{info.st_size}:{info.st_mtime_ns}")
    for entry in listed:
        if entry.is_dir() and not entry.is_symlink() and entry.name != "__pycache__":  # os.walk's way
            _stamp_folder(entry.path, f"{relative}{entry.name}{os.sep}", stamp)
