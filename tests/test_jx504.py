"""JX504 discarded-functional-update: its message, span and display-only fix, on the findings of
its case (tests/rules/JX504.py, whose marked lines test_rule_cases.py checks)."""
from __future__ import annotations

from helpers import case_line, checked_case

from jaxlint.model import Finding


def at(text: str) -> Finding:
    _, result = checked_case("JX504")
    [finding] = [f for f in result.findings if f.span.start_line == case_line("JX504", text)]
    return finding


def test_message_span_and_fix() -> None:
    finding = at("x.at[i].set(0.0)  # expect")
    assert "`x.at[i].set(0.0)` is discarded" in finding.message and "(float32[5])" in finding.message
    assert finding.severity == "error"
    assert (finding.span.start_col, finding.span.end_col) == (4, 4 + len("x.at[i].set(0.0)"))
    assert finding.fix is not None and finding.fix.applicability == "display-only"
    assert [e.content for e in finding.fix.edits] == ["x = x.at[i].set(0.0)"]
    assert "`c = c.at[0].add(x.sum())`" in at("c.at[0].add(x.sum())").message
    assert ".at[...].divide" in at("x.at[i].divide").message
