"""What ruff's flags around the report mean for `jaxlint check`: --unsafe-fixes, --show-fixes,
--fix-only, --exit-zero, --exit-non-zero-on-fix, --quiet, --verbose; and `jaxlint --version`.

The result cache's flags (--no-cache, --cache-dir) are with the configuration's, in config/flags.py.
Importing this module does not import JAX.
"""
from __future__ import annotations

import argparse
import sys
import time
from typing import TYPE_CHECKING, Any, Sequence, TextIO

from jaxlint.about import __version__

if TYPE_CHECKING:
    from jaxlint.engine.results import CheckResult

STARTED = time.time()  # --verbose's times count from here (the CLI imports this module first)

class VersionAction(argparse.Action):
    """``--version``: jaxlint's, JAX's and jaxlib's versions, read from the installed packages'
    metadata so that JAX is not imported (which takes about a second)."""

    def __init__(self, option_strings: Sequence[str], dest: str = argparse.SUPPRESS, **kwargs: Any) -> None:
        super().__init__(option_strings, dest, nargs=0, default=argparse.SUPPRESS,
                         help="print the versions of jaxlint, JAX and jaxlib, and exit", **kwargs)

    def __call__(self, parser: argparse.ArgumentParser, *args: Any) -> None:
        sys.stdout.write(version_text() + "\n")
        parser.exit()


def version_text() -> str:
    return f"jaxlint {__version__} (jax {_installed('jax')}, jaxlib {_installed('jaxlib')})"


def _installed(distribution: str) -> str:
    from importlib import metadata  # 15-20 ms, and only --version needs it

    try:
        return metadata.version(distribution)
    except metadata.PackageNotFoundError:
        return "not installed"


def configure_verbose() -> None:
    """--verbose: the pipeline's progress messages (logger "jaxlint") on stderr, with the time
    since jaxlint started. Only then is ``logging`` imported (jaxlint/lazylog.py)."""
    import logging

    LOG = logging.getLogger("jaxlint")
    if any(h.get_name() == "jaxlint-verbose" for h in LOG.handlers):  # main() ran before
        return
    handler = logging.StreamHandler(sys.stderr)
    handler.set_name("jaxlint-verbose")
    handler.setFormatter(logging.Formatter("jaxlint [%(since_start)6.0f ms] %(message)s"))
    handler.addFilter(_since_start)
    LOG.addHandler(handler)
    LOG.setLevel(logging.DEBUG)
    LOG.propagate = False


def _since_start(record: Any) -> bool:
    record.since_start = (record.created - STARTED) * 1000
    return True


def write_closing(args: argparse.Namespace, result: CheckResult, out: TextIO) -> None:
    """What follows the report on stderr: --show-fixes, then the summary line (none with --quiet),
    then the warning of a run that linted less than half of its JAX functions (even with --quiet)."""
    from jaxlint.engine.check import missing_path
    from jaxlint.report import summary as report
    from jaxlint.text import relative

    for path in result.empty_paths:  # even with --quiet: "0 findings" would say it checked something
        out.write(f"jaxlint: warning: no Python files in {path}\n")
    for path in result.ignored_missing:  # E902 ignored: still said, as ruff says it
        out.write(f"jaxlint: warning: failed to lint {path}: {missing_path(path).message}\n")
    for path, why in result.not_written:  # even with --quiet: a fix the user asked for was not made
        out.write(f"jaxlint: {relative(path)}: not fixed: {why}\n")
    for analysis in result.files:  # even with --quiet: figures the target did not give
        for why in analysis.result.not_compiled if analysis.result is not None else []:
            out.write(f"jaxlint: warning: {relative(analysis.source.path)}: not compiled for the target: {why}\n")
    warning = report.coverage_warning(result)
    if not args.quiet:
        _write_summary(args, result, out)
    if warning is not None:  # even with --quiet: a run that linted little must not look clean
        out.write(warning + "\n")


def _write_summary(args: argparse.Namespace, result: CheckResult, out: TextIO) -> None:
    from jaxlint.report import summary as report

    mode = "fix" if args.fix else "diff" if args.diff else "none"
    if mode == "diff":
        report.write_rejections(result, out)
    if args.show_fixes:
        report.write_show_fixes(result, mode, args.unsafe_fixes, out)
    if args.fix_only and not args.diff:
        out.write(report.fix_only_summary(result, args.unsafe_fixes) + "\n")
    else:
        out.write(report.summary(result, mode, args.unsafe_fixes) + "\n")


def exit_code(args: argparse.Namespace, result: CheckResult) -> int:
    """ruff's rules: --exit-zero wins; --diff fails when it shows a fix (or, without --fix-only,
    when findings remain); --fix-only fails only on --exit-non-zero-on-fix with a fix applied."""
    if args.exit_zero:
        return 0
    fixed = bool(result.fixed)
    if args.diff:
        return 1 if fixed or (result.findings and not args.fix_only) else 0
    if args.fix_only:
        return 1 if args.exit_non_zero_on_fix and fixed else 0
    return 1 if result.findings or (args.exit_non_zero_on_fix and fixed) else 0
