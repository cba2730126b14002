"""JX303 constant-index-gather: its fixes (written by the real worker) and messages, on its case (tests/rules/JX303.py, whose
marked lines test_rule_cases.py checks)."""
from __future__ import annotations

from pathlib import Path

import pytest
from helpers import case_rules, case_source, checked_case, copy_case

from jaxlint.engine.check import check
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


def by_target(findings: list[Finding]) -> dict[str, Finding]:
    found: dict[str, Finding] = {}
    for finding in findings:
        assert finding.target not in found, f"two findings for {finding.target}"
        found[finding.target] = finding
    return found


def position(text: str, snippet: str) -> tuple[int, int]:
    index = text.index(snippet)
    return text.count("\n", 0, index) + 1, index - (text.rfind("\n", 0, index) + 1)


@pytest.fixture(scope="module")
def fixed_case(tmp_path_factory: pytest.TempPathFactory) -> tuple[Path, CheckResult]:
    """The case checked with --fix by the real worker (the fixes are written and verified in a fresh
    worker: the rule's fixes go through the process boundary here)."""
    root = copy_case(CODE, tmp_path_factory.mktemp(CODE))
    return root, check([str(root)], case_rules(root), fix=True)


@pytest.fixture(scope="module")
def fixed(fixed_case: tuple[Path, CheckResult]) -> dict[str, Finding]:
    return by_target(fixed_case[1].fixed)


def test_every_fixable_trigger_is_fixed(fixed_case, fixed) -> None:
    _, result = fixed_case
    assert set(fixed) == set(FIXED) and all(f.code == CODE for f in fixed.values())
    assert result.fix_rejected == []
    # Analyzed again after the fix: what is left are the findings without a fix.
    assert sorted(f.target for f in result.findings) == sorted(FIXLESS)
    assert all(f.fix is None for f in result.findings)


def test_fixed_file_text(fixed_case) -> None:
    root, _ = fixed_case
    expected = CASE
    for before, after in FIXED.values():
        assert f"    return {before}  # expect: {CODE}\n" in expected, before
        expected = expected.replace(f"    return {before}  #", f"    return {after}  #")
    assert (root / f"{CODE}.py").read_text(encoding="utf-8") == expected


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
