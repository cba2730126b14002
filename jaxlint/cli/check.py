"""The ``jaxlint check`` subcommand: its flags (the configuration keys' flags are
jaxlint.config.flags's, which reads them into the configuration; what the report flags mean is
output_flags.py's) and its run: exit 0 when clean, 1 when findings remain, 2 on usage or
internal errors. Importing this module does not import the pipeline.
engine/check.py is the pipeline this command runs."""
from __future__ import annotations

import argparse
import os
import sys
from typing import TYPE_CHECKING, Any

from jaxlint.cli.arg_types import positive_int, seconds

if TYPE_CHECKING:  # the CLI imports the pipeline lazily
    from jaxlint.config import Config
    from jaxlint.engine.results import CheckResult
    from jaxlint.rules import RuleInfo


def add_parser(commands: Any) -> None:
    """Every flag of ``check``, in the order ``--help`` lists them."""
    from jaxlint.config import flags as config_flags
    from jaxlint.config.keys import OUTPUT_FORMATS
    from jaxlint.report import DEFAULT as DEFAULT_FORMAT

    check = commands.add_parser("check", help="trace JAX code and report findings")
    check.add_argument("paths", nargs="*", default=["."], help="files or folders (default: .)")
    check.add_argument("--fix", action="store_true", help="apply the fixes jaxlint verified as safe")
    check.add_argument("--diff", action="store_true", help="print the verified fixes as a diff; write nothing")
    check.add_argument("--unsafe-fixes", action="store_true",
                       help="with --fix or --diff, also apply (or show) unsafe fixes; they are "
                            "verified like safe ones")
    check.add_argument("--show-fixes", action="store_true",
                       help="after the report, list the fixes applied (--fix), shown (--diff) or available")
    check.add_argument("--fix-only", action="store_true",
                       help="apply fixes and report none of the remaining findings (exit 0 unless an error)")
    check.add_argument("--exit-zero", action="store_true", help="exit 0 even when findings remain")
    check.add_argument("--exit-non-zero-on-fix", action="store_true",
                       help="exit 1 when anything was fixed, even if no finding remains")
    volume = check.add_mutually_exclusive_group()
    volume.add_argument("-q", "--quiet", action="store_true", help="print the findings only, no summary")
    volume.add_argument("-v", "--verbose", action="store_true",
                        help="print each stage's progress and the time per file on stderr")
    # Where and how findings are written (jaxlint.report); None: from the environment or config.
    check.add_argument("--output-format", metavar="FORMAT", default=None,
                       help=f"{', '.join(OUTPUT_FORMATS)} (default {DEFAULT_FORMAT}); else from "
                            "JAXLINT_OUTPUT_FORMAT or the output-format configuration key")
    check.add_argument("-o", "--output-file", metavar="FILE", default=None,
                       help="write the report to FILE instead of stdout")
    check.add_argument("--statistics", action="store_true",
                       help="count the findings per rule (and how many are fixable) instead of listing them")
    # Configuration keys too: config.flags reads these four into the command line's layer.
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
    config_flags.add_arguments(check)  # --config, --isolated, --exclude, --show-settings, ...


def _codes(text: str) -> list[str]:
    return [part.strip() for part in text.split(",") if part.strip()]


def run(args: argparse.Namespace) -> int:
    """``jaxlint check`` with the parsed ``args``: the flags' checks, the configuration, the
    check itself, then the report and what follows it."""
    exclusive = _exclusive_flags(args)
    if exclusive is not None:
        print(f"jaxlint: {exclusive}", file=sys.stderr)
        return 2
    from jaxlint.cli import output_flags

    args.fix = args.fix or (args.fix_only and not args.diff)  # --fix-only applies the fixes
    if args.verbose:
        output_flags.configure_verbose()
    settings = _settings(args)
    if isinstance(settings, int):
        return settings
    rules = settings.rules()
    if not rules:  # not even the JX9xx that say a module could not be analyzed: a green run would lie
        print(f"jaxlint: no rule is selected ({settings.emptied_selection()}), so nothing would be checked",
              file=sys.stderr)
        return 2
    output_format = _usable_output(args, settings.output_format)
    if output_format is None:
        return 2
    result = _checked(args, settings, rules)
    if isinstance(result, int):
        return result
    if args.add_noqa:
        return _add_noqa(result)
    return _reported(args, result, output_format)


