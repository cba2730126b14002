"""``concise``: one line per finding, ``path:row:col: CODE [*] message``."""
from __future__ import annotations

from typing import TextIO

from jaxlint.engine.results import CheckResult
from jaxlint.report.full import header


def write(result: CheckResult, out: TextIO, *, unsafe_fixes: bool = False) -> None:
    for finding in result.findings:
        out.write(header(finding, unsafe_fixes) + "\n")
