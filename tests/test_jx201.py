"""JX201 loop-invariant-in-loop: its spans, messages and costs, on the findings of its case
(tests/rules/JX201.py, whose marked lines test_rule_cases.py checks)."""
from __future__ import annotations

import pytest
from helpers import by_target, case_source, checked_case

from jaxlint.model import Finding

CASE = case_source("JX201").read_text(encoding="utf-8")


@pytest.fixture(scope="module")
def found() -> dict[str, Finding]:
    """The findings of the case (tests/rules/JX201.py, whose marked lines test_rule_cases.py checks)."""
    return by_target(checked_case("JX201")[1].findings)


def line_of(text: str) -> int:
    return next(i for i, line in enumerate(CASE.splitlines(), 1) if text in line)


def test_differentiated_scan_points_at_the_invariant_expression(found: dict[str, Finding]) -> None:
    finding = found["grad_scan"]
    line = line_of("A = jnp.tanh(W @ W)")
    assert (finding.span.start_line, finding.span.start_col) == (line, CASE.splitlines()[line - 1].index("W @ W"))
    assert "differentiated scan" in finding.message and "5 iterations" in finding.message
    assert "2 x dot_general -> f32[64,64]" in finding.message and "before the scan" in finding.message
    # Two 64x64x64 matmuls (the backward of W @ W) per iteration, four iterations too many.
    assert finding.cost is not None and finding.cost.basis == "shapes"
    assert finding.cost.flops == pytest.approx(4 * 2 * 2 * 64**3, rel=0.02)
    assert finding.fix is None


def test_value_and_grad_and_fori_loop(found: dict[str, Finding]) -> None:
    assert found["value_and_grad"].span.start_line == line_of("(W @ W.T) @ x")
    assert found["fori_grad"].span.start_line == line_of("jnp.sin((W @ W) @ c)")
    assert "6 iterations" in found["fori_grad"].message


def test_invariant_work_in_a_cond(found: dict[str, Finding]) -> None:
    scan = found["cond_scan"]
    assert scan.span.start_line == line_of("lambda c: c + (W @ W)[0]")
    assert "inside a cond in a scan body" in scan.message
    assert scan.cost.flops == pytest.approx(4 * 2 * 64**3, rel=0.02)
    loop = found["cond_while"]
    assert "while_loop" in loop.message and "trip count unknown" in loop.message
    assert loop.cost.flops is None
