"""The user's trusted folders: where the editor server may run a project's code (import its
modules to trace them, run its tests). One list per user, outside every project, so that no
repository can add itself: ``$XDG_CONFIG_HOME/jaxlint/trusted.toml`` (``~/.config/jaxlint/``
without XDG_CONFIG_HOME), written by ``jaxlint trust`` (cli/trust.py), read by the server at each
check (server/gate.py). A folder is kept as its real path (symlinks resolved), and a file is in
it when its own real path is: a symlink in a trusted folder to a file elsewhere is not."""
from __future__ import annotations

import json
import os

from jaxlint.config.keys import ConfigError, read_toml
from jaxlint.text import write_text_atomic

KEY = "trusted"
HEADER = ("# Folders whose code jaxlint's editor server may run: it imports their modules to trace them.\n"
          "# Written by `jaxlint trust`; `jaxlint trust --revoke PATH` removes one.\n")


class TrustFileError(Exception):
    """The trust list cannot be read or written: it is left as it is."""


def trust_file() -> str:
    """Where the list lives: XDG_CONFIG_HOME when it is an absolute path (the XDG rule), else
    ~/.config."""
    base = os.environ.get("XDG_CONFIG_HOME", "")
    if not os.path.isabs(base):
        base = os.path.join(os.path.expanduser("~"), ".config")
    return os.path.join(base, "jaxlint", "trusted.toml")


def read_trusted(path: str | None = None) -> list[str]:
    """The trusted folders (none when the file does not exist); raises TrustFileError for a file
    that is not a list of absolute paths."""
    path = path or trust_file()
    if not os.path.exists(path):
        return []
    try:
        table = read_toml(path)
    except ConfigError as error:
        raise TrustFileError(str(error)) from None
    folders = table.get(KEY, [])
    if not isinstance(folders, list) or not all(isinstance(f, str) and os.path.isabs(f) for f in folders):
        raise TrustFileError(f"{path}: `{KEY}`: expected an array of absolute folder paths")
    return [os.path.normpath(folder) for folder in folders]  # as written by hand too: "/a/b/"


def write_trusted(folders: list[str], path: str | None = None) -> None:
    """Write the list (through a rename: a server reading it sees the old list or the new one)."""
    path = path or trust_file()
    # JSON's string escapes are TOML's basic string escapes; a name that is not valid UTF-8 has none.
    try:
        lines = "".join(f"  {json.dumps(folder, ensure_ascii=False)},\n" for folder in folders)
        text = HEADER + f"{KEY} = [\n{lines}]\n"
        text.encode("utf-8")
    except UnicodeEncodeError:
        raise TrustFileError("a folder whose name is not valid UTF-8 cannot be written in the trust list") from None
    try:
        os.makedirs(os.path.dirname(path), exist_ok=True)
        write_text_atomic(path, text)
    except OSError as error:
        raise TrustFileError(f"{path}: cannot write the file: {error.strerror or error}") from None


def containing(path: str, folders: list[str]) -> str | None:
    """The folder of ``folders`` that holds ``path`` (a file or folder, by its real path), if any."""
    real = os.path.realpath(path)
    for folder in folders:
        if real == folder or real.startswith(folder.rstrip(os.sep) + os.sep):
            return folder
    return None
