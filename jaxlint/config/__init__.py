"""Configuration, found and layered as ruff finds and layers its own.

Sources, lowest precedence first: the defaults; the configuration file (``--config FILE``, else
the nearest ``.jaxlint.toml``, ``jaxlint.toml`` or ``pyproject.toml`` with a ``[tool.jaxlint]``
table, looked up from the first checked path; none with ``--isolated``); ``--config 'KEY = VALUE'``
snippets; the command-line flags. Keys are read and checked by keys.py.
"""
from __future__ import annotations

import os
import re
from dataclasses import dataclass, field
from functools import cached_property
from typing import TYPE_CHECKING, Any

from jaxlint.config.globs import PathMatcher, PathPattern, PerFileIgnore
from jaxlint.config.keys import ConfigError, Layer, parse_table, read_toml
from jaxlint.config.selection import Selection, codes_matching, ignores_io_errors, option_values, resolve_rules
from jaxlint.model import Settings
from jaxlint.text import ancestors

if TYPE_CHECKING:
    from jaxlint.rules import RuleInfo

__all__ = ["Config", "ConfigError", "Layer", "find_config_file", "load_config", "read_config_file"]

# In one folder, the first of these that configures jaxlint wins (ruff: .ruff.toml, ruff.toml,
# pyproject.toml); a pyproject.toml counts only with a [tool.jaxlint] table.
DEFAULT_TIMEOUT = 60.0  # seconds per module for import and tracing (`timeout`, --timeout)
# seconds per stale module for the tests `rerun-tests` runs again (`rerun-timeout`, --rerun-timeout):
# a module's recorded tests took 2-4 minutes on a loaded 2-core machine (jax-md), so a test
# session gets a limit of its own, longer than a trace's.
DEFAULT_RERUN_TIMEOUT = 300.0
CONFIG_NAMES = (".jaxlint.toml", "jaxlint.toml", "pyproject.toml")
# ruff's default `exclude`, plus build output, bytecode caches and every hidden folder (jaxlint
# imports what it checks). Folders holding a pyvenv.cfg are skipped whatever `exclude` says.
DEFAULT_EXCLUDE = (
    ".*", ".bzr", ".direnv", ".eggs", ".git", ".git-rewrite", ".hg", ".ipynb_checkpoints", ".mypy_cache",
    ".nox", ".pants.d", ".pyenv", ".pytest_cache", ".pytype", ".ruff_cache", ".svn", ".tox", ".venv",
    ".vscode", "__pycache__", "__pypackages__", "_build", "buck-out", "build", "dist", "node_modules",
    "site-packages", "venv",
)


@dataclass
class Config:
    """The resolved settings of one run."""

    root: str  # the configuration file's folder, else the current directory
    path: str | None = None  # the configuration file read, if any
    examples: list[str] = field(default_factory=list)  # absolute paths of examples files
    signatures: str = ""  # where recorded signatures live: <root>/.jaxlint/signatures.json
    layers: list[Layer] = field(default_factory=list)  # what each source set, lowest first
    exclude: list[PathPattern] = field(default_factory=list)
    extend_exclude: list[PathPattern] = field(default_factory=list)
    per_file_ignores: list[PerFileIgnore] = field(default_factory=list)
    force_exclude: bool = False
    respect_gitignore: bool = True
    infer_arguments: bool = True  # see worker/argsources/inferred.py
    rerun_tests: bool = False  # check re-runs the tests that reached a module changed since the test run
    rerun_timeout: float = DEFAULT_RERUN_TIMEOUT
    timeout: float = DEFAULT_TIMEOUT
    jobs: int | None = None  # None: one worker per core, at most 4
    devices: int | None = None  # the worker's CPU devices; None: a module's literal mesh shapes (scan/meshes.py)
    target: str = "cpu"  # the chip every function is compiled for (jaxlint.chips)
    output_format: str | None = None  # None: not configured (the writer's default applies)
    cache_dir: str = ""  # the result cache's folder: <root>/.jaxlint_cache unless set
    rule_options: dict[str, dict[str, Any]] = field(default_factory=dict)  # code -> option -> value set

    def rules(self) -> list[RuleInfo]:
        """The rules chosen by every layer's select, extend-select and ignore (their metadata:
        ``jaxlint.rules.rule_classes`` gives the classes that run)."""
        return resolve_rules([Selection(layer.select, layer.extend_select or [], layer.ignore or [])
                              for layer in self.layers])

    def reports_io_errors(self, path: str | None = None) -> bool:
        """E902 for a path given that does not exist: on unless an ignore list names it, or (for
        ``path``, as given) a per-file-ignores entry that matches it."""
        if any(ignores_io_errors(layer.ignore or []) for layer in self.layers):
            return False
        return path is None or not ignores_io_errors([selector for entry in self.per_file_ignores
                                                      if entry.applies_to(os.path.abspath(path))
                                                      for selector in entry.selectors])

    def emptied_selection(self) -> str:
        """What made ``rules()`` empty, as the user wrote it: the last ``select`` that named no
        rule, else the ignores."""
        for layer in reversed(self.layers):
            if layer.select is not None and not layer.extend_select:
                if not layer.select:
                    return "--select ''" if layer.source == "command line" else f"select = [] in {layer.source}"
                if not codes_matching(layer.select):  # E902 alone: it reports missing paths, checks nothing
                    named = ",".join(layer.select)
                    where = f"--select {named}" if layer.source == "command line" else f"select in {layer.source}"
                    return f"{where} names no rule"
                break
        return "the ignore lists leave none of the selected rules"

    def options(self) -> dict[str, dict[str, Any]]:
        """code -> option -> value for every rule with options, defaults filled in."""
        return option_values(self.rule_options)

    def settings(self) -> Settings:
        """What the worker and the rules need of the configuration."""
        return Settings(root=self.root, examples=list(self.examples), signatures=self.signatures,
                        rule_options=self.options(), infer_arguments=self.infer_arguments,
                        devices=self.devices, target=self.target)

    def excluded(self, path: str, folder: bool | None = None) -> bool:
        """``path`` (absolute) matches exclude or extend-exclude, or is a virtual environment;
        ``folder``: whether it is a folder, when the caller knows (None: asked of the filesystem)."""
        if self._exclusion.matches(path):
            return True
        if folder is None:
            folder = os.path.isdir(path)
        return folder and os.path.isfile(os.path.join(path, "pyvenv.cfg"))

    @cached_property
    def _exclusion(self) -> PathMatcher:
        return PathMatcher(self.exclude + self.extend_exclude)

    def ignored_codes(self, path: str) -> set[str]:
        """The codes per-file-ignores turns off for ``path`` (absolute)."""
        return codes_matching([s for entry in self.per_file_ignores if entry.applies_to(path)
                               for s in entry.selectors])


