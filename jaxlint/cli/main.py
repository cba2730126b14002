"""`jaxlint check`: exit 0 when clean, 1 when findings remain, 2 on usage or internal errors."""
from __future__ import annotations

import argparse
import os
import signal
import sys
from typing import TYPE_CHECKING, Any

from jaxlint.cli.output_flags import VersionAction, add_check_flags
from jaxlint.cli.values import positive_int, seconds

if TYPE_CHECKING:  # the CLI imports the pipeline lazily
    from jaxlint.engine.results import CheckResult


def build_parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(prog="jaxlint", description="A linter that reads JAX programs as XLA sees them.")
    parser.add_argument("--version", action=VersionAction)
    commands = parser.add_subparsers(dest="command", required=True)
    check = commands.add_parser("check", help="trace JAX code and report findings")
    check.add_argument("paths", nargs="*", default=["."], help="files or folders (default: .)")
    check.add_argument("--fix", action="store_true", help="apply the fixes jaxlint verified as safe")
    check.add_argument("--diff", action="store_true", help="print the verified fixes as a diff; write nothing")
    add_check_flags(check)
    _add_output_flags(check)
    check.add_argument("--select", type=_codes, default=None, help="codes, prefixes (JX1) or names")
    check.add_argument("--ignore", type=_codes, default=None, help="codes, prefixes or names")
    check.add_argument("--timeout", type=seconds, default=None, help="seconds per module (default 60)")
    check.add_argument("--cost", choices=["shapes", "compiled"], default="shapes",
                       help="compiled: compile each function before and after its verified fixes and "
                            "report XLA's cost difference (slower)")
    check.add_argument("-j", "--jobs", type=positive_int, default=None,
                       help="worker processes at once (default: one per core, at most 4)")
    check.add_argument("--timings", action="store_true", help="print the time spent in each stage")
    check.add_argument("--show-untraced", action="store_true",
                       help="list the functions not traced, why, and the hint comment that would trace them")
    check.add_argument("--coverage-report", metavar="FILE", default=None,
                       help="write traced and untraced functions as JSON to FILE")
    check.add_argument("--ignore-noqa", action="store_true",
                       help="ignore `# noqa` and `# jaxlint: ignore[...]` comments: report every finding")
    check.add_argument("--add-noqa", action="store_true",
                       help="add a `# noqa: CODE` comment for every finding (existing ones are extended)")
    _add_config_flags(check)
    commands.add_parser("rules", help="list the rules")
    rule = commands.add_parser("rule", help="print a rule's documentation")
    rule.add_argument("rule", nargs="?", help="a code (JX101) or name (vmap-unbatched-output)")
    rule.add_argument("--all", action="store_true", help="every rule's documentation")
    rule.add_argument("--output-format", choices=["text", "json"], default="text")
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
    from jaxlint.cli.clean import add_parser as add_clean_parser
    from jaxlint.cli.explain import add_parser as add_explain_parser

    add_explain_parser(commands)
    add_clean_parser(commands)
    commands.add_parser("server", help="run the editor server (LSP over stdio; needs pygls: jaxlint[server])")
    return parser


def _add_config_flags(check: argparse.ArgumentParser) -> None:
    """--config, --isolated, --exclude, --force-exclude, --show-settings... (jaxlint.config.flags)."""
    from jaxlint.config import flags as config_cli

    config_cli.add_arguments(check)


def _codes(text: str) -> list[str]:
    return [part.strip() for part in text.split(",") if part.strip()]


def _add_output_flags(check: argparse.ArgumentParser) -> None:
    """Where and how findings are written (jaxlint.report); None: from the environment or config."""
    check.add_argument("--output-format", metavar="FORMAT", default=None,
                       help="full (default), concise, json, json-lines, sarif, github, junit or gitlab; "
                            "else from JAXLINT_OUTPUT_FORMAT or the output-format configuration key")
    check.add_argument("-o", "--output-file", metavar="FILE", default=None,
                       help="write the report to FILE instead of stdout")
    check.add_argument("--statistics", action="store_true",
                       help="count the findings per rule (and how many are fixable) instead of listing them")


