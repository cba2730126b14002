"""JX305 host-callback-in-loop: its messages and costs, on the findings of its case
(tests/rules/JX305.py, whose marked lines test_rule_cases.py checks)."""
from __future__ import annotations

from helpers import case_line, checked_case

from jaxlint.model import Finding


def at(text: str) -> Finding:
    _, result = checked_case("JX305")
    [finding] = [f for f in result.findings if f.span.start_line == case_line("JX305", text)]
    return finding


def test_messages_and_cost() -> None:
    scan = at('jax.debug.print("c={c}"')
    assert "scan of 10 steps" in scan.message and "10 times per call" in scan.message
    assert scan.cost is not None and scan.cost.note == "10 host round trips per call"
    assert scan.span.start_col == 8  # the call itself
    cond = at("c = jax.lax.cond(x > 0, lambda c: jax.pure_callback(record")
    assert "pure_callback" in cond.message and "up to 10 times" in cond.message
    loop = at("io_callback(record, jax")
    assert "while loop" in loop.message and "not known" in loop.message
    nested = at("jax.debug.callback")
    assert "nested in 1 more loop" in nested.message and "50 times per call" in nested.message
