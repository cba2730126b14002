"""The ``jaxlint`` command line: the parser of every subcommand (each defined in its own module:
check.py, rule.py, run.py, explain.py, clean.py, mcp.py, trust.py; record's here) and the dispatch to them. Exit codes:
0 clean, 1 findings remain, 2 usage or internal errors, 130/143 interrupted."""
from __future__ import annotations

import gc
import os
import signal
import sys
from typing import TYPE_CHECKING, Any

from jaxlint.cli.exits import failed

if TYPE_CHECKING:  # a replayed check (engine/replay.py) imports neither
    import argparse


def build_parser(only_check: bool = False) -> argparse.ArgumentParser:
    """The parser of every subcommand; with ``only_check``, of ``check`` alone (it parses a check's
    command line the same: building the other subcommands' parsers was a tenth of a warm check)."""
    import argparse

    from jaxlint.cli import check
    from jaxlint.cli.output_flags import VersionAction

    parser = argparse.ArgumentParser(prog="jaxlint", description="A linter that reads JAX programs as XLA sees them.")
    parser.add_argument("--version", action=VersionAction)
    commands = parser.add_subparsers(dest="command", required=True)
    check.add_parser(commands)
    if only_check:
        return parser
    from jaxlint.cli import clean, explain, mcp, rule, run, trust

    rule.add_parsers(commands)
    record = commands.add_parser(
        "record", help="record the arguments the tests pass, for check to trace with",
        usage="jaxlint record [--output PATH] [--config FILE] [--isolated] [PATHS...] -- COMMAND...")
    record.add_argument("paths", nargs="*", default=[], help="files or folders to record (default: the project root)")
    record.add_argument("--output", default=None, help="signatures file (default: <root>/.jaxlint/signatures.json)")
    record.add_argument("--config", action="append", default=[], metavar="CONFIG_OPTION",
                        help="a configuration file used instead of the one found (its folder is the root), "
                             "or a `KEY = VALUE` TOML line overriding one setting, as for check")
    record.add_argument("--isolated", action="store_true",
                        help="ignore all configuration files (the root is the current directory)")
    run.add_parser(commands)
    explain.add_parser(commands)
    clean.add_parser(commands)
    mcp.add_parser(commands)
    trust.add_parser(commands)
    server = commands.add_parser("server", help="run the editor server (LSP over stdio; needs pygls: the server extra)")
    server.add_argument("--target", default=None, metavar="TARGET",
                        help="compile for this chip in every project (as `jaxlint check --target`); default: each "
                             "project's configured target")
    return parser


def main(argv: list[str] | None = None) -> int:
    """Parse the command line and run its command."""
    argv = list(sys.argv[1:] if argv is None else argv)
    try:
        os.getcwd()
    except OSError as error:  # removed under the shell: every relative path would fail
        return failed(f"the current folder cannot be used ({error.strerror})")
    parser = build_parser(only_check=argv[:1] == ["check"])
    command: list[str] = []
    if argv[:1] in (["record"], ["run"]) and "--" in argv:  # `record ... -- COMMAND`: COMMAND is not ours to parse
        argv, command = argv[:argv.index("--")], argv[argv.index("--") + 1:]
    try:
        args = parser.parse_args(argv)
    except SystemExit as exit_:
        return 2 if exit_.code else 0
    if args.command == "check":
        from jaxlint.cli.check import run as check

        return check(args)
    if args.command == "record":
        return _record(args, command)
    if args.command == "run":
        from jaxlint.cli.run import run as run_program

        return run_program(args, command)
    if args.command == "explain":
        from jaxlint.cli.explain import run as explain

        return explain(args)
    if args.command == "server":
        return _server(args)
    if args.command == "mcp":
        from jaxlint.cli.mcp import run as serve_mcp

        return serve_mcp(args)
    if args.command == "trust":
        from jaxlint.cli.trust import run as trust

        return trust(args)
    if args.command == "clean":
        from jaxlint.cli.clean import run as clean

        return clean(args)
    from jaxlint.cli import rule

    if args.command == "rules":
        return rule.list_rules(sys.stdout)
    return rule.run(args, sys.stdout, sys.stderr)


def _record(args: argparse.Namespace, command: list[str]) -> int:
    from jaxlint.cli.record import record
    from jaxlint.config import ConfigError

    try:
        return record(args.paths, args.output, command, args.config, args.isolated)
    except ConfigError as error:
        return failed(f"configuration error: {error}")


def entry() -> int:
    """Console entry point: a closed pipe (``jaxlint check | head``) ends quietly; so do Ctrl-C
    and SIGTERM (CI cancelling, ``timeout``), with the shell's status for them, 130 and 143,
    after the workers are stopped (engine/check.py), and no traceback."""
    from jaxlint.engine.interrupt import Interrupted, Terminated

    def terminate(signum: int, frame: Any) -> None:
        raise Terminated()

    signal.signal(signal.SIGTERM, terminate)
    # The objects made so far live as long as the process: the collector need not scan them
    # again at each of a run's collections (here, not in main(), which tests call in-process).
    gc.freeze()
    from jaxlint.engine import replay

    argv, recorder, status = sys.argv[1:], None, None
    try:
        status = replay.served(argv, sys.stdout, sys.stderr)
        if status is not None:
            return status
        if replay.replayable(argv):
            recorder = replay.Recorder(argv)
            recorder.start()
        status = main(argv)
        return status
    except BrokenPipeError:
        devnull = os.open(os.devnull, os.O_WRONLY)
        os.dup2(devnull, sys.stdout.fileno())  # keep Python from failing again at exit
        return 1
    except Interrupted as error:  # during a check: it says what had finished
        print(f"jaxlint: {error}", file=sys.stderr)
        return error.status
    except KeyboardInterrupt:
        print("jaxlint: interrupted (SIGINT)", file=sys.stderr)
        return 130
    except Terminated:
        print("jaxlint: interrupted (SIGTERM)", file=sys.stderr)
        return 143
    finally:
        if recorder is not None:
            recorder.stop(status)


if __name__ == "__main__":
    sys.exit(entry())


def _server(args: argparse.Namespace) -> int:
    """``jaxlint server``: the editor server over stdio, once pygls and the target's libtpu are there."""
    try:
        from jaxlint.server.lsp import main as serve
    except ImportError as error:
        print(f'jaxlint: the editor server needs pygls ({error}); pip install "pygls>=2,<3"', file=sys.stderr)
        return 2
    if args.target is not None:
        from jaxlint.chips import TargetError, check_installed, parse_target

        try:
            check_installed(parse_target(args.target))
        except TargetError as error:
            return failed(str(error))
    serve(args.target)
    return 0
