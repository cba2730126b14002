"""JX800: a suppression comment naming a jaxlint code that suppressed nothing in this run.

Computed in the jaxlint process where a file's findings are settled, once they are known and its
suppressions applied, like the analysis failures; there is nothing to check in the IR.
"""
from __future__ import annotations

from jaxlint.rules.base import Rule


class UnusedSuppression(Rule):
    code, name, severity = "JX800", "unused-suppression", "warning"
    summary = "A `# noqa`/`# jaxlint: ignore[...]` naming a jaxlint code that suppressed nothing."
    fix = "safe"
    by_pipeline = True
