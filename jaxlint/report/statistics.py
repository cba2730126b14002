"""``--statistics``: findings counted per rule, most frequent first (ruff's table, or JSON)."""
from __future__ import annotations

import json
from collections import Counter
from typing import Any, TextIO

from jaxlint.engine.results import CheckResult
from jaxlint.report.common import is_fixable

FORMATS = ("full", "concise", "json")  # the output formats statistics can be written in


def statistics(result: CheckResult, unsafe_fixes: bool = False) -> list[dict[str, Any]]:
    """``{code, name, count, fixable}`` per rule; ``fixable`` counts the findings --fix would fix
    (with ``unsafe_fixes``, unsafe fixes too)."""
    findings = result.findings
    counts = Counter(f.code for f in findings)
    fixable = Counter(f.code for f in findings if is_fixable(f, unsafe_fixes))
    names = {f.code: f.name for f in findings}
    return [{"code": code, "name": names[code], "count": count, "fixable": fixable[code]}
            for code, count in sorted(counts.items(), key=lambda item: (-item[1], item[0]))]


def write(result: CheckResult, output_format: str, out: TextIO, unsafe_fixes: bool = False) -> None:
    rows = statistics(result, unsafe_fixes)
    if output_format == "json":
        json.dump(rows, out, indent=2)
        out.write("\n")
        return
    if not rows:
        return
    count_width = max(len(str(row["count"])) for row in rows)
    code_width = max(len(row["code"]) for row in rows)
    any_fixable = any(row["fixable"] for row in rows)
    for row in rows:
        marker = ("[*] " if row["fixable"] else "[ ] ") if any_fixable else ""
        partly = f" ({row['fixable']} fixable)" if 0 < row["fixable"] < row["count"] else ""
        out.write(f"{row['count']:>{count_width}}\t{row['code']:<{code_width}}\t{marker}{row['name']}{partly}\n")
