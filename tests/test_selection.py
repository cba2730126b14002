"""One rule selector: the Python API (``jaxlint.lint_with``) chooses the rules ``jaxlint check
--select/--ignore`` chooses (jaxlint.config.selection, ruff's semantics: the more specific
selector wins, an ignore winning over a select as specific)."""
from __future__ import annotations

import os
import re
import subprocess
import sys
from pathlib import Path

import pytest

import jaxlint
from jaxlint.api import Linter
from jaxlint.cli.main import build_parser, main
from jaxlint.config import flags
from jaxlint.config.selection import select_rules
from jaxlint.rules import all_rules

ALL = {r.code for r in all_rules()}

# (select, ignore): None leaves the flag out; [] is `--select ""` (nothing selected).
CASES = [
    (None, None),
    (["JX101"], ["JX1"]),  # the code is more specific than the prefix: JX101 stays
    (["JX1"], ["JX101"]),
    (["ALL"], ["JX9"]),
    (["all"], None),
    (["JX101"], ["ALL"]),
    (["JX10"], ["JX1"]),
    (["JX1"], ["JX10"]),
    (["JX1"], ["JX1"]),  # as specific: the ignore wins
    (["vmap-unbatched-output"], None),
    (None, ["vmap-unbatched-output"]),
    (["vmap-unbatched-output"], ["JX101"]),
    (["JX1"], ["vmap-unbatched-output"]),
    (["jx2"], ["python-loop-unrolled"]),
    (["JX1", "trace-error"], ["JX102"]),
    (["JX6", "JX9"], ["JX90"]),
    (None, ["JX9"]),
    ([], None),
    ([], ["JX1"]),
]


def _id(case: tuple[list[str] | None, list[str] | None]) -> str:
    return " ".join(f"{flag}={','.join(value)}" for flag, value in zip(("select", "ignore"), case)
                    if value is not None) or "defaults"


def _cli_flags(select: list[str] | None, ignore: list[str] | None) -> list[str]:
    argv = []
    if select is not None:
        argv += ["--select", ",".join(select)]
    if ignore is not None:
        argv += ["--ignore", ",".join(ignore)]
    return argv


def cli_codes(select: list[str] | None, ignore: list[str] | None) -> list[str]:
    """The rules `jaxlint check --isolated --select ... --ignore ...` runs (cli.main's path)."""
    args = build_parser().parse_args(["check", "--isolated", *_cli_flags(select, ignore)])
    return [r.code for r in flags.resolve(args).rules()]


def api_codes(select: str | list[str] | None, ignore: str | list[str] | None) -> list[str]:
    return [r.code for r in jaxlint.lint_with(select=select, ignore=ignore).rules()]


