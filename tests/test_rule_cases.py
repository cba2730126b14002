"""Every rule's case, tests/rules/JXnnn.py (or the folder tests/rules/JXnnn/), through the real pipeline.

A case holds the rule's triggers, each line marked ``# expect: JXnnn``, and near misses beside them
that must stay quiet. It is copied into a temporary project and checked in the test process
(helpers.check_case); the findings' (file, code, line) must be the markers', exactly (a line
reported twice by one code names the code twice). Every rule runs, as ``jaxlint check`` runs
them (unless the case's pyproject.toml selects), and every function jaxlint finds in the case is
traced unless a marked failure (JX601, JX901, JX905) says why: a near miss that fails to trace
cannot pass for quiet. tests/rules/README.md has the convention.

Every registered rule has a page (rules/JXnnn.md) and a case, but for the few in EXEMPT, which say why no file can produce their finding in this test.
"""
from __future__ import annotations

from collections import Counter
from pathlib import Path

import pytest
from helpers import CASES, SILENT_SKIPS, case_markers, case_source, checked_case

from jaxlint.rules import all_rules

PAGES = Path(__file__).resolve().parents[1] / "rules"

# Rules no case file can produce here, and why. Keep it short: each entry is reviewed.
EXEMPT = {
    "JX902": "a timeout needs the worker process (the in-process analysis cannot enforce one); "
             "test_failures.py checks it with real workers",
    "JX903": "a crashing worker (os._exit, a segfault) would end the test process; test_failures.py "
             "checks it with real workers",
    "JX906": "only a bug in jaxlint gives it (a rule or stage raising); test_internal_error.py injects one",
    "JX205": "a run-time rule: `jaxlint check` runs no code, so no case can give it; test_jx205.py checks it "
             "on real pytest --jaxlint sessions and a real jaxlint run, test_rule_docs.py its page with jaxlint run",
    "JX310": "its programs need 8 CPU devices, which the test process does not have (forcing them would "
             "change the whole suite); test_jx310.py checks its triggers and near misses, marked the same way, "
             "with `jaxlint check` in a subprocess whose worker gets the devices",
    "JX311": "a TPU target's rule: its cases compile for a TPU v5e with libtpu, which the test process does not "
             "load (and CI's older JAX may lack); test_jx311.py checks tests/data/hbm/steps.py and "
             "tests/data/hbm_sharded/, marked the same way, with `jaxlint check --target tpu-v5e` (and "
             "tpu-v5e:2x4) in a subprocess",
    "JX312": "a TPU target's rule: its cases compile for a TPU v5e with libtpu, which the test process does not "
             "load (and CI's older JAX may lack); test_jx312.py checks tests/data/padding/small_matrices.py and "
             "small_inverses.py, marked the same way, with `jaxlint check --target tpu-v5e` in a subprocess",
    "JX709": "a TPU target's rule: a float32 product is reduced to one bfloat16 pass only in the program compiled "
             "for a TPU v5e with libtpu, which the test process does not load (and CI's older JAX may lack); "
             "test_jx709.py checks tests/data/precision/solves.py, marked the same way, with "
             "`jaxlint check --target tpu-v5e` in a subprocess, and that the CPU target is quiet on it",
    "JX309": "a run-time rule: `jaxlint check` runs no code, so no case can give it; test_jx309.py checks it "
             "on real pytest --jaxlint sessions and a real jaxlint run, test_rule_docs.py its page with jaxlint run",
}

CODES = [rule.code for rule in all_rules()]
CASE_CODES = [code for code in CODES if code not in EXEMPT]


def test_every_rule_has_a_page_and_a_case() -> None:
    assert [code for code in CODES if not (PAGES / f"{code}.md").is_file()] == []
    assert [code for code in CASE_CODES if not case_source(code).exists()] == []
    assert set(EXEMPT) <= set(CODES), "an exemption for a rule that does not exist"
    assert [code for code in EXEMPT if case_source(code).exists()] == [], "a case exists: drop the exemption"
    stems = {path.name.removesuffix(".py") for path in CASES.iterdir() if path.name.startswith("JX")}
    assert stems <= set(CODES), "a case for a rule that does not exist"


@pytest.mark.parametrize("code", CASE_CODES)
def test_case_reports_exactly_the_marked_lines(code: str) -> None:
    markers = case_markers(case_source(code))
    assert any(marker_code == code for _, marker_code, _ in markers), "no trigger: mark one with # expect:"
    root, result = checked_case(code)
    single = not case_source(code).is_dir()
    found = sorted((Path(f.path).name if single else Path(f.path).relative_to(root).as_posix(), f.code,
                    f.span.start_line) for f in result.findings)
    assert Counter(found) == Counter(markers), [(f.code, f.span.start_line, f.message) for f in result.findings]
    # Every target was traced, or a marked finding says why not (JX601, JX901, JX905, ...). A plain
    # function only inference made a target (nothing names it) may fail with every guess: a near
    # miss the source rules read (JX203, JX204) is not meant to be traced.
    inferred_only = {(fa.source.path, t.qualname) for fa in result.files for t in fa.targets if t.kind == "inferred"}
    assert [s for path, s in result.skipped if s.kind in SILENT_SKIPS and (path, s.target) not in inferred_only] == []
    # A near miss: a traced function that gives no finding.
    traced = {(fa.source.path, t.target) for fa in result.files if fa.result is not None for t in fa.result.traced}
    assert traced - {(f.path, f.target) for f in result.findings}, "no quiet near miss was traced"
