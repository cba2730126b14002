"""``jaxlint run [OPTIONS] -- COMMAND...``: run a Python program (``python SCRIPT ARGS``, ``python -m
MODULE ARGS``, ``SCRIPT.py ARGS``, or a console script) with the calls of the project's functions
watched as ``pytest --jaxlint`` watches them, then report what linting them found.

The program runs in a child process (drivers/program_run.py) that ends with jaxlint; it lints
the kept calls once the program is done and hands the raw findings back in a JSON file. This
process imports neither JAX nor pytest: it settles the findings (configuration from the current
folder, selection, per-file-ignores, ``# noqa``), reports them in any of check's formats and
writes them to the result store ``jaxlint check`` reads, as the test run does (engine/store.py).
Exit status: the program's own when it failed, else 1 when findings remain (0 with --exit-zero),
2 for jaxlint's usage errors.
The ``jaxlint run`` command; explain/run.py is ``jaxlint explain``'s entry into its report.
"""
from __future__ import annotations

import argparse
import json
import os
import re
import sys
from typing import TYPE_CHECKING, Any

from jaxlint.cli.exits import failed

if TYPE_CHECKING:
    from jaxlint.config import Config

USAGE = "jaxlint run [OPTIONS] -- COMMAND..."
EXAMPLE = "jaxlint run -- python train.py --steps 2"
_PYTHON = re.compile(r"python(\d+(\.\d+)*)?(\.exe)?$")
_OPTIONS_WITH_VALUE = frozenset({"-W", "-X", "-Q"})  # python's own options that take the next word


class CommandError(Exception):
    """A command ``jaxlint run`` cannot run as a Python program."""


def add_parser(commands: Any) -> None:
    run = commands.add_parser(
        "run", help="run a Python program and lint the JAX functions it called (as pytest --jaxlint does)",
        usage=USAGE, description=f"Run a Python program, watching the calls of the project's functions, and "
                                  f"lint them once it exits. Example: {EXAMPLE}")
    run.add_argument("program", nargs=argparse.REMAINDER, metavar="COMMAND",
                     help="python SCRIPT ARGS, python -m MODULE ARGS, SCRIPT.py ARGS or a console script")
    run.add_argument("--output-format", metavar="FORMAT", default=None,
                     help="format of the findings (as check's; default: the configuration's output-format, else full)")
    run.add_argument("-o", "--output-file", metavar="FILE", default=None,
                     help="write the findings to FILE instead of stdout (where the program prints too)")
    run.add_argument("--coverage-report", metavar="FILE", default=None,
                     help="write which JAX functions the program ran were linted, and why the others were not")
    run.add_argument("--exit-zero", action="store_true",
                     help="exit 0 when findings remain (the program's own failure still sets the status)")
    run.add_argument("-q", "--quiet", action="store_true", help="print the findings only, no summary")
    run.add_argument("-v", "--verbose", action="store_true",
                     help="list the functions called with arrays that could not be traced again")
    run.add_argument("--config", action="append", default=[], metavar="CONFIG_OPTION",
                     help="a configuration file used instead of the one found (its folder is the root), "
                          "or a `KEY = VALUE` TOML line overriding one setting, as for check")
    run.add_argument("--target", default=None, metavar="TARGET",
                     help="compile for this chip (as `jaxlint check --target`); default: the configuration's target")
    run.add_argument("--isolated", action="store_true",
                     help="ignore all configuration files (the root is the current directory)")
    run.add_argument("--no-cache", action="store_true",
                     help="do not write what was linted to the result cache for `jaxlint check` to report "
                          "(JAXLINT_NO_CACHE=1)")
    run.add_argument("--cache-dir", metavar="DIR", default=None,
                     help="the result cache folder to write to (as check's --cache-dir; default: JAXLINT_CACHE_DIR, "
                          "else the configuration's cache-dir, else .jaxlint_cache)")