@pytest.mark.parametrize("case", CASES, ids=[_id(c) for c in CASES])
def test_api_and_cli_choose_the_same_rules(case, tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.chdir(tmp_path)  # no configuration file around, even without --isolated
    select, ignore = case
    assert api_codes(select, ignore) == cli_codes(select, ignore) == [r.code for r in select_rules(select, ignore)]


def test_comma_separated_strings_select_as_lists() -> None:
    as_lists = api_codes(["JX101", "JX2"], ["JX1", "python-loop-unrolled"])
    assert api_codes("JX101, JX2", "JX1,python-loop-unrolled") == as_lists


def test_the_more_specific_selector_wins() -> None:
    def codes(select: list[str] | None, ignore: list[str] | None) -> set[str]:
        return set(api_codes(select, ignore))

    assert codes(["JX101"], ["JX1"]) == {"JX101"}
    assert codes(["JX1"], ["JX101"]) == {c for c in ALL if c.startswith("JX1")} - {"JX101"}
    assert codes(["JX101"], ["ALL"]) == {"JX101"}
    assert codes(["ALL"], ["JX9"]) == {c for c in ALL if not c.startswith("JX9")}
    assert codes(["vmap-unbatched-output"], ["JX101"]) == set()  # as specific: the ignore wins
    assert codes(None, None) == ALL
    assert codes([], None) == set()  # ruff: `select = []` selects nothing


def test_lint_runs_the_chosen_rules() -> None:
    assert jaxlint.lint_with(select="JX101", ignore="JX1").rules() == select_rules(["JX101"], [])
    assert Linter().rules() == all_rules()


@pytest.mark.parametrize("select, ignore, bad", [
    (["JX0"], None, "JX0"),
    (None, ["vmap-unbatched"], "vmap-unbatched"),
    (["JX1", "no-such-rule"], ["JX101"], "no-such-rule"),
])
def test_unknown_selector_is_a_value_error_in_the_api_and_a_usage_error_in_the_cli(
        select, ignore, bad, tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture) -> None:
    with pytest.raises(ValueError, match=re.escape(f"unknown rule selector `{bad}`")) as raised:
        jaxlint.lint_with(select=select, ignore=ignore)
    with pytest.raises(ValueError, match=re.escape(f"unknown rule selector `{bad}`")):
        select_rules(select, ignore)
    monkeypatch.chdir(tmp_path)
    capsys.readouterr()
    assert main(["check", "--isolated", *_cli_flags(select, ignore), "."]) == 2
    captured = capsys.readouterr()
    assert str(raised.value) in captured.err  # the same message, did-you-mean included
    assert "Traceback" not in captured.err and captured.out == ""


@pytest.mark.parametrize("typed, suggested", [
    ("JX999", "JX709"),  # the nearest rule a user selects, not JX906 (internal-error)
    ("JX99", "JX709"),
    ("JX9O1", "JX901"),  # one typo off a pipeline code: that code
    ("jx910", "JX901"),
    ("JX90", None),  # a prefix that selects the pipeline's codes: no error at all
    ("JX1O1", "JX101"),
])
def test_unknown_code_suggests_a_rule_a_user_selects(typed: str, suggested: str | None,
                                                     capsys: pytest.CaptureFixture) -> None:
    if suggested is None:
        select_rules([typed], None)
        return
    with pytest.raises(ValueError) as raised:
        select_rules([typed], None)
    assert str(raised.value) == f"unknown rule selector `{typed}`; did you mean `{suggested}`?"
    assert main(["check", "--isolated", "--select", typed, "missing_on_purpose.py"]) == 2
    assert f"did you mean `{suggested}`?" in capsys.readouterr().err


def test_no_unknown_code_is_told_of_a_pipeline_code_it_is_no_typo_of() -> None:
    """JX9xx (analysis failures, internal errors) only for a code one typo away from one."""
    pipeline = {code for code in ALL if code.startswith("JX9")}
    for number in range(1000):
        typed = f"JX{number:03d}"
        if typed in ALL:
            continue
        with pytest.raises(ValueError) as raised:
            select_rules([typed], None)
        suggested = re.findall(r"`(JX\d+)`\?$", str(raised.value))
        # One digit replaced, or the last two swapped (JX910 for JX901).
        near = {code for code in pipeline if sum(a != b for a, b in zip(typed, code)) == 1
                or typed[:3] + typed[4] + typed[3] == code}
        assert not set(suggested) & (pipeline - near), (typed, suggested)


def test_show_settings_lists_the_rules_the_api_chooses(tmp_path: Path) -> None:
    env = {k: v for k, v in os.environ.items() if not k.startswith("JAXLINT_")}
    run = subprocess.run([sys.executable, "-m", "jaxlint", "check", "--isolated", "--select", "JX101,JX9",
                          "--ignore", "JX1,JX90", "--show-settings"], cwd=tmp_path, capture_output=True,
                         text=True, timeout=300, env=env)
    assert run.returncode == 0, run.stderr
    [line] = [line for line in run.stdout.splitlines() if line.startswith("# enabled rules")]
    expected = api_codes(["JX101", "JX9"], ["JX1", "JX90"])
    assert line == f"# enabled rules ({len(expected)}): {', '.join(expected)}"
