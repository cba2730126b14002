"""The summary and timings lines on stderr. The findings' formats are in jaxlint.formats."""
from __future__ import annotations

from jaxlint.check import CheckResult
from jaxlint.formats.full import write_findings
from jaxlint.formats.json_array import finding_json

# finding_json and write_findings moved to jaxlint.formats; importers of report keep working.
__all__ = ["finding_json", "summary", "timings_text", "write_findings"]


def summary(result: CheckResult, fix_mode: str, unsafe_fixes: bool = False) -> str:
    from jaxlint.check_flags import hidden_text, hidden_unsafe
    from jaxlint.formats.common import is_fixable

    findings = result.findings
    fixable = sum(1 for f in findings if is_fixable(f, unsafe_fixes))
    hidden = hidden_unsafe(findings, unsafe_fixes)
    checked = len(result.files)
    skipped = len(result.skipped)
    parts = [f"{checked} file{'s' if checked != 1 else ''} checked",
             f"traced {result.traced} of {result.traced + skipped} functions"]
    if skipped:
        parts.append(f"{skipped} skipped (no abstract arguments or errors)")
    parts.append(f"{len(findings)} finding{'s' if len(findings) != 1 else ''}")
    if fix_mode == "fix":
        parts.append(f"{len(result.fixed)} fixed")
    elif fix_mode == "diff":
        parts.append(f"{len(result.fixed)} fix{'es' if len(result.fixed) != 1 else ''} shown")
    if fixable and fix_mode != "fix":
        parts.append(f"{fixable} fixable with --fix")
    if hidden:
        parts.append(hidden_text(hidden))
    if result.fix_rejected:
        parts.append(f"{len(result.fix_rejected)} fix{'es' if len(result.fix_rejected) != 1 else ''} "
                     "rejected by verification")
    return ", ".join(parts) + "."


def timings_text(result: CheckResult) -> str:
    return "timings: " + ", ".join(f"{stage} {seconds * 1000:.1f} ms"
                                    for stage, seconds in result.timings.items())
