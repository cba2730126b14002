"""JX102 vmap-cond-to-select: its spans, messages and costs, on the findings of its case
(tests/rules/JX102.py, whose marked lines test_rule_cases.py checks)."""
from __future__ import annotations

from helpers import by_target, case_source, checked_case, position

from jaxlint.model import Finding

CASE = case_source("JX102").read_text(encoding="utf-8")


def found() -> dict[str, Finding]:
    return by_target(checked_case("JX102")[1].findings)


def test_every_trigger_is_a_warning_with_a_cost_and_no_fix() -> None:
    assert set(found()) == {"helper_cond", "inline_switch", "pytree_cond", "twice", "in_scan"}
    for finding in found().values():
        assert finding.fix is None and finding.severity == "warning"
        assert finding.cost is not None and finding.cost.basis == "shapes"


def test_cond_in_a_helper_points_at_the_cond_call() -> None:
    finding = found()["helper_cond"]
    call = "lax.cond(p > 0, heavy, light, x)"
    line, col = position(CASE, call)
    assert (finding.span.start_line, finding.span.start_col, finding.span.end_col) == (line, col, col + len(call))
    message = finding.message
    assert message.startswith("lax.cond predicate is batched under vmap (8 elements)")
    assert "all 2 branches" in message and "branch FLOPs for the batch: 1152, 128" in message
    assert "up to 1152 FLOPs per call go to branches whose result is discarded" in message
    assert "(128 if every element takes the most expensive branch)" in message
    assert "lax.map" in message
    assert finding.cost.flops == 1152 and finding.cost.equations == 3


def test_multiline_switch_with_three_branches() -> None:
    finding = found()["inline_switch"]
    assert (finding.span.start_line, finding.span.start_col) == position(CASE, "lax.switch(")
    assert finding.span.end_line == finding.span.start_line + 4
    assert finding.message.startswith("lax.switch predicate is batched under vmap (8 elements)")
    assert "all 3 branches" in finding.message and "1152, 128, 128" in finding.message
    assert finding.cost.flops == 1408 - 128  # all three minus the cheapest


def test_pytree_output_and_repeated_and_looped_conds() -> None:
    assert found()["pytree_cond"].span.start_line == position(CASE, "lax.cond(p > 0, lambda x: (heavy")[0]
    assert found()["twice"].cost.flops == 2 * 1152  # the one call site traced twice: one finding
    assert found()["in_scan"].cost.flops == 5 * 1152  # inside a scan of length 5
