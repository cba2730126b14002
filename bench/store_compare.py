"""Compares one library's `pytest --jaxlint` report with the `jaxlint check` that read its store.

    python store_compare.py LIB PYTEST_JSON CHECK_JSON PYTEST_LOG CHECK_LOG

Prints the findings only one side has (normalized as bench/six_libraries.py does: path relative to
the library, line, column, end, code, message, fix) and both sides' "linted X of Y" lines, and the
share of the JAX functions the tests linted that check reports as linted; exits 1 on a difference.
"""
import re
import sys
from collections import Counter
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))  # bench/six_libraries.py
from six_libraries import findings_of, normalized, summary_lines

lib, pytest_json, check_json, pytest_log, check_log = sys.argv[1:6]
lib = str(Path(lib).resolve())
plugin = Counter(normalized("", f, lib) for f in findings_of(Path(pytest_json)))
check = Counter(normalized("", f, lib) for f in findings_of(Path(check_json)))
only_plugin, only_check = plugin - check, check - plugin
print(f"findings: plugin {sum(plugin.values())}, check {sum(check.values())}, "
      f"only plugin {sum(only_plugin.values())}, only check {sum(only_check.values())}")
for label, rows in (("only plugin", only_plugin), ("only check", only_check)):
    for row in sorted(rows.elements(), key=repr):
        print(f"  {label}: {row[1:]}")


def linted(log: str) -> tuple[int, int] | None:
    for line in summary_lines(Path(log)):
        m = re.search(r"linted (\d+) of (\d+)", line)
        if m:
            return int(m.group(1)), int(m.group(2))
    return None


p, c = linted(pytest_log), linted(check_log)
print(f"plugin summary: {summary_lines(Path(pytest_log))}")
print(f"check summary:  {summary_lines(Path(check_log))}")
if p and c:
    print(f"linted: plugin {p[0]} of {p[1]} the tests ran; check {c[0]} of {c[1]} in the package; "
          f"check/plugin = {c[0] / max(p[0], 1):.0%} (goal: >= 80% of what the tests executed)")
sys.exit(1 if only_plugin or only_check else 0)
