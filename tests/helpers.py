"""Small helpers the rule tests share."""
from __future__ import annotations

import re
from pathlib import Path

from jaxlint.engine.results import CheckResult


def write(folder: Path, name: str, text: str) -> Path:
    """``folder/name.py`` holding ``text``."""
    path = folder / f"{name}.py"
    path.write_text(text, encoding="utf-8")
    return path


def expected_markers(module: str) -> set[tuple[str, int]]:
    """(code, line) of every ``# expect JXnnn`` comment: the findings a check must give, exactly."""
    return {(m.group(1), n) for n, line in enumerate(module.splitlines(), 1)
            for m in [re.search(r"# expect (JX\d+)", line)] if m}


def assert_analyzed(result: CheckResult, functions: int) -> None:
    """Guards the quiet tests: every function was traced, no analysis failure hides a finding."""
    assert result.skipped == []
    assert result.traced == functions
    assert not [f for f in result.findings if f.code.startswith("JX9")]
