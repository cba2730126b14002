"""Importing a user module in the worker: from source (optionally replaced, to verify a fix),
never writing bytecode; and telling the project's modules from installed ones."""
from __future__ import annotations

import contextlib
import hashlib
import importlib
import importlib.abc
import importlib.machinery
import importlib.util
import os
import sys
import types
from typing import Any, Iterator, TextIO

from jaxlint import read_digests


class _SourceLoader(importlib.machinery.SourceFileLoader):
    """Compiles from source (optionally replaced, for verifying a fix); never reads or writes .pyc."""

    def __init__(self, fullname: str, path: str, override: str | None) -> None:
        super().__init__(fullname, path)
        self.override = override

    def get_code(self, fullname: str) -> Any:
        source = self.override
        if source is None:
            source = importlib.util.decode_source(self.get_data(self.path))
        return compile(source, self.path, "exec", dont_inherit=True)


class _ProjectLoader(importlib.machinery.SourceFileLoader):
    """A project module's loader while a job runs: keeps the sha256 of its source in ``read`` (what
    the job's result depends on, whatever the file holds when the job ends), and takes Python's
    .pyc only when its times can vouch for it: Python trusts a .pyc whose source has the same size
    and modification time in whole seconds, so an edit that keeps the size in the same second as
    the source's previous write runs the old code. A .pyc written ``RACY_SECONDS`` or more after
    that write cannot be fooled so (git's rule for racy entries); any other is not read."""

    read: dict[str, str]

    def get_code(self, fullname: str) -> Any:
        data = self.get_data(self.path)
        self.read[self.path] = hashlib.sha256(data).hexdigest()
        if _pyc_settled(self.path):
            return super().get_code(fullname)
        return compile(importlib.util.decode_source(data), self.path, "exec", dont_inherit=True)


def _pyc_settled(path: str) -> bool:
    """Whether the .pyc of ``path`` was written ``RACY_SECONDS`` or more after the source last changed."""
    try:
        source, compiled = os.stat(path), os.stat(importlib.util.cache_from_source(path))
    except (OSError, NotImplementedError, ValueError):
        return False
    return compiled.st_mtime - max(source.st_mtime, source.st_ctime) >= read_digests.RACY_SECONDS


class _FromSource(importlib.abc.MetaPathFinder):
    """Ahead of the other finders while a job runs: a project module the standard finder finds is
    loaded by ``_ProjectLoader``."""

    def __init__(self, root: str) -> None:
        self.root = root
        self.read: dict[str, str] = {}

    def find_spec(self, fullname: str, path: Any, target: Any = None) -> Any:
        spec = spec_after(self, fullname, path, target)
        if spec is not None and type(spec.loader) is importlib.machinery.SourceFileLoader and spec.origin \
                and is_project_file(spec.origin, self.root):
            spec.loader = _ProjectLoader(fullname, spec.origin)
            spec.loader.read = self.read
        return spec


def spec_after(finder: Any, fullname: str, path: Any, target: Any = None) -> Any:
    """The spec the first of the finders after ``finder`` on ``sys.meta_path`` finds for
    ``fullname``; None when none does, or when a legacy finder (no ``find_spec``) comes first: the
    import system then asks every finder as usual. A finder that goes ahead of the others to change
    the loaders of some specs (this module's, and the watched imports of ``pytest --jaxlint``)
    returns the spec whoever found it, so that no finder is asked twice."""
    for other in sys.meta_path[sys.meta_path.index(finder) + 1:] if finder in sys.meta_path else []:
        find_spec = getattr(other, "find_spec", None)
        if find_spec is None:
            return None
        spec = find_spec(fullname, path, target)
        if spec is not None:
            return spec
    return None


@contextlib.contextmanager
def reading_from_source(root: str) -> Iterator[dict[str, str]]:
    """Inside the block the project's modules under ``root`` are compiled from source (_FromSource);
    yields the digests of the bytes compiled, by path."""
    finder = _FromSource(root)
    sys.meta_path.insert(0, finder)
    try:
        yield finder.read
    finally:
        if finder in sys.meta_path:
            sys.meta_path.remove(finder)


def import_module(name: str, path: str, root: str, override: str | None,
                  sys_path: list[str] | None = None, sys_path_appended: list[str] | None = None,
                  packages_from_files: bool = False) -> Any:
    """Import ``path`` as ``name``. ``sys_path``/``sys_path_appended``: the folders a test file or
    conftest gets on sys.path, as pytest gives them (engine/imports.py; none at all in importlib
    mode without ``pythonpath``); when ``sys_path`` is None, ``root`` goes in front. ``packages_from_files``: the parent packages are imported from their
    ``__init__.py`` (or made up, for folders without one) instead of through sys.path, as
    pytest's importlib mode does."""
    if sys_path is not None:
        sys.path[:0] = sys_path
        sys.path.extend(folder for folder in sys_path_appended or [] if folder not in sys.path)
    elif root not in sys.path:
        sys.path.insert(0, root)
    parent = name.rpartition(".")[0]
    # A parent package that imports the module itself (``from .dirichlet import ...`` in its
    # ``__init__.py``) gets it from this very file, with the override: run once, then reused.
    # Running the file a second time would repeat what it does at import (a registration that
    # refuses a duplicate: distrax's KL registry).
    finder = _ThisFile(name, path, override)
    sys.meta_path.insert(0, finder)
    try:
        if parent and packages_from_files:
            _parents_from_files(parent, os.path.dirname(path))
        elif parent:
            importlib.import_module(parent)
    finally:
        sys.meta_path.remove(finder)
    module = sys.modules.get(name)
    if module is not None and getattr(getattr(module, "__spec__", None), "loader", None) is finder.loader:
        return module
    return _load(name, path, override)


