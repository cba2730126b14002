"""The ``jaxlint explain`` subcommand: its arguments and its run (exit 0, or 2 with a message)."""
from __future__ import annotations

import argparse
import json
import sys
from typing import Any

from jaxlint.cli.arg_types import seconds
from jaxlint.cli.exits import failed
from jaxlint.config.flags import add_compile_arguments


def add_parser(commands: Any) -> None:
    explain = commands.add_parser(
        "explain", help="show what a function compiles to, what runs twice, and what each fix saves")
    explain.add_argument("function", metavar="PATH::FUNCTION",
                         help="a file and a function or method in it, e.g. examples/founding.py::my_mapped_function")
    explain.add_argument("--args", default=None, metavar="HINT",
                         help='abstract arguments in the hint syntax, e.g. "x=f32[8,128], n=3" '
                              "(overrides the other sources)")
    explain.add_argument("--format", "--output-format", dest="format", choices=["text", "json"], default="text")
    explain.add_argument("--full", action="store_true",
                         help="print every equation, instruction, duplicate and finding (default: a summary page, "
                              "each repeated block of equations once with its count)")
    explain.add_argument("--html", default=None, metavar="FILE", help="also write a self-contained HTML page")
    explain.add_argument("--timeout", type=seconds, default=None,
                         help="seconds for importing, tracing and compiling (default 60)")
    add_compile_arguments(explain, _devices, target_default="the `target` setting, else cpu",
                          devices_default="the `devices` setting, else the product of the module's literal mesh shape")


def _devices(text: str) -> int:
    try:
        count = int(text)
    except ValueError:
        count = 0
    if count < 1:
        raise argparse.ArgumentTypeError(f"expected a whole number of CPU devices, at least 1, got {text!r}")
    return count


def run(args: argparse.Namespace) -> int:
    from jaxlint.explain import ExplainError
    from jaxlint.explain.run import explain

    try:
        report = explain(args.function, args.args, args.timeout, args.devices, args.target)
    except ExplainError as error:
        return failed(str(error))
    if args.html:
        try:
            from jaxlint.explain.html import write_html

            write_html(report, args.html)
        except ImportError as error:
            return failed(f"the HTML report is not available: {error}")
        except OSError as error:
            return failed(f"cannot write {args.html}: {error.strerror or error}")
    if args.format == "json":
        json.dump(report, sys.stdout, indent=2)
        sys.stdout.write("\n")
    else:
        from jaxlint.explain.terminal import render

        sys.stdout.write(render(report, full=args.full))
    return 0