def _output_format(args: argparse.Namespace, configured: str | None = None) -> str:
    """--output-format, else JAXLINT_OUTPUT_FORMAT, else the configuration, else full."""
    from jaxlint import report as formats

    return formats.choose(args.output_format, os.environ.get(formats.ENVIRONMENT_VARIABLE) or None, configured)


def main(argv: list[str] | None = None) -> int:
    parser = build_parser()
    argv = list(sys.argv[1:] if argv is None else argv)
    recorded_command: list[str] = []
    if argv[:1] == ["record"] and "--" in argv:  # `record ... -- COMMAND`: COMMAND is not ours to parse
        argv, recorded_command = argv[:argv.index("--")], argv[argv.index("--") + 1:]
    try:
        args = parser.parse_args(argv)
    except SystemExit as exit_:
        return 2 if exit_.code else 0
    if args.command == "record":
        return _record(args, recorded_command)
    if args.command == "explain":
        from jaxlint.cli.explain import run as explain

        return explain(args)
    if args.command == "server":
        try:
            from jaxlint.server.lsp import main as serve
        except ImportError as error:
            print(f"jaxlint: the editor server needs pygls ({error}); pip install 'jaxlint[server]'", file=sys.stderr)
            return 2
        serve()
        return 0
    if args.command == "clean":
        from jaxlint.cli.clean import run as clean

        return clean(args)
    if args.command == "rule":
        from jaxlint.report.ruledocs import rule_command

        return rule_command(args.rule, args.all, args.output_format, sys.stdout, sys.stderr)
    from jaxlint.rules import all_rules

    if args.command == "rules":
        for rule in all_rules():
            print(f"{rule.code}  {rule.name:<30} {rule.severity:<8} {rule.summary}")
        return 0
    if args.fix and args.diff:
        print("jaxlint: --fix and --diff are exclusive", file=sys.stderr)
        return 2
    if args.add_noqa and (args.fix or args.diff or getattr(args, "fix_only", False) or args.ignore_noqa):
        print("jaxlint: --add-noqa cannot be combined with --fix, --fix-only, --diff or --ignore-noqa",
              file=sys.stderr)
        return 2
    from jaxlint.cli import output_flags as check_flags

    args.fix = args.fix or (args.fix_only and not args.diff)  # --fix-only applies the fixes
    if args.verbose:
        check_flags.configure_verbose()
    from jaxlint.config import ConfigError
    from jaxlint.config import flags as config_cli

    try:
        settings = config_cli.resolve(args)  # configuration files, --config and the flags
        if args.show_settings or args.show_files:
            return config_cli.show(args, settings)
    except ConfigError as error:
        print(f"jaxlint: configuration error: {error}", file=sys.stderr)
        return 2
    rules = settings.rules()
    if not rules:  # not even the JX9xx that say a module could not be analyzed: a green run would lie
        print(f"jaxlint: no rule is selected ({settings.emptied_selection()}), so nothing would be checked",
              file=sys.stderr)
        return 2
    from jaxlint import report as formats

    try:  # usage errors before the (slow) check
        if args.statistics and args.diff:
            raise formats.OutputError("--statistics and --diff are exclusive")
        output_format = _output_format(args, settings.output_format)
        formats.check_statistics(output_format, args.statistics)
        if args.output_file:
            formats.check_writable(args.output_file)
    except formats.OutputError as error:
        print(f"jaxlint: {error}", file=sys.stderr)
        return 2
    from jaxlint.engine.cache import ResultCache
    from jaxlint.engine.check import check
    from jaxlint.engine.interrupt import Interrupted
    from jaxlint.report import summary as report

    cache = None if args.no_cache or _true(os.environ.get("JAXLINT_NO_CACHE")) \
        else ResultCache(settings.cache_dir, settings.root, writes=not args.diff)  # --diff writes nothing
    try:
        result = check(args.paths, rules, fix=args.fix, diff=args.diff, timeout=settings.timeout, jobs=settings.jobs,
                       cost=args.cost, unsafe_fixes=args.unsafe_fixes, config=settings,
                       ignore_noqa=args.ignore_noqa, cache=cache)
    except FileNotFoundError as error:
        print(f"jaxlint: no such file or folder: {error.filename or error}", file=sys.stderr)
        return 2
    except ConfigError as error:
        print(f"jaxlint: configuration error: {error}", file=sys.stderr)
        return 2
    except Interrupted:
        raise  # entry() says it
    except Exception as error:  # jaxlint's own bug
        import traceback

        traceback.print_exc()
        print(f"jaxlint: internal error: {error}", file=sys.stderr)
        return 2
    if args.add_noqa:
        return _add_noqa(result)
    try:
        text = formats.report(result, output_format, statistics=args.statistics, diff=args.diff,
                              unsafe_fixes=args.unsafe_fixes)
        if args.fix_only and not args.diff:  # --fix-only reports none of the remaining findings
            text = ""
        if args.output_file:
            formats.write_file(args.output_file, text)
        else:
            sys.stdout.write(text)
    except formats.OutputError as error:
        print(f"jaxlint: {error}", file=sys.stderr)
        return 2
    failed = _coverage_outputs(args, result)
    check_flags.write_closing(args, result, sys.stderr)
    if args.timings or args.verbose:
        print(report.timings_text(result), file=sys.stderr)
    if failed:
        return 2
    return check_flags.exit_code(args, result)


