"""The ``jaxlint mcp`` subcommand: an MCP server over stdio for coding agents (jaxlint/mcp_server;
needs the official SDK: the mcp extra). Exit 0 when the client closes the connection, 2 when the
SDK is missing or the project folder is not one."""
from __future__ import annotations

import argparse
import os
import sys
from typing import Any

from jaxlint.cli.exits import failed


def add_parser(commands: Any) -> None:
    server = commands.add_parser("mcp", help="run the MCP server for coding agents (stdio; needs the mcp extra)")
    server.add_argument("--project", default=".", metavar="DIR",
                        help="the project folder the tools check, fix and explain in; paths are relative to it "
                             "(default: the current folder)")


def run(args: argparse.Namespace) -> int:
    if not os.path.isdir(args.project):
        return failed(f"--project: no such folder: {args.project}")
    try:
        from jaxlint.mcp_server.server import serve
    except ImportError as error:
        print(f'jaxlint: the MCP server needs the mcp package ({error}); pip install "jaxlint[mcp]" '
              '(or "mcp>=2,<3")', file=sys.stderr)
        return 2
    serve(args.project)
    return 0
