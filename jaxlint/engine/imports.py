"""How the worker imports a file: its module name and the folders it puts on sys.path.

A test file (a name matching pytest's ``python_files``) or a ``conftest.py`` is imported as pytest
imports it (``_pytest/pathlib.py`` ``import_path``), with the project's pytest configuration
(config/pytest_ini.py): the ``pythonpath`` folders go first on sys.path, then, for each
``conftest.py`` from the rootdir (or the configuration file's folder) down to the file's folder and
for the file itself, the first folder upwards without an ``__init__.py`` is put in front
(``prepend``, the default) or at the end (``append``) of sys.path, and the module is named by its
dotted path from there; with ``importlib`` sys.path is left alone and the file is imported by its
path, under its package name when it is in a package, else under its dotted path from the rootdir.
Every other file is imported as before: its first folder upwards without an ``__init__.py`` is put
on sys.path.
"""
from __future__ import annotations

import fnmatch
import os
from dataclasses import dataclass, field

from jaxlint.config.pytest_ini import PytestConfig, find_pytest_config
from jaxlint.scan import discover


@dataclass
class ImportPlan:
    module: str  # its name in sys.modules
    root: str  # the project folder: modules loaded from under it are forgotten after the analysis
    sys_path: list[str] | None = None  # put in front of sys.path, in this order; None: ``root``
    sys_path_appended: list[str] = field(default_factory=list)  # added at the end, in this order
    packages_from_files: bool = False  # importlib: parent packages imported from their files


def import_plan(path: str) -> ImportPlan:
    """The plan for ``path`` (absolute); raises ValueError for a file outside its import root."""
    pytest_config = find_pytest_config(os.path.dirname(path))
    if not is_pytest_file(path, pytest_config):
        root = discover.find_root(path)
        return ImportPlan(discover.module_name(path, root), root)
    return _pytest_plan(path, pytest_config)


def is_pytest_file(path: str, pytest_config: PytestConfig) -> bool:
    """A file pytest imports itself: a conftest.py or a test module (``python_files``)."""
    name = os.path.basename(path)
    return name == "conftest.py" or any(fnmatch.fnmatch(name, pattern) for pattern in pytest_config.python_files)


def _pytest_plan(path: str, pytest_config: PytestConfig) -> ImportPlan:
    rootdir = pytest_config.rootdir
    mode = pytest_config.import_mode
    # pytest puts `pythonpath` on sys.path when it starts, then imports the conftests outermost
    # first, then the module: each prepend lands in front of the ones before.
    front = list(pytest_config.pythonpath)
    appended: list[str] = []
    if mode != "importlib":
        for file in [*_conftests(path, pytest_config), path]:
            folder = discover.find_root(file)
            if mode == "prepend" and (not front or front[0] != folder):
                front.insert(0, folder)
            elif mode == "append" and folder not in front and folder not in appended:
                appended.append(folder)
    package_root = discover.find_root(path)
    # The project is the wider of the two: a test file inside a package with no pytest
    # configuration has its own folder as rootdir, yet imports the package around it, whose
    # modules are the project's (forgotten after the job, and inputs of its cached result).
    project = rootdir if _inside(path, rootdir) and not _inside(rootdir, package_root) else package_root
    if mode != "importlib" or package_root != os.path.dirname(path):
        # in a package (importlib), or prepend/append: the dotted path from the package's root
        return ImportPlan(discover.module_name(path, package_root), project, front, appended,
                          packages_from_files=mode == "importlib")
    return ImportPlan(_name_from_rootdir(path, rootdir), project, front, appended, packages_from_files=True)


def _conftests(path: str, pytest_config: PytestConfig) -> list[str]:
    """The conftest.py files pytest imports before ``path``: from the configuration file's folder
    (else the rootdir), pytest's default ``confcutdir``, down to the file's folder."""
    cut = os.path.dirname(pytest_config.inifile) if pytest_config.inifile else pytest_config.rootdir
    found = []
    folder = os.path.dirname(path)
    while _inside(folder, cut):
        conftest = os.path.join(folder, "conftest.py")
        if conftest != path and os.path.isfile(conftest):
            found.append(conftest)
        if folder == cut or os.path.dirname(folder) == folder:
            break
        folder = os.path.dirname(folder)
    return found[::-1]


def _inside(path: str, folder: str) -> bool:
    return path == folder or path.startswith(os.path.join(folder, ""))


def _name_from_rootdir(path: str, rootdir: str) -> str:
    """pytest's ``module_name_from_path``: ``tests/unit/test_x.py`` -> ``tests.unit.test_x``, a
    dot in a folder's name made ``_``; from the filesystem's root for a file outside the rootdir."""
    stem = os.path.splitext(path)[0]
    relative = os.path.relpath(stem, rootdir) if _inside(path, rootdir) else stem.lstrip(os.sep)
    parts = relative.split(os.sep)
    if len(parts) >= 2 and parts[-1] == "__init__":
        parts.pop()
    return ".".join(part.replace(".", "_") for part in parts)