def program_command(command: list[str]) -> tuple[list[str], str, str, list[str]]:
    """(interpreter with its options, "path" or "module", script or module, the program's
    arguments) for ``command``; raises CommandError for a command that is not a Python program."""
    if not command:
        raise CommandError(f"run needs a command after '--', e.g. {EXAMPLE}")
    first, rest = command[0], command[1:]
    if first.startswith("-m"):  # `jaxlint run -- -m pkg.module`
        return _python_options([sys.executable], command)
    if _PYTHON.match(os.path.basename(first)):
        # A bare `python` is jaxlint's own (the environment jaxlint is installed in, where the
        # watcher can be imported); a path names the interpreter to use.
        return _python_options([first if os.sep in first else sys.executable], rest)
    if first.endswith(".py") or os.path.isfile(first):
        return [sys.executable], "path", first, rest
    import shutil  # here, as in run: parsing check's command line need not import it

    found = shutil.which(first)
    if found and _is_python_script(found):  # a console script: Python source with a shebang
        return [sys.executable], "path", found, rest
    raise CommandError(f"{first} is not a Python program: jaxlint run runs `python SCRIPT`, `python -m MODULE`, "
                       "`SCRIPT.py` or a Python console script (for a test suite, use pytest --jaxlint)")


def _python_options(interpreter: list[str], rest: list[str]) -> tuple[list[str], str, str, list[str]]:
    index = 0
    while index < len(rest) and rest[index].startswith("-") and rest[index] != "-":
        option = rest[index]
        if option.startswith("-m"):
            module = option[2:] or (rest[index + 1] if index + 1 < len(rest) else "")
            if not module:
                raise CommandError("-m needs a module name")
            return interpreter, "module", module, rest[index + (1 if option[2:] else 2):]
        if option.startswith("-c"):
            raise CommandError("python -c is not supported: put the code in a file and run that")
        if option == "--":
            index += 1
            break
        if option in _OPTIONS_WITH_VALUE:
            interpreter += rest[index:index + 2]
            index += 2
            continue
        interpreter.append(option)
        index += 1
    if index >= len(rest) or rest[index] == "-":
        raise CommandError("python needs a script or -m MODULE (a program read from stdin is not supported)")
    return interpreter, "path", rest[index], rest[index + 1:]


def _is_python_script(path: str) -> bool:
    try:
        with open(path, "rb") as handle:
            first_line = handle.readline(200)
    except OSError:
        return False
    return first_line.startswith(b"#!") and b"python" in first_line


def run(args: argparse.Namespace, command: list[str]) -> int:
    """``jaxlint run``: the program's command checked, the configuration and output resolved, the
    program run with jaxlint watching, then what it handed back reported."""
    prepared = _prepare(args, command)
    if isinstance(prepared, int):
        return prepared
    program, config, codes, output_format = prepared
    status, data = _run_program(args, program)
    if data is not None and data.get("interrupted"):
        print("jaxlint: the program was interrupted: nothing was linted", file=sys.stderr)
        return status
    if data is not None and data.get("error"):
        print(f"jaxlint: internal error while linting the program's calls: {data['error']}", file=sys.stderr)
        return status or 2
    if data is None:
        print(f"jaxlint: the program ended (status {status}) without handing jaxlint its calls: it called "
              "os._exit, was killed, or its Python has no jaxlint installed; nothing was linted", file=sys.stderr)
        return status or 2
    return _report(args, config, codes, output_format, data, status)


def _prepare(args: argparse.Namespace, command: list[str]) -> int | tuple[list[str], Config, list[str], str]:
    """(the bootstrap's command line, the configuration, the selected codes, the output format), or
    exit status 2 with the reason said: a bad command, configuration, selection or output file."""
    from jaxlint import report as formats
    from jaxlint.cli.record import load_options
    from jaxlint.config import ConfigError
    from jaxlint.drivers.program_run import BOOTSTRAP

    try:
        # `jaxlint run python train.py -- --x`: the first `--` was the program's
        interpreter, mode, target, program_args = program_command(
            [*args.program, "--", *command] if args.program else command)
    except CommandError as error:
        return failed(str(error))
    if mode == "path" and not os.path.isfile(target):
        return failed(f"no such file: {target}")
    try:
        if args.target:  # a snippet as --config gives one: checked here, and again in the program
            args.config = [*args.config, f"target = {json.dumps(args.target)}"]
        config = load_options([], args.config, args.isolated)
    except ConfigError as error:
        return failed(f"configuration error: {error}")
    codes = [rule.code for rule in config.rules()]
    if not codes:
        print(f"jaxlint: no rule is selected ({config.emptied_selection()}), so nothing would be checked",
              file=sys.stderr)
        return 2
    try:
        output_format = formats.choose(args.output_format, os.environ.get(formats.ENVIRONMENT_VARIABLE) or None,
                                       config.output_format)
        for path in (args.output_file, args.coverage_report):
            if path:
                formats.check_writable(path)
    except formats.OutputError as error:
        return failed(str(error))
    return [*interpreter, "-c", BOOTSTRAP, mode, target, *program_args], config, codes, output_format


