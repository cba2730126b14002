"""JX303 constant-index-gather: its fixes (written by the real worker) and messages, on its case
(tests/rules/JX303.py, whose marked lines test_rule_cases.py checks)."""
from __future__ import annotations

from pathlib import Path

import pytest
from helpers import assert_case_fixed, by_target, case_source, checked_case, fix_case_with_workers, position

from jaxlint.engine.results import CheckResult
from jaxlint.model import Finding

CODE = "JX303"
CASE = case_source(CODE).read_text(encoding="utf-8")

# For each fixable function of the case: (its return expression, after --fix).
FIXED = {
    "columns": ("x[:, np.arange(0, 4)]", "x[:, 0:4]"),
    "strided_list": ("v[jnp.array([0, 2, 4])]", "v[0:5:2]"),
    "jnp_arange_step": ("v[jnp.arange(1, 9, 3)] + 1.0", "v[1:8:3] + 1.0"),
    "rows_first": ("x[np.array([1, 2]), :]", "x[1:3, :]"),
    "from_end": ("v[np.array([-3, -2, -1])]", "v[-3:]"),
}
FIXLESS = ["mixed_signs"]


@pytest.fixture(scope="module")
def fixed_case(tmp_path_factory: pytest.TempPathFactory) -> tuple[Path, CheckResult]:
    root = tmp_path_factory.mktemp(CODE)
    return root, fix_case_with_workers(CODE, root)


@pytest.fixture(scope="module")
def fixed(fixed_case: tuple[Path, CheckResult]) -> dict[str, Finding]:
    return by_target(fixed_case[1].fixed)


def test_fixes_written_and_verified_by_the_worker(fixed_case) -> None:
    assert_case_fixed(CODE, *fixed_case, FIXED, FIXLESS)


def test_reported_without_fix() -> None:
    found = by_target(checked_case(CODE)[1].findings)
    assert all(found[name].fix is None for name in FIXLESS)


def test_gather_finding_points_at_the_subscript_with_the_scale(fixed) -> None:
    finding = fixed["columns"]
    line, col = position(CASE, "x[:, np.arange(0, 4)]")
    assert (finding.span.start_line, finding.span.start_col, finding.span.end_col) == \
        (line, col, col + len("x[:, np.arange(0, 4)]"))
    assert finding.message.startswith("gather of 4 positions along axis 1 (of 10) with constant "
                                      "indices 0, 1, 2, 3: a strided range, which the static slice `[:, 0:4]`")
    assert finding.cost.basis == "shapes" and finding.cost.bytes == 3 * 4 * 4 + 4 * 4  # result + indices
    assert f"about {3 * 4 * 4 + 4 * 4} bytes more memory traffic" in finding.message
    assert finding.fix.applicability == "safe"
    assert "indices 1, 4, 7:" in fixed["jnp_arange_step"].message
    assert "indices 7, 8, 9:" in fixed["from_end"].message
