"""JX502 dtype-widening: its spans, messages and display-only fixes, on the findings of its case
(tests/rules/JX502/: widening.py, and x64.py, which enables ``jax_enable_x64`` at import; the
analysis puts JAX's configuration back afterwards, as the worker does between modules:
test_worker_isolation.py checks that in real workers). test_rule_cases.py checks their lines.
"""
from __future__ import annotations

from pathlib import Path

import pytest
from helpers import assert_analyzed, by_target, case_source, check_in_process, checked_case, position, write

from jaxlint.config.selection import select_rules
from jaxlint.engine.results import CheckResult
from jaxlint.model import Finding

WIDENING = (case_source("JX502") / "widening.py").read_text(encoding="utf-8")


def case_findings(file: str) -> list[Finding]:
    return [f for f in checked_case("JX502")[1].findings if f.path.endswith(file)]


def run(path: Path) -> CheckResult:
    return check_in_process([str(path)], select_rules(None, None))


def test_widening_reported_by_numpy_constants_only() -> None:
    found = by_target(case_findings("widening.py"), "JX502")
    finding = found["plus_ones"]
    line, col = position(WIDENING, "x + np.ones(8)")
    assert (finding.span.start_line, finding.span.start_col, finding.span.end_col) == \
        (line, col, col + len("x + np.ones(8)"))
    assert finding.severity == "warning"
    assert finding.message.startswith("`add` widens bf16[8] to f32: its other operand is a strongly typed "
                                      "f32 constant (array of shape (8,))")
    assert "2x the bytes (16 -> 32 bytes)" in finding.message
    assert "`mul` widens f16[8] to f32" in found["times_numpy_scalar"].message
    assert "(scalar)" in found["times_numpy_scalar"].message
    assert "the result f32[3,8]" in found["mapped"].message


def test_widening_fix_is_display_only_cast() -> None:
    found = by_target(case_findings("widening.py"), "JX502")
    fix = found["plus_ones"].fix
    assert fix.applicability == "display-only"
    [edit] = fix.edits
    line, col = position(WIDENING, "np.ones(8)  # expect")
    assert (edit.span.start_line, edit.span.start_col, edit.span.end_col) == (line, col, col + len("np.ones(8)"))
    assert edit.content == "np.ones(8).astype(x.dtype)"
    assert found["constant_first"].fix.edits[0].content == "np.float32(2).astype(x.dtype)"
    assert found["global_weight"].fix.edits[0].content == "W.astype(x.dtype)"


def test_widening_under_x64() -> None:
    found = by_target(case_findings("x64.py"), "JX502")
    assert found["double"].message.startswith("`mul` widens f32[8] to f64: its other operand is a strongly "
                                              "typed f64 constant (scalar)")
    assert "2x the bytes (32 -> 64 bytes)" in found["shift"].message
    assert "4x the bytes (16 -> 64 bytes)" in found["bf16_to_f64"].message


SYMBOLIC = '''\
import jax
import jax.numpy as jnp
import numpy as np


# jaxlint: args x=f32[n]
@jax.jit
def symbolic_axis(x):
    return x[7] + x.at[9].set(1.0).sum() + (x.astype(jnp.bfloat16) + np.float32(2)).sum()


# jaxlint: args x=f32[n, 3]
@jax.jit
def static_axis(x):
    return x[:, 7]
'''


def test_symbolic_sizes(tmp_path: Path) -> None:
    try:
        from jax import export  # noqa: F401
    except ImportError:
        pytest.skip("jax.export cannot be imported here (JAX 0.4.x without absl-py)")
    result = run(write(tmp_path, "jx502_jx503_symbolic", SYMBOLIC))
    assert_analyzed(result, 2)
    # An index on a symbolic axis may be in bounds: quiet; the static axis of the same array is not.
    [bounds] = by_target(result.findings, "JX503").values()
    assert bounds.target == "static_axis" and "axis 1 of length 3 (shape (n, 3))" in bounds.message
    [widening] = by_target(result.findings, "JX502").values()
    assert widening.target == "symbolic_axis"
    assert "`add` widens bf16[n] to f32" in widening.message and "2x the bytes," in widening.message
