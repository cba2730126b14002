"""JX103 vmap-while-batched-predicate: its spans, messages and costs, on the findings of its case
(tests/rules/JX103.py, whose marked lines test_rule_cases.py checks)."""
from __future__ import annotations

import pytest
from helpers import case_source, checked_case, position

from jaxlint.model import Finding

CASE = case_source("JX103").read_text(encoding="utf-8")


def found() -> dict[str, Finding]:
    return {finding.target: finding for finding in checked_case("JX103")[1].findings}


@pytest.mark.slow
def test_batched_while_and_fori() -> None:
    assert set(found()) == {"batched_while", "batched_fori"}
    assert all(f.fix is None and f.severity == "warning" and f.cost is not None and f.cost.basis == "shapes"
               for f in found().values())
    finding = found()["batched_while"]
    call = "lax.while_loop(lambda c: c[0] < n, lambda c: (c[0] + 1, heavy(c[1])), (0, x))"
    assert (finding.span.start_line, finding.span.start_col) == position(CASE, call)
    message = finding.message
    assert message.startswith("lax.while_loop predicate is batched under vmap (8 elements, predicate bool[8])")
    assert "every element runs max(trip) iterations" in message and "unknown statically" in message
    assert "(1168 FLOPs" in message  # heavy for the batch (1152), the counter add (8), the predicate (8)
    assert finding.cost.flops is None
    fori = found()["batched_fori"]
    assert fori.message.startswith("lax.fori_loop bounds are batched under vmap (8 elements")
    assert (fori.span.start_line, fori.span.start_col) == position(CASE, "lax.fori_loop(0, n,")