def _true(value: str | None) -> bool:
    return (value or "").strip().lower() in ("1", "true", "yes", "on")


def _add_noqa(result: CheckResult) -> int:
    """--add-noqa: suppress every current finding with a comment; says how many it added."""
    from jaxlint.engine.add_noqa import add_noqa_to_files

    try:
        added = add_noqa_to_files(result)
    except (OSError, UnicodeError) as error:
        print(f"jaxlint: cannot write: {error}", file=sys.stderr)
        return 2
    print(f"Added {added} noqa directive{'s' if added != 1 else ''}.", file=sys.stderr)
    return 0


def _coverage_outputs(args: argparse.Namespace, result: CheckResult) -> bool:
    """--show-untraced (stderr: stdout holds only findings) and --coverage-report; True if the
    report could not be written."""
    if not (args.show_untraced or args.coverage_report):
        return False
    from jaxlint.report import coverage
    from jaxlint.text import relative

    covered = coverage.coverage(result)
    if args.show_untraced:
        sys.stderr.write(coverage.untraced_text(covered, relative))
    if args.coverage_report:
        try:
            coverage.write_report(covered, args.coverage_report)
        except OSError as error:
            print(f"jaxlint: cannot write the coverage report: {error}", file=sys.stderr)
            return True
    return False


def _record(args: argparse.Namespace, command: list[str]) -> int:
    from jaxlint.cli.record import record
    from jaxlint.config import ConfigError

    try:
        return record(args.paths, args.output, command, args.config, args.isolated)
    except ConfigError as error:
        print(f"jaxlint: configuration error: {error}", file=sys.stderr)
        return 2


def entry() -> int:
    """Console entry point: a closed pipe (``jaxlint check | head``) ends quietly; so do Ctrl-C
    and SIGTERM (CI cancelling, ``timeout``), with the shell's status for them, 130 and 143,
    after the workers are stopped (engine/check.py), and no traceback."""
    from jaxlint.engine.interrupt import Interrupted, Terminated

    def terminate(signum: int, frame: Any) -> None:
        raise Terminated()

    signal.signal(signal.SIGTERM, terminate)
    try:
        return main()
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


if __name__ == "__main__":
    sys.exit(entry())
