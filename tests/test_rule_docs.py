"""Every rule page in rules/ is checked against jaxlint itself.

The Example must give exactly that rule's finding, Use instead must be clean, and --fix on the
Example must produce Use instead, byte for byte, when the rule has a safe fix (otherwise --fix
must leave the Example untouched).
"""
from __future__ import annotations

import re
from pathlib import Path

import pytest

from jaxlint.check import CheckResult, check
from jaxlint.rules import all_rules, select_rules

RULES_DIR = Path(__file__).resolve().parents[1] / "rules"
DOCS = sorted(RULES_DIR.glob("JX*.md"))
SECTIONS = ["What it does", "Why is this bad?", "Cost", "Example", "Use instead", "Fix safety", "References"]


def sections(text: str) -> dict[str, str]:
    """Level-2 heading -> the text up to the next level-2 heading."""
    parts = re.split(r"^## (.+)$", text, flags=re.MULTILINE)
    return {title.strip(): body for title, body in zip(parts[1::2], parts[2::2])}


def first_python_block(body: str) -> str:
    match = re.search(r"^```python\n(.*?)^```$", body, flags=re.MULTILINE | re.DOTALL)
    assert match is not None, "no ```python block"
    return match.group(1)


def run(path: Path, fix: bool = False) -> CheckResult:
    return check([str(path)], select_rules(None, None), fix=fix)


def test_rule_pages_exist() -> None:
    assert RULES_DIR / "JX101.md" in DOCS
    codes = {rule.code for rule in all_rules()}
    assert {doc.stem for doc in DOCS} <= codes, "a page for a rule that does not exist"


@pytest.mark.parametrize("doc", DOCS, ids=lambda doc: doc.stem)
def test_sections_in_order(doc: Path) -> None:
    text = doc.read_text(encoding="utf-8")
    [rule] = [r for r in all_rules() if r.code == doc.stem]
    assert text.startswith(f"# {rule.name} ({rule.code})\n")
    # Correctness rules (wrong answers, failures) may leave out Cost; performance rules have it.
    found = list(sections(text))
    assert found in (SECTIONS, [s for s in SECTIONS if s != "Cost"]), found
    if rule.severity == "warning" and rule.code[2] in "13":
        assert "Cost" in found


@pytest.mark.parametrize("doc", DOCS, ids=lambda doc: doc.stem)
def test_example_use_instead_and_fix(doc: Path, tmp_path: Path) -> None:
    code = doc.stem
    parts = sections(doc.read_text(encoding="utf-8"))
    example, use_instead = first_python_block(parts["Example"]), first_python_block(parts["Use instead"])
    prefix = code.lower()

    example_path = tmp_path / f"{prefix}_example.py"
    example_path.write_text(example, encoding="utf-8")
    found = run(example_path)
    [rule] = [r for r in all_rules() if r.code == code]
    # A rule over the IR needs the Example traced; a trace error is reported because it is not.
    assert rule.checks_ir is False or (found.skipped == [] and found.traced > 0)
    assert {f.code for f in found.findings} == {code}, [f.message for f in found.findings]

    use_instead_path = tmp_path / f"{prefix}_use_instead.py"
    use_instead_path.write_text(use_instead, encoding="utf-8")
    clean = run(use_instead_path)
    assert clean.skipped == [] and clean.traced > 0
    assert clean.findings == [], [f.message for f in clean.findings]

    fixed_path = tmp_path / f"{prefix}_fixed.py"
    fixed_path.write_text(example, encoding="utf-8")
    fixed = run(fixed_path, fix=True)
    assert fixed.fix_rejected == [], [f.fix_rejected for f in fixed.fix_rejected]
    has_safe_fix = any(f.fix is not None and f.fix.applicability == "safe" for f in found.findings)
    assert fixed_path.read_text(encoding="utf-8") == (use_instead if has_safe_fix else example)
