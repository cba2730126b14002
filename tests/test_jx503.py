"""JX503 constant-out-of-bounds-index: its spans and messages, on the findings of its case
(tests/rules/JX503.py, whose marked lines test_rule_cases.py checks)."""
from __future__ import annotations

from helpers import by_target, case_source, checked_case, position

BOUNDS = case_source("JX503").read_text(encoding="utf-8")


def test_out_of_bounds_constant_indices() -> None:
    found = by_target(checked_case("JX503")[1].findings, "JX503")
    assert all(f.severity == "error" and f.fix is None for f in found.values())
    finding = found["past_end"]
    line, col = position(BOUNDS, "x[7]")
    assert (finding.span.start_line, finding.span.start_col, finding.span.end_col) == (line, col, col + 4)
    # The lowering differs by version (gather on JAX 0.4, dynamic_slice on recent JAX).
    assert finding.message.startswith("constant index 7 is out of bounds for axis 0 of length 5 (shape (5,)): "
                                      "JAX does not raise;")
    assert finding.message.endswith("clamps the index and silently reads position 4 instead.")
    assert "constant index -7 is out of bounds" in found["before_start"].message
    assert "reads position 0 instead" in found["before_start"].message
    assert found["set_dropped"].message == (
        "constant index 9 is out of bounds for axis 0 of length 5 (shape (5,)): JAX does not raise; the "
        "`scatter` silently drops the update and returns the array unchanged there.")
    assert "`scatter-add` silently drops" in found["add_dropped"].message
    assert "constant index -7 is out of bounds" in found["set_negative"].message
    assert found["window"].message == (
        "constant start 4 of a size-3 window is out of bounds for axis 0 of length 5 (shape (5,)): JAX does "
        "not raise; `dynamic_slice` clamps the start and silently reads positions 2..4 instead.")
    assert "silently writes positions 3..4 instead" in found["update"].message
    assert "axis 1 of length 3 (shape (5, 3))" in found["matrix"].message
    assert "reads position 2 instead" in found["matrix"].message
