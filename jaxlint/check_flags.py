"""What ruff's flags around the report mean for `jaxlint check`: --unsafe-fixes, --show-fixes,
--fix-only, --exit-zero, --exit-non-zero-on-fix, --quiet, --verbose; and `jaxlint --version`.

jaxlint keeps no cache, so there is no --no-cache. Importing this module does not import JAX.
"""
from __future__ import annotations

import argparse
import logging
import sys
from importlib import metadata
from typing import TYPE_CHECKING, Any, Sequence, TextIO

from jaxlint import __version__

if TYPE_CHECKING:
    from jaxlint.check import CheckResult
    from jaxlint.model import Finding

LOG = logging.getLogger("jaxlint")


def add_check_flags(check: argparse.ArgumentParser) -> None:
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
    try:
        return metadata.version(distribution)
    except metadata.PackageNotFoundError:
        return "not installed"


def configure_verbose() -> None:
    """--verbose: the pipeline's progress messages (logger "jaxlint") on stderr, with the time
    since jaxlint started."""
    if any(h.get_name() == "jaxlint-verbose" for h in LOG.handlers):  # main() ran before
        return
    handler = logging.StreamHandler(sys.stderr)
    handler.set_name("jaxlint-verbose")
    handler.setFormatter(logging.Formatter("jaxlint [%(relativeCreated)6.0f ms] %(message)s"))
    LOG.addHandler(handler)
    LOG.setLevel(logging.DEBUG)
    LOG.propagate = False


def hidden_unsafe(findings: list[Finding], unsafe_fixes: bool) -> int:
    """Unsafe fixes that --unsafe-fixes would enable."""
    if unsafe_fixes:
        return 0
    return sum(1 for f in findings if f.fix is not None and f.fix.applicability == "unsafe")


def hidden_text(count: int) -> str:
    return f"{count} hidden fix{'es' if count != 1 else ''} can be enabled with --unsafe-fixes"


def fix_only_summary(result: CheckResult, unsafe_fixes: bool) -> str:
    """--fix-only says what was fixed, not what remains."""
    checked = len(result.files)
    parts = [f"{checked} file{'s' if checked != 1 else ''} checked", f"{len(result.fixed)} fixed"]
    if result.fix_rejected:
        parts.append(f"{len(result.fix_rejected)} fix{'es' if len(result.fix_rejected) != 1 else ''} "
                     "rejected by verification")
    hidden = hidden_unsafe(result.findings, unsafe_fixes)
    if hidden:
        parts.append(hidden_text(hidden))
    return ", ".join(parts) + "."


def write_show_fixes(result: CheckResult, mode: str, unsafe_fixes: bool, out: TextIO) -> None:
    """--show-fixes: the fixes applied (mode "fix"), shown as a diff ("diff") or available."""
    from jaxlint.check import relative

    if mode in ("fix", "diff"):
        listed = result.fixed
        verb = "Fixed" if mode == "fix" else "Would fix"
        out.write(f"{verb} {len(listed)} finding{'s' if len(listed) != 1 else ''}"
                  f"{':' if listed else '.'}\n")
    else:
        listed = [f for f in result.findings if f.fix is not None]
        out.write(f"{len(listed) or 'No'} fix{'es' if len(listed) != 1 else ''} available"
                  f"{':' if listed else '.'}\n")
    by_path: dict[str, list[Finding]] = {}
    for finding in sorted(listed, key=lambda f: (f.path, f.span.start_line, f.span.start_col, f.code)):
        by_path.setdefault(finding.path, []).append(finding)
    for path, findings in by_path.items():
        out.write(f"- {relative(path)}:\n")
        for finding in findings:
            status = "" if mode in ("fix", "diff") else f" [{_status(finding, unsafe_fixes)}]"
            out.write(f"    {finding.span.start_line}:{finding.span.start_col + 1} {finding.code} "
                      f"({finding.name}){status} {finding.fix.message}\n")


def _status(finding: Finding, unsafe_fixes: bool) -> str:
    applicability = finding.fix.applicability
    if applicability == "safe":
        return "safe"
    if applicability == "unsafe":
        return "unsafe" if unsafe_fixes else "unsafe: needs --unsafe-fixes"
    return "display-only: never applied"


def write_closing(args: argparse.Namespace, result: CheckResult, out: TextIO) -> None:
    """What follows the report on stderr: --show-fixes, then the summary line (none with --quiet)."""
    from jaxlint import report

    if args.quiet:
        return
    mode = "fix" if args.fix else "diff" if args.diff else "none"
    if args.show_fixes:
        write_show_fixes(result, mode, args.unsafe_fixes, out)
    if args.fix_only and not args.diff:
        out.write(fix_only_summary(result, args.unsafe_fixes) + "\n")
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
