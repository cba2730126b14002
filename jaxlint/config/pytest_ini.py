"""The project's pytest configuration, found and read the way pytest finds it
(``_pytest/config/findpaths.py``), for importing test files and conftests as pytest does: the
rootdir, ``pythonpath``, ``python_files`` and the import mode (``--import-mode`` in ``addopts``).

Found from a file's folder upwards, as ``pytest FILE`` would: the first folder holding
``pytest.toml``/``.pytest.toml``, ``pytest.ini``/``.pytest.ini`` (always the configuration), a
``pyproject.toml`` with ``[tool.pytest]`` or ``[tool.pytest.ini_options]``, a ``tox.ini`` with
``[pytest]`` or a ``setup.cfg`` with ``[tool:pytest]``; without one, the first ``pyproject.toml``
or, failing that, ``setup.py`` names the rootdir. A file pytest could not parse counts as no
configuration: jaxlint never fails on it. Pure Python, no pytest needed.
"""
from __future__ import annotations

import functools
import os
import sys
from dataclasses import dataclass
from typing import Any

if sys.version_info >= (3, 11):
    import tomllib
else:
    import tomli as tomllib  # type: ignore[no-redef]

from jaxlint import read_digests

IMPORT_MODES = ("prepend", "append", "importlib")
DEFAULT_PYTHON_FILES = ("test_*.py", "*_test.py")


@dataclass(frozen=True)
class PytestConfig:
    rootdir: str  # absolute
    inifile: str | None = None  # the file the settings came from
    pythonpath: tuple[str, ...] = ()  # absolute folders, in the configured order
    python_files: tuple[str, ...] = DEFAULT_PYTHON_FILES
    import_mode: str = "prepend"


def find_pytest_config(folder: str) -> PytestConfig:
    """The pytest configuration that applies to a file in ``folder``. Remembered per folder while
    the folders searched and the files read keep their modification times: a check asks once per
    file, and the editor server lives long."""
    folder = os.path.abspath(folder)
    remembered = _FOUND.get(folder)
    if remembered is not None and None not in remembered[1] and remembered[1] == _stamps(remembered[0]):
        return remembered[2]
    consulted: list[str] = []
    found = _search(folder, consulted)
    if len(_FOUND) >= MAX_REMEMBERED:
        _FOUND.clear()
    _FOUND[folder] = (consulted, _stamps(consulted), found)
    return found


MAX_REMEMBERED = 4096
_FOUND: dict[str, tuple[list[str], list[Any], PytestConfig]] = {}  # folder -> (consulted, stamps, found)


def _stamps(paths: list[str]) -> list[Any]:
    """Each path's stamp (read_digests.settled_stamp): None for one changed too recently for its
    times to tell an edit from none, which a remembered search never matches."""
    return [read_digests.settled_stamp(path) for path in paths]


def _search(folder: str, consulted: list[str]) -> PytestConfig:
    """pytest's ``locate_config`` from ``folder``; ``consulted`` gets each folder searched (a file
    created or removed there changes its time) and each file read."""
    first_pyproject = None
    for base in _upwards(folder):
        consulted.append(base)
        for name, loader in _LOADERS:
            path = os.path.join(base, name)
            if not os.path.isfile(path):
                continue
            consulted.append(path)
            if name == "pyproject.toml" and first_pyproject is None:
                first_pyproject = path
            values = loader(path)
            if values is not None:
                return _config(base, path, values)
    if first_pyproject is not None:
        return PytestConfig(rootdir=os.path.dirname(first_pyproject), inifile=first_pyproject)
    for base in _upwards(folder):
        if os.path.isfile(os.path.join(base, "setup.py")):
            return PytestConfig(rootdir=base)
    return PytestConfig(rootdir=folder)


def _upwards(folder: str) -> list[str]:
    found = [folder]
    while os.path.dirname(found[-1]) != found[-1]:
        found.append(os.path.dirname(found[-1]))
    return found


def _config(rootdir: str, inifile: str, values: dict[str, Any]) -> PytestConfig:
    pythonpath = tuple(os.path.normpath(os.path.join(rootdir, entry)) for entry in _lines(values.get("pythonpath")))
    python_files = tuple(_lines(values.get("python_files"))) or DEFAULT_PYTHON_FILES
    mode = "prepend"
    import shlex  # configparser and shlex: only for a project that has a pytest configuration

    addopts = _lines(values.get("addopts"), split=shlex.split)
    for n, option in enumerate(addopts):  # the last one given wins, as in argparse
        if option.startswith("--import-mode="):
            mode = option.partition("=")[2]
        elif option == "--import-mode" and n + 1 < len(addopts):
            mode = addopts[n + 1]
    if mode not in IMPORT_MODES:  # pytest would refuse to run; jaxlint imports as by default
        mode = "prepend"
    return PytestConfig(rootdir=rootdir, inifile=inifile, pythonpath=pythonpath, python_files=python_files,
                        import_mode=mode)


def _lines(value: Any, split: Any = str.split) -> list[str]:
    """An ini value (whitespace-separated text) or a TOML list, as a list of strings."""
    if value is None:
        return []
    if isinstance(value, list):
        return [str(item) for item in value]
    try:
        return split(str(value))
    except ValueError:  # shlex: an unclosed quote
        return str(value).split()


# Readers: the settings of a file, or None when it holds no pytest configuration.

def _ini(path: str, section: str) -> dict[str, Any] | None:
    sections = _parsed_ini(_read(path))
    return sections.get(section)


def _read(path: str) -> bytes | None:
    """The file's bytes (None: unreadable). The parses are remembered by the bytes, not by the
    file's times: the editor server lives long, and an edit in the same tick of the clock that
    keeps the size leaves the times and size as they were."""
    try:
        with open(path, "rb") as handle:
            return handle.read()
    except OSError:
        return None


@functools.lru_cache(maxsize=256)
def _parsed_ini(data: bytes | None) -> dict[str, dict[str, Any]]:
    import configparser

    parser = configparser.RawConfigParser(strict=False, interpolation=None)
    try:
        parser.read_string((data or b"").decode("utf-8"))
    except (configparser.Error, UnicodeDecodeError):
        return {}
    return {name: dict(parser[name]) for name in parser.sections()}


def _toml(path: str) -> dict[str, Any]:
    return _parsed_toml(_read(path))


@functools.lru_cache(maxsize=256)
def _parsed_toml(data: bytes | None) -> dict[str, Any]:
    try:
        return tomllib.loads((data or b"").decode("utf-8"))
    except (tomllib.TOMLDecodeError, UnicodeDecodeError):
        return {}


def _pytest_ini(path: str) -> dict[str, Any]:
    return _ini(path, "pytest") or {}  # the configuration even without a [pytest] section


def _pytest_toml(path: str) -> dict[str, Any]:
    table = _toml(path).get("pytest")
    return table if isinstance(table, dict) else {}


def _pyproject(path: str) -> dict[str, Any] | None:
    tool = _toml(path).get("tool")
    table = tool.get("pytest") if isinstance(tool, dict) else None
    if not isinstance(table, dict):
        return None
    native = {key: value for key, value in table.items() if key != "ini_options"}
    ini = table.get("ini_options")
    return native or (ini if isinstance(ini, dict) else None)


_LOADERS = (
    ("pytest.toml", _pytest_toml),
    (".pytest.toml", _pytest_toml),
    ("pytest.ini", _pytest_ini),
    (".pytest.ini", _pytest_ini),
    ("pyproject.toml", _pyproject),
    ("tox.ini", lambda path: _ini(path, "pytest")),
    ("setup.cfg", lambda path: _ini(path, "tool:pytest")),
)
