"""``jaxlint trust [PATH]``, ``--revoke PATH``, ``--list``: the folders whose code the editor server
may run (config/trust.py keeps the list). The other commands run code whether or not a folder is
trusted: the user starts them on a project on purpose."""
from __future__ import annotations

import argparse
import os
import sys
from typing import TextIO

from jaxlint.config.trust import TrustFileError, containing, read_trusted, trust_file, write_trusted


def add_parser(commands: argparse._SubParsersAction) -> None:
    trust = commands.add_parser(
        "trust", help="let the editor server run a folder's code (import its modules, run its tests)",
        description="Let the editor server import, trace and test the modules of a folder and the folders "
                    f"under it. The list is the user's, outside every project: {trust_file()}.")
    trust.add_argument("path", nargs="?", default=None, help="the folder (default: the current folder)")
    what = trust.add_mutually_exclusive_group()
    what.add_argument("--revoke", action="store_true", help="remove the folder from the list")
    what.add_argument("--list", action="store_true", help="print the trusted folders, one a line")


def run(args: argparse.Namespace, out: TextIO | None = None, err: TextIO | None = None) -> int:
    """0: done; 2: a usage error, or a list that cannot be read or written (left as it was)."""
    out, err = out or sys.stdout, err or sys.stderr
    try:
        folders = read_trusted()
        if args.list:
            if args.path is not None:
                print("jaxlint: trust --list takes no PATH", file=err)
                return 2
            for folder in folders:
                out.write(folder + ("" if os.path.isdir(folder) else "  (no longer exists)") + "\n")
            if not folders:
                print(f"jaxlint: no trusted folder ({trust_file()})", file=err)
            return 0
        if args.revoke:
            return _revoke(args.path or ".", folders, out, err)
        return _trust(args.path or ".", folders, out, err)
    except TrustFileError as error:
        print(f"jaxlint: the trust list was left as it is: {error}", file=err)
        return 2


def _trust(path: str, folders: list[str], out: TextIO, err: TextIO) -> int:
    if not os.path.isdir(path):
        print(f"jaxlint: {path}: " + ("not a folder" if os.path.exists(path) else "no such folder"), file=err)
        return 2
    folder = os.path.realpath(path)
    covering = containing(folder, folders)
    if covering is not None:
        out.write(f"{folder} is trusted" + ("" if covering == folder else f" (it is in {covering})") + "\n")
        return 0
    write_trusted(folders + [folder])
    out.write(f"trusted {folder}: the editor server may import its modules and run its tests\n")
    return 0


def _revoke(path: str, folders: list[str], out: TextIO, err: TextIO) -> int:
    # A folder deleted since it was trusted is named by its absolute path, which its realpath was.
    folder = os.path.realpath(path) if os.path.exists(path) else os.path.abspath(path)
    if folder not in folders:
        covering = containing(folder, folders)
        why = f"it is trusted as part of {covering}; revoke that folder" if covering else "it is not trusted"
        print(f"jaxlint: {folder} is not in the trust list: {why}", file=err)
        return 2
    write_trusted([f for f in folders if f != folder])
    out.write(f"revoked {folder}\n")
    inner = [f for f in folders if f != folder and containing(f, [folder])]
    if inner:
        print(f"jaxlint: still trusted inside it: {', '.join(inner)}", file=err)
    return 0