class _ThisFile(importlib.abc.MetaPathFinder):
    """Finds module ``name`` at ``path`` (loaded with ``override``) when it is looked for in the
    folder that holds it; elsewhere (an installed copy of the package) it leaves it to the others."""

    def __init__(self, name: str, path: str, override: str | None) -> None:
        self.name, self.path = name, path
        self.loader = _SourceLoader(name, path, override)
        package_folder = os.path.dirname(path)
        self.folder = os.path.dirname(package_folder) if _is_package(path) else package_folder

    def find_spec(self, fullname: str, path: Any = None, target: Any = None) -> Any:
        if fullname != self.name or path is None:
            return None
        try:
            folders = {os.path.realpath(folder) for folder in path}
        except TypeError:  # a __path__ of the user's that is no list of folders
            return None
        if os.path.realpath(self.folder) not in folders:
            return None
        return _spec(self.name, self.path, self.loader)


class Printed:
    """The last characters a module wrote to ``sys.stdout`` and ``sys.stderr`` (interleaved):
    why a module exits at import is often only printed (argparse's usage error)."""

    KEPT = 2000

    def __init__(self) -> None:
        self.text = ""

    def keep(self, text: str) -> None:
        self.text = (self.text + text)[-self.KEPT:]

    def last_line(self, width: int = 200) -> str:
        """The last non-blank line printed, shortened to ``width`` characters ("" if none)."""
        lines = [line.strip() for line in self.text.splitlines() if line.strip()]
        if not lines:
            return ""
        return lines[-1] if len(lines[-1]) <= width else lines[-1][:width - 3] + "..."


class _Tee:
    """A text stream that writes through to ``stream`` and keeps a copy in ``printed``; every
    other attribute (fileno, isatty, encoding) is the stream's."""

    def __init__(self, stream: TextIO, printed: Printed) -> None:
        self._stream = stream
        self._printed = printed

    def write(self, text: str) -> int:
        written = self._stream.write(text)
        if isinstance(text, str):
            self._printed.keep(text)
        return written

    def __getattr__(self, name: str) -> Any:
        return getattr(self._stream, name)


@contextlib.contextmanager
def keeping_printed() -> Iterator[Printed]:
    """Inside the block, what is written to ``sys.stdout`` and ``sys.stderr`` still goes there
    and is kept as well. A stream the module replaced meanwhile stays as it left it (the worker
    puts its own back after the job)."""
    printed = Printed()
    tees = {name: _Tee(getattr(sys, name), printed) for name in ("stdout", "stderr")
            if getattr(sys, name) is not None}
    originals = {name: getattr(sys, name) for name in tees}
    for name, tee in tees.items():
        setattr(sys, name, tee)
    try:
        yield printed
    finally:
        for name, tee in tees.items():
            if getattr(sys, name) is tee:
                setattr(sys, name, originals[name])


@contextlib.contextmanager
def program_argv(path: str) -> Iterator[None]:
    """``sys.argv`` as ``python path`` gives the module's own program (``[path]``), not the
    worker's (its file descriptors): a module that parses its arguments at import, or reads
    ``len(sys.argv)``, must see none. The caller's list is put back afterwards."""
    saved = sys.argv
    sys.argv = [path]
    try:
        yield
    finally:
        sys.argv = saved


def _is_package(path: str) -> bool:
    return os.path.basename(path) == "__init__.py"


def _spec(name: str, path: str, loader: _SourceLoader) -> Any:
    return importlib.util.spec_from_file_location(
        name, path, loader=loader, submodule_search_locations=[os.path.dirname(path)] if _is_package(path) else None)


def _load(name: str, path: str, override: str | None) -> Any:
    spec = _spec(name, path, _SourceLoader(name, path, override))
    module = importlib.util.module_from_spec(spec)
    sys.modules[name] = module
    try:
        spec.loader.exec_module(module)
    except BaseException:
        sys.modules.pop(name, None)
        raise
    return module


def _parents_from_files(name: str, folder: str) -> None:
    """Package ``name`` lives in ``folder``: import it and its parents from their files, outermost
    first; a folder without ``__init__.py`` becomes an empty package, as pytest makes it."""
    if name in sys.modules:
        return
    parent = name.rpartition(".")[0]
    if parent:
        _parents_from_files(parent, os.path.dirname(folder))
    init = os.path.join(folder, "__init__.py")
    if os.path.isfile(init):
        _load(name, init, None)
    else:
        package = types.ModuleType(name)
        package.__path__ = [folder]
        package.__file__ = None
        sys.modules[name] = package
    if parent:
        setattr(sys.modules[parent], name.rpartition(".")[2], sys.modules[name])


def is_project_module(module: Any, root: str) -> bool:
    """Loaded from the project's folder (and not from a virtual environment inside it)."""
    try:
        file = getattr(module, "__file__", None)
        files = [file] if file else list(getattr(module, "__path__", []))
    except Exception:  # a module object of the user's with surprising attributes
        return False
    return any(isinstance(f, str) and is_project_file(f, root) for f in files)


def is_project_file(path: str, root: str) -> bool:
    """Under the project's folder, and not jaxlint's own or an installed package's file."""
    installed = tuple(os.path.join(p, "") for p in (sys.prefix, sys.base_prefix, sys.exec_prefix))
    here = os.path.join(os.path.dirname(os.path.dirname(os.path.abspath(__file__))), "")  # jaxlint/
    return (path.startswith(os.path.join(root, "")) and not path.startswith((here, *installed))
            and "site-packages" not in path and "dist-packages" not in path)
