"""JX601 trace-error: the JAX error class, the user's line, and a hint chosen by the class.

The trace errors are JX601's case (tests/rules/JX601.py, whose marked lines test_rule_cases.py
checks), analyzed in the test process; the module that fails to import keeps the real worker.
"""
from __future__ import annotations

from pathlib import Path

from helpers import case_source, checked_case

from jaxlint.config.selection import select_rules
from jaxlint.engine.check import check


def found() -> dict[str, str]:
    """The messages of the case's findings (tests/rules/JX601.py, whose marked lines
    test_rule_cases.py checks), by the word ending the line's comment or by function."""
    _, result = checked_case("JX601")
    lines = case_source("JX601").read_text(encoding="utf-8").splitlines()
    by_word = {}
    for finding in result.findings:
        line = lines[finding.span.start_line - 1].removesuffix("  # expect: JX601")
        by_word[line.split("# ")[-1] if "# " in line else finding.target] = finding.message
    return by_word


def test_each_error_class_gets_its_hint() -> None:
    found_ = found()
    assert "TracerBoolConversionError" in found_["bool"] and "jnp.where or lax.cond" in found_["bool"]
    assert "ConcretizationTypeError" in found_["int"] and "mark the argument static" in found_["int"]
    assert "TracerArrayConversionError" in found_["numpy"] and "use jax.numpy" in found_["numpy"]
    assert "NonConcreteBooleanIndexError" in found_["mask"] and "size=n" in found_["mask"]
    assert "shapes must be static" in found_["shape"] or "static" in found_["shape"]
    assert checked_case("JX601")[1].traced == 2  # fine, row_indices (a jit of a vmap, traced with the batch)


def test_non_hashable_static_argument_hint() -> None:
    message = found()["static_list"]
    assert "Non-hashable static arguments" in message and "pass a tuple" in message


def test_a_more_specific_rule_explains_the_failure(tmp_path: Path) -> None:
    """The import fails on a list passed as a static argument: JX204 reports it, not JX601/JX901.
    An import error the worker catches: the real worker."""
    path = tmp_path / "static_call.py"
    path.write_text(
        "from functools import partial\n\nimport jax\nimport jax.numpy as jnp\n\n\n"
        "@partial(jax.jit, static_argnums=1)\n"
        "def scaled(x, sizes):\n"
        "    return x * len(sizes)\n\n\n"
        "scaled(jnp.ones(3), [1, 2])\n")
    findings = check([str(path)], select_rules(None, None)).findings
    assert [(f.code, f.span.start_line) for f in findings] == [("JX204", 12)]