def _configures_jaxlint(path: str) -> bool:
    if os.path.basename(path) != "pyproject.toml":
        return True
    try:
        table = read_toml(path)
    except ConfigError:
        # Not ours to judge, unless it evidently holds our table.
        with open(path, encoding="utf-8", errors="replace") as handle:
            if re.search(r"^\s*\[+\s*tool\s*\.\s*jaxlint\b", handle.read(), re.M):
                raise
        return False
    return isinstance(table.get("tool"), dict) and "jaxlint" in table["tool"]


def find_config_file(start: str) -> str | None:
    """The nearest configuration file from ``start`` (a file or folder) upwards."""
    start = os.path.abspath(start if os.path.isdir(start) else os.path.dirname(os.path.abspath(start)))
    for folder in ancestors(start):
        for name in CONFIG_NAMES:
            candidate = os.path.join(folder, name)
            if os.path.isfile(candidate) and _configures_jaxlint(candidate):
                return candidate
    return None


def read_config_file(path: str) -> Layer:
    """The keys a configuration file sets: ``[tool.jaxlint]`` of a pyproject.toml, the top level
    of any other file."""
    path = os.path.abspath(path)
    if not os.path.isfile(path):
        raise ConfigError(f"{path}: no such configuration file")
    table = read_toml(path)
    base = os.path.dirname(path)
    if os.path.basename(path) == "pyproject.toml":
        tool = table.get("tool", {})
        return parse_table(tool.get("jaxlint", {}) if isinstance(tool, dict) else {}, path, base,
                           "tool.jaxlint.")
    return parse_table(table, path, base, "")


def load_config(paths: list[str], config_file: str | None = None, isolated: bool = False,
                overrides: list[Layer] | None = None) -> Config:
    """The settings for a run over ``paths``; ``overrides``: ``--config`` snippets and flags."""
    if isolated:
        path = None
    elif config_file is not None:
        path = os.path.abspath(config_file)
    else:
        path = find_config_file(paths[0] if paths else ".")
    layers = ([read_config_file(path)] if path else []) + list(overrides or [])
    return resolve(layers, path)


def resolve(layers: list[Layer], path: str | None) -> Config:
    """Merge the layers: later ones override keys, extend-* keys accumulate."""
    root = os.path.dirname(path) if path else os.getcwd()
    config = Config(root=root, path=path, signatures=os.path.join(root, ".jaxlint", "signatures.json"),
                    layers=layers, exclude=[PathPattern(p, root) for p in DEFAULT_EXCLUDE],
                    cache_dir=os.path.join(root, ".jaxlint_cache"))
    for layer in layers:
        if layer.examples is not None:
            resolved = [os.path.normpath(os.path.join(layer.base, e)) for e in layer.examples]
            missing = [e for e in resolved if not os.path.isfile(e)]
            if missing:
                raise ConfigError(f"{layer.source}: examples file not found: {', '.join(missing)}")
            config.examples = resolved
        if layer.exclude is not None:
            config.exclude = layer.exclude
        config.extend_exclude += layer.extend_exclude or []
        if layer.per_file_ignores is not None:
            config.per_file_ignores = list(layer.per_file_ignores)
        config.per_file_ignores += layer.extend_per_file_ignores or []
        for key in ("force_exclude", "respect_gitignore", "infer_arguments", "rerun_tests", "rerun_timeout", "timeout", "jobs", "devices", "target", "output_format",
                    "cache_dir"):
            if getattr(layer, key) is not None:
                setattr(config, key, getattr(layer, key))
        for code, values in (layer.rules or {}).items():
            config.rule_options.setdefault(code, {}).update(values)
    _check_target(config.target)
    return config


def _check_target(name: str) -> None:
    """A TPU target needs the libtpu the installed JAX pins: without it, one line (exit 2) says
    what to install before any worker starts."""
    from jaxlint.chips import TargetError, check_installed, parse_target

    try:
        check_installed(parse_target(name))
    except TargetError as error:
        raise ConfigError(str(error)) from None
