"""`jaxlint check`: exit 0 when clean, 1 when findings remain, 2 on usage or internal errors."""
from __future__ import annotations

import argparse
import os
import sys
from typing import TYPE_CHECKING

from jaxlint import __version__

if TYPE_CHECKING:  # the CLI imports the pipeline lazily
    from jaxlint.check import CheckResult


def build_parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(prog="jaxlint", description="A linter that reads JAX programs as XLA sees them.")
    parser.add_argument("--version", action="version", version=f"jaxlint {__version__}")
    commands = parser.add_subparsers(dest="command", required=True)
    check = commands.add_parser("check", help="trace JAX code and report findings")
    check.add_argument("paths", nargs="*", default=["."], help="files or folders (default: .)")
    check.add_argument("--fix", action="store_true", help="apply the fixes jaxlint verified as safe")
    check.add_argument("--diff", action="store_true", help="print the verified fixes as a diff; write nothing")
    check.add_argument("--output-format", choices=["text", "json"], default="text")
    check.add_argument("--select", type=_codes, default=None, help="codes, prefixes (JX1) or names")
    check.add_argument("--ignore", type=_codes, default=None, help="codes, prefixes or names")
    check.add_argument("--timeout", type=float, default=60.0, help="seconds per module (default 60)")
    check.add_argument("--cost", choices=["shapes", "compiled"], default="shapes",
                       help="compiled: compile each function before and after its verified fixes and "
                            "report XLA's cost difference (slower)")
    check.add_argument("-j", "--jobs", type=_positive, default=None,
                       help="worker processes at once (default: one per core, at most 4)")
    check.add_argument("--timings", action="store_true", help="print the time spent in each stage")
    check.add_argument("--show-untraced", action="store_true",
                       help="list the functions not traced, why, and the hint comment that would trace them")
    check.add_argument("--coverage-report", metavar="FILE", default=None,
                       help="write traced and untraced functions as JSON to FILE")
    commands.add_parser("rules", help="list the rules")
    record = commands.add_parser(
        "record", help="record the arguments the tests pass, for check to trace with",
        usage="jaxlint record [--output PATH] [PATHS...] -- COMMAND...")
    record.add_argument("paths", nargs="*", default=[], help="files or folders to record (default: the project root)")
    record.add_argument("--output", default=None, help="signatures file (default: <root>/.jaxlint/signatures.json)")
    return parser


def _positive(text: str) -> int:
    value = int(text)
    if value < 1:
        raise argparse.ArgumentTypeError("must be at least 1")
    return value


def _codes(text: str) -> list[str]:
    return [part.strip() for part in text.split(",") if part.strip()]


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
    from jaxlint.rules import all_rules, select_rules

    if args.command == "rules":
        for rule in all_rules():
            print(f"{rule.code}  {rule.name:<30} {rule.severity:<8} {rule.summary}")
        return 0
    if args.fix and args.diff:
        print("jaxlint: --fix and --diff are exclusive", file=sys.stderr)
        return 2
    try:
        rules = select_rules(args.select, args.ignore)
    except ValueError as error:
        print(f"jaxlint: {error}", file=sys.stderr)
        return 2
    from jaxlint import report
    from jaxlint.check import check
    from jaxlint.config import ConfigError

    try:
        result = check(args.paths, rules, fix=args.fix, diff=args.diff, timeout=args.timeout, jobs=args.jobs,
                       cost=args.cost)
    except FileNotFoundError as error:
        print(f"jaxlint: no such file or folder: {error.filename or error}", file=sys.stderr)
        return 2
    except ConfigError as error:
        print(f"jaxlint: configuration error: {error}", file=sys.stderr)
        return 2
    except Exception as error:  # jaxlint's own bug
        import traceback

        traceback.print_exc()
        print(f"jaxlint: internal error: {error}", file=sys.stderr)
        return 2
    if args.diff:
        sys.stdout.write("".join(result.diffs))
    elif args.output_format == "json":
        report.write_json(result, sys.stdout)
    else:
        report.write_text(result, sys.stdout)
    failed = _coverage_outputs(args, result)
    fix_mode = "fix" if args.fix else "diff" if args.diff else "none"
    print(report.summary(result, fix_mode), file=sys.stderr)
    if args.timings:
        print(report.timings_text(result), file=sys.stderr)
    if failed:
        return 2
    if args.diff:
        return 1 if result.fixed or result.findings else 0
    return 1 if result.findings else 0


def _coverage_outputs(args: argparse.Namespace, result: CheckResult) -> bool:
    """--show-untraced (stderr: stdout holds only findings) and --coverage-report; True if the
    report could not be written."""
    if not (args.show_untraced or args.coverage_report):
        return False
    from jaxlint import coverage
    from jaxlint.check import relative

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
    from jaxlint.config import ConfigError
    from jaxlint.record_command import record

    try:
        return record(args.paths, args.output, command)
    except ConfigError as error:
        print(f"jaxlint: configuration error: {error}", file=sys.stderr)
        return 2


def entry() -> int:
    """Console entry point: a closed pipe (``jaxlint check | head``) ends quietly."""
    try:
        return main()
    except BrokenPipeError:
        devnull = os.open(os.devnull, os.O_WRONLY)
        os.dup2(devnull, sys.stdout.fileno())  # keep Python from failing again at exit
        return 1


if __name__ == "__main__":
    sys.exit(entry())
