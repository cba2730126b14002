"""JX602 python-side-effect-in-jit: its messages and spans, on the findings of its case
(tests/rules/JX602.py, whose marked lines test_rule_cases.py checks)."""
from __future__ import annotations

from helpers import case_line, checked_case

from jaxlint.model import Finding


def at(text: str) -> Finding:
    _, result = checked_case("JX602")
    [finding] = [f for f in result.findings if f.span.start_line == case_line("JX602", text)]
    return finding


def test_messages() -> None:
    printed = at("print(x)  # expect")  # the first: in `prints`
    assert printed.severity == "warning" and "print(x) prints a traced value" in printed.message
    assert "jax.debug.print" in printed.message and "`prints`" in printed.message
    assert (printed.span.start_col, printed.span.end_col) == (4, len("    print(x)"))
    assert "print(z)" in at('print("z is", z)').message
    assert "`LOG.append(...)`" in at("LOG.append(y)").message
    assert "the global `state`" in at("state = y").message
    assert "`CACHE['x']`" in at('CACHE["x"] = x').message
    assert "`self.last`" in at("self.last = y").message
    assert "`bound`" in at("LOG.append(x + 1)").message
