"""`jaxlint check`: exit 0 when clean, 1 when findings remain, 2 on usage or internal errors."""
from __future__ import annotations

import argparse
import os
import sys

from jaxlint import __version__


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
    check.add_argument("-j", "--jobs", type=_positive, default=None,
                       help="worker processes at once (default: one per core, at most 4)")
    check.add_argument("--timings", action="store_true", help="print the time spent in each stage")
    commands.add_parser("rules", help="list the rules")
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
    try:
        args = parser.parse_args(argv)
    except SystemExit as exit_:
        return 2 if exit_.code else 0
    from jaxlint.rules import all_rules, select_rules

    if args.command == "rules":
        for rule in all_rules():
            print(f"{rule.code}  {rule.name:<26} {rule.severity:<8} {rule.summary}")
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
        result = check(args.paths, rules, fix=args.fix, diff=args.diff, timeout=args.timeout, jobs=args.jobs)
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
    fix_mode = "fix" if args.fix else "diff" if args.diff else "none"
    print(report.summary(result, fix_mode), file=sys.stderr)
    if args.timings:
        print(report.timings_text(result), file=sys.stderr)
    if args.diff:
        return 1 if result.fixed or result.findings else 0
    return 1 if result.findings else 0


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
