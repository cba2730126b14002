"""``jaxlint clean``: remove the result cache of the project in the current directory, as
``ruff clean`` does (the folder ``check`` would use: --cache-dir, JAXLINT_CACHE_DIR, the
configuration's ``cache-dir``, else ``.jaxlint_cache`` in the project root)."""
from __future__ import annotations

import argparse
import os
import sys
from typing import Any

from jaxlint.cli.exits import failed


def add_parser(commands: Any) -> None:
    clean = commands.add_parser("clean", help="remove the result cache")
    clean.add_argument("--cache-dir", default=None, metavar="DIR", help="the cache folder to remove")


def run(args: argparse.Namespace) -> int:
    from jaxlint.config import ConfigError, load_config
    from jaxlint.engine.cache import NotACache, clean

    chosen = args.cache_dir or os.environ.get("JAXLINT_CACHE_DIR")
    try:
        config = load_config(["."])
    except ConfigError as error:
        if not chosen:
            return failed(f"configuration error: {error}")
        config = load_config(["."], isolated=True)
    folder = os.path.abspath(chosen) if chosen else config.cache_dir
    try:
        removed = clean(folder)
    except NotACache as error:
        return failed(f"not removed: {error}")
    except OSError as error:
        return failed(f"cannot remove the cache at {folder}: {error}")
    print(f"Removing cache at: {folder}" if removed else f"No cache at: {folder}", file=sys.stderr)
    return 0
