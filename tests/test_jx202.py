"""JX202 python-loop-unrolled: its messages and costs, on the findings of its case
(tests/rules/JX202.py, whose marked lines test_rule_cases.py checks)."""
from __future__ import annotations

import pytest
from helpers import case_line, checked_case

from jaxlint.model import Finding
from jaxlint.rules.jx202_python_loop_unrolled import PythonLoopUnrolled, repetitions


def at(text: str) -> Finding:
    _, result = checked_case("JX202")
    [finding] = [f for f in result.findings if f.span.start_line == case_line("JX202", text)]
    return finding


@pytest.mark.slow
def test_message_and_cost() -> None:
    finding = at("x = x * 2.0 + 1.0  # expect")
    assert "600 equations" in finding.message and "repeated 300 times" in finding.message
    assert "fori_loop" in finding.message
    assert finding.cost is not None and finding.cost.basis == "shapes" and finding.cost.equations == 600
    # The span is the line itself, without its indentation.
    assert (finding.span.start_col, finding.span.end_col) == (8, len("        x = x * 2.0 + 1.0  # expect: JX202"))
    assert "repeated 150 times" in at("jnp.sin(x) * 2.0").message
    assert "repeated 30 times" in at("jnp.stack([jax.random.normal").message


def test_repetitions() -> None:
    assert repetitions(list("ab" * 50)) == (50, 2)
    assert repetitions(list("xyz" + "ab" * 50)) == (50, 2)  # an irregular first iteration
    assert repetitions(list("ab" * 50 + "q")) == (50, 2)  # an irregular last iteration
    assert repetitions(list("abcdefg")) == (1, 7)
    assert repetitions([]) == (1, 0)
    assert PythonLoopUnrolled.min_equations == 200


def test_a_plain_function_no_jit_wraps_is_not_reported(tmp_path) -> None:
    # Traced with inferred arguments only, it may run eagerly: no compile cost is known to exist.
    from pathlib import Path

    from helpers import check_in_process, write

    from jaxlint.config import load_config
    from jaxlint.rules import all_rules

    source = ("import jax\nimport jax.numpy as jnp\n\n\n"
              "def plain(x):\n    for _ in range(300):\n        x = jnp.sin(x) * 2 + 1\n    return x\n\n\n"
              "@jax.jit\ndef jitted(x):\n    for _ in range(300):\n        x = jnp.sin(x) * 2 + 1\n    return x\n")
    path = write(Path(tmp_path), "loops", source)
    result = check_in_process([str(path)], all_rules(), config=load_config([str(path)]))
    assert [(f.code, f.target) for f in result.findings if f.code == "JX202"] == [("JX202", "jitted")]


def test_a_loop_that_calls_a_jitted_function_outside_any_jit_is_not_reported(tmp_path) -> None:
    # Each call dispatches the one compiled program again (dynamax's fit_em per progress-bar
    # update); the same loop inside a jitted function unrolls into one program. (The vmap makes
    # ``driver`` a target of its own: a plain function traced with guesses is never reported.)
    from pathlib import Path

    from helpers import check_in_process, write

    from jaxlint.config import load_config
    from jaxlint.rules import all_rules

    step = "    step = jax.jit(lambda y: jnp.sin(y) * 2 + 1)\n    x = jax.vmap(jnp.cos)(x)\n"
    loop = "    for _ in range(300):\n        x = step(x)\n    return x\n"
    source = ("import jax\nimport jax.numpy as jnp\n\n\n"
              f"def driver(x: jax.Array):\n{step}{loop}\n\n"
              f"@jax.jit\ndef jitted_driver(x: jax.Array):\n{step}{loop}")
    path = write(Path(tmp_path), "drivers", source)
    result = check_in_process([str(path)], all_rules(), config=load_config([str(path)]))
    assert [(f.code, f.target) for f in result.findings if f.code == "JX202"] == [("JX202", "jitted_driver")]
