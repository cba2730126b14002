"""Importing a user module in the worker: from source (optionally replaced, to verify a fix),
never writing bytecode; and telling the project's modules from installed ones."""
from __future__ import annotations

import importlib
import importlib.machinery
import importlib.util
import os
import sys
import types
from typing import Any


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
    if parent and packages_from_files:
        _parents_from_files(parent, os.path.dirname(path))
    elif parent:
        importlib.import_module(parent)
    return _load(name, path, override)


def _load(name: str, path: str, override: str | None) -> Any:
    is_package = os.path.basename(path) == "__init__.py"
    loader = _SourceLoader(name, path, override)
    spec = importlib.util.spec_from_file_location(
        name, path, loader=loader,
        submodule_search_locations=[os.path.dirname(path)] if is_package else None)
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