def _run_program(args: argparse.Namespace, program: list[str]) -> tuple[int, dict[str, Any] | None]:
    """The program's exit status, and what it handed back (None: nothing), through a file in a
    temporary folder named in its environment."""
    import shutil
    import tempfile

    from jaxlint.cli.record import config_files, run_command
    from jaxlint.drivers.program_run import ENV

    folder = tempfile.mkdtemp(prefix="jaxlint-run-")
    handed_over = os.path.join(folder, "results.json")
    files = config_files(args.config)
    env = dict(os.environ)
    env[ENV] = json.dumps({"results": handed_over, "parent": os.getpid(), "config": files[0] if files else None,
                           "isolated": args.isolated,
                           "overrides": [value for value in args.config if value not in files]})
    try:
        status = run_command(program, env)
        return status, _read(handed_over)
    finally:
        shutil.rmtree(folder, ignore_errors=True)


def _read(path: str) -> dict[str, Any] | None:
    try:
        with open(path, encoding="utf-8") as handle:
            data = json.load(handle)
    except (OSError, ValueError):
        return None
    return data if isinstance(data, dict) else None


def _report(args: argparse.Namespace, config: Any, codes: list[str], output_format: str, data: dict[str, Any],
            status: int) -> int:
    from jaxlint import report as formats
    from jaxlint.drivers import results
    from jaxlint.model import Finding
    from jaxlint.text import relative

    findings = [Finding.from_json(f) for f in data["findings"]]
    functions = [results.Linted(**f) for f in data["functions"]]
    ran = [results.Ran(**r) for r in data["ran"]]
    result = results.settled(findings, codes, config, functions)
    failed = False
    try:
        text = formats.report(result, output_format)
        if args.output_file:
            formats.write_file(args.output_file, text)
        else:
            sys.stdout.write(text)
            sys.stdout.flush()
        if args.coverage_report:
            formats.write_file(args.coverage_report, json.dumps(results.coverage_report(ran, functions), indent=2) + "\n")
    except formats.OutputError as error:
        print(f"jaxlint: {error}", file=sys.stderr)
        failed = True
    _store(args, config, codes, findings, functions, ran, data)
    if not args.quiet:
        print(results.summary_line(ran, functions, len(result.findings), data.get("seconds", 0.0), "the program",
                                   args.verbose)
              + results.unwatched_modules_note(data.get("other_loaders", []), data.get("imported_before", [])),
              file=sys.stderr)
        for note in data.get("notes", []):
            print(f"jaxlint: {note}", file=sys.stderr)
        if args.verbose:
            for line in results.not_linted_lines(functions, relative):
                print(line, file=sys.stderr)
    for why in data.get("not_compiled", []):  # even with --quiet: figures the target did not give
        print(f"jaxlint: warning: not compiled for the target: {why}", file=sys.stderr)
    if not functions:  # even with --quiet: a run that linted nothing must not look clean
        print(f"jaxlint: the program called no function of the project ({relative(config.root)}) with "
              "arrays: nothing was linted", file=sys.stderr)
    if status:
        return status
    if failed:
        return 2
    return 1 if result.findings and not args.exit_zero else 0


def _store(args: argparse.Namespace, config: Any, codes: list[str], findings: list[Any], functions: list[Any],
           ran: list[Any], data: dict[str, Any]) -> None:
    """The store ``pytest --jaxlint`` writes too (engine/store.py), for ``jaxlint check`` to report
    what the program's run linted while the modules stay as they were (``data``: what the program
    handed over: the files each module's traces ran, the files' digests as read, when it started)."""
    from jaxlint.drivers import results
    from jaxlint.engine.store import RUN_ORIGIN, cache_for, write_store

    cache = cache_for(config, args.no_cache, args.cache_dir)
    if cache is not None:
        write_store(config, codes, findings, results.stored_functions(ran, functions), data.get("depends", {}),
                    origin=RUN_ORIGIN, cache=cache, read=data.get("read", {}), started=data.get("started"))
