"""Importing a user module in the worker: from source (optionally replaced, to verify a fix),
never writing bytecode; and telling the project's modules from installed ones."""
from __future__ import annotations

import importlib
import importlib.machinery
import importlib.util
import os
import sys
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


def import_module(name: str, path: str, root: str, override: str | None) -> Any:
    if root not in sys.path:
        sys.path.insert(0, root)
    parent = name.rpartition(".")[0]
    if parent:
        importlib.import_module(parent)
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