def _exclusive_flags(args: argparse.Namespace) -> str | None:
    if args.fix and args.diff:
        return "--fix and --diff are exclusive"
    if args.add_noqa and (args.fix or args.diff or args.fix_only or args.ignore_noqa):
        return "--add-noqa cannot be combined with --fix, --fix-only, --diff or --ignore-noqa"
    return None


def _settings(args: argparse.Namespace) -> Config | int:
    """The configuration (files, --config and the flags); an exit status for --show-settings and
    --show-files, or 2 for a configuration error (said)."""
    from jaxlint.config import ConfigError
    from jaxlint.config import flags as config_flags

    try:
        settings = config_flags.resolve(args)
        if args.show_settings or args.show_files:
            return config_flags.show(args, settings)
    except ConfigError as error:
        print(f"jaxlint: configuration error: {error}", file=sys.stderr)
        return 2
    return settings


def _usable_output(args: argparse.Namespace, configured: str | None) -> str | None:
    """The output format, its flags checked before the (slow) check; None after saying why not."""
    from jaxlint import report as formats

    try:
        if args.statistics and args.diff:
            raise formats.OutputError("--statistics and --diff are exclusive")
        output_format = _output_format(args, configured)
        formats.check_statistics(output_format, args.statistics)
        if args.output_file:
            formats.check_writable(args.output_file)
    except formats.OutputError as error:
        print(f"jaxlint: {error}", file=sys.stderr)
        return None
    return output_format


def _checked(args: argparse.Namespace, settings: Config, rules: list[RuleInfo]) -> CheckResult | int:
    """The check (re-running the tests of stale modules first where configured), or exit status 2
    with the reason said."""
    from jaxlint.config import ConfigError
    from jaxlint.engine.cache import ResultCache
    from jaxlint.engine.check import check
    from jaxlint.engine.interrupt import Interrupted

    cache = None if args.no_cache or _true(os.environ.get("JAXLINT_NO_CACHE")) \
        else ResultCache(settings.cache_dir, settings.root, writes=not args.diff)  # --diff writes nothing

    def run_check(fixing: bool = True) -> CheckResult:
        return check(args.paths, rules, fix=args.fix and fixing, diff=args.diff and fixing, timeout=settings.timeout,
                     jobs=settings.jobs, cost=args.cost, unsafe_fixes=args.unsafe_fixes, config=settings,
                     ignore_noqa=args.ignore_noqa, cache=cache)

    try:
        if settings.rerun_tests and cache is not None and cache.writes:
            from jaxlint.engine.rerun import check_rerunning_stale, stale_in_store

            stale = stale_in_store(args.paths, settings, [rule.code for rule in rules], cache)
            return check_rerunning_stale(run_check, stale, cache, settings.root, settings.rerun_timeout, sys.stderr,
                                         again=args.fix or args.diff, yield_cpu=True)[0]
        return run_check()
    except FileNotFoundError as error:
        print(f"jaxlint: no such file or folder: {error.filename or error}", file=sys.stderr)
    except ConfigError as error:
        print(f"jaxlint: configuration error: {error}", file=sys.stderr)
    except Interrupted:
        raise  # entry() says it
    except Exception as error:  # jaxlint's own bug
        import traceback

        traceback.print_exc()
        print(f"jaxlint: internal error: {error}", file=sys.stderr)
    return 2


def _reported(args: argparse.Namespace, result: CheckResult, output_format: str) -> int:
    """The report, the coverage outputs, the closing lines and timings; the exit status."""
    from jaxlint import report as formats
    from jaxlint.cli import output_flags
    from jaxlint.report import summary as report

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
    output_flags.write_closing(args, result, sys.stderr)
    if args.timings or args.verbose:
        print(report.timings_text(result), file=sys.stderr)
    if failed:
        return 2
    return output_flags.exit_code(args, result)


def _output_format(args: argparse.Namespace, configured: str | None = None) -> str:
    """--output-format, else JAXLINT_OUTPUT_FORMAT, else the configuration, else full."""
    from jaxlint import report as formats

    return formats.choose(args.output_format, os.environ.get(formats.ENVIRONMENT_VARIABLE) or None, configured)


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
