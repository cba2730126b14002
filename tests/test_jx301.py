"""JX301 large-closure-constant: its spans, message and cost, on the findings of its case
(tests/rules/JX301.py, whose marked lines test_rule_cases.py checks)."""
from __future__ import annotations

from helpers import by_target, case_source, checked_case, position

from jaxlint.model import Finding

CASE = case_source("JX301").read_text(encoding="utf-8")


def found() -> dict[str, Finding]:
    return by_target(checked_case("JX301")[1].findings)


def test_closure_constants_point_at_their_first_use() -> None:
    # A constant of a nested jit points into the helper; one in a scan body at the body's use.
    expected = {"numpy_constant": "y @ TABLE", "jnp_constant": "JTABLE @ x", "through_inner_jit": "x @ TABLE",
                "in_scan_body": "carry @ TABLE"}
    assert set(found()) == set(expected)
    for target, snippet in expected.items():
        finding = found()[target]
        assert (finding.span.start_line, finding.span.start_col) == position(CASE, snippet), target
        assert finding.fix is None


def test_closure_constant_message_and_cost() -> None:
    finding = found()["numpy_constant"]
    assert finding.message.startswith("float32[512,1024] (2.0 MiB) is captured by the traced function "
                                      "as a constant instead of being passed as an argument")
    assert "2097152 bytes are embedded in the compiled program" in finding.message
    assert finding.cost.basis == "shapes" and finding.cost.bytes == 2097152 and finding.cost.flops == 0
