"""The editor server's trust gate. An editor starts the server for every Python file opened, in a
repository just cloned to read too; jaxlint imports a module to trace it, which runs its code.
So the server imports, traces and runs tests only in a folder the user trusts: one in the user's
list (``jaxlint trust``, config/trust.py), read at each check, or a workspace folder of an editor
that said it trusts its workspace (the initialization option ``trusted``; never the workspace
configuration, which a project's own editor settings can set). Elsewhere it shows what needs no
code run, and one information diagnostic saying why there is not more (``notice``)."""
from __future__ import annotations

import os
import shlex
from dataclasses import dataclass, field

from lsprotocol import types

from jaxlint.config import Config
from jaxlint.config.trust import TrustFileError, containing, read_trusted, trust_file
from jaxlint.model import Span
from jaxlint.scan.discover import find_root
from jaxlint.server.convert import to_range
from jaxlint.text import split_lines


@dataclass
class Gate:
    """``editor_folders``: the real paths of the workspace folders the editor trusts."""

    editor_folders: list[str] = field(default_factory=list)
    error: str | None = None  # why the user's list could not be read, at the last check

    def folders(self) -> list[str]:
        """The trusted folders now; an unreadable list trusts nothing (``error`` says why)."""
        try:
            listed, self.error = read_trusted(), None
        except TrustFileError as error:
            listed, self.error = [], f"jaxlint: the trust list is ignored until it is fixed: {error}"
        return listed + self.editor_folders

    def runs(self, path: str) -> bool:
        """The server may import ``path``: the file and the folder it is imported from (the
        ``__init__.py`` files from there down run too) are trusted."""
        folders = self.folders()
        return containing(path, folders) is not None and containing(find_root(path), folders) is not None

    def trusts_folder(self, folder: str) -> bool:
        return containing(folder, self.folders()) is not None

    def configuration_runs(self, config: Config) -> bool:
        """The keys that run code beyond importing the checked module (``rerun-tests``,
        ``examples``) apply: the configuration file is in a trusted folder (no file: none set)."""
        return config.path is None or containing(config.path, self.folders()) is not None


def without_code_running_keys(config: Config) -> None:
    """The configuration as a folder the user does not trust gets it: no test run, no examples file."""
    config.rerun_tests = False
    config.examples = []


def folder_to_trust(path: str, config: Config) -> str:
    """The project's folder: the folder ``path`` is imported from, or its configuration file's
    when that one is above it (both hold the file)."""
    root = find_root(path)
    return os.path.commonpath([root, os.path.dirname(config.path)]) if config.path else root


def notice(path: str, config: Config, text: str, codec: object) -> types.Diagnostic:
    """The information diagnostic on line 1 of a JAX file the server did not run."""
    folder = folder_to_trust(path, config)
    lines = split_lines(text)
    message = (f"jaxlint runs a project's code to trace it (it imports the module), and {folder} is not a folder "
               "you trust, so nothing was run: shown are syntax errors and what a trusted run already stored for "
               f"unchanged files. To trust the folder: jaxlint trust {shlex.quote(folder)} "
               f"(the list: {trust_file()}), or the editor's initialization option `trusted`.")
    return types.Diagnostic(range=to_range(Span(1, 0, 1, len(lines[0])), lines, codec), message=message,
                            source="jaxlint", severity=types.DiagnosticSeverity.Information)
