"""The one settle step (jaxlint/engine/settle.py) and the runner's one finding per place: what
every driver (check, pytest --jaxlint, jaxlint.lint) reports of the findings the rules made."""
from __future__ import annotations

import dataclasses

import jax
import jax.numpy as jnp
from helpers import check_in_process

from jaxlint.analysis.program import program_findings
from jaxlint.config import Config, load_config
from jaxlint.config.selection import select_rules
from jaxlint.drivers.results import Linted, settled
from jaxlint.engine.settle import settle
from jaxlint.engine.suppressions import Analyzed
from jaxlint.model import Edit, Finding, Fix, Span, Target, one_per_place
from jaxlint.rules.base import ProgramContext, Rule

SPAN = Span(1, 4, 1, 5)
TARGET = Target(name="f", qualname="f", kind="jit-decorated", span=SPAN, name_span=SPAN, first_line=1)


class EveryOpRule(Rule):
    """Reports the target's name once per operation: the same place again and again."""

    code, name, severity, summary = "JX003", "every-op", "info", "One finding per operation."

    @classmethod
    def check_program(cls, ctx: ProgramContext):
        for number, _ in enumerate(ctx.program.walk()):
            yield ctx.finding(cls, f"op {number}", ctx.target.name_span)


def test_the_runner_keeps_the_first_finding_at_each_place() -> None:
    closed = jax.make_jaxpr(lambda x: jnp.sin(x) * 2)(jnp.ones(3))
    [finding] = program_findings([EveryOpRule], {"JX003"}, "/p/m.py", "", TARGET, closed, "x=f32[3]")
    assert finding.message == "op 0"


SOURCE = """import jax

x = 1  # noqa: JX201
y = 2  # noqa: JX301
"""


def _finding(code: str, line: int, message: str = "m", path: str = "/p/m.py") -> Finding:
    return Finding(code, code.lower(), message, "warning", path, Span(line, 0, line, 1))


def test_settle_keeps_one_per_place_and_applies_suppressions() -> None:
    raw = [_finding("JX201", 3), _finding("JX202", 3, "first"), _finding("JX202", 3, "second"),
           _finding("JX202", 4)]
    kept = settle("/p/m.py", SOURCE, raw, ["JX201", "JX202", "JX301", "JX800"], None)
    assert [(f.code, f.span.start_line, f.message) for f in kept] == [("JX202", 3, "first"), ("JX202", 4, "m")]
    # JX800 speaks only where the rules ran (check's traces say where); line 4's JX301 suppressed nothing.
    ran = Analyzed(lines={3, 4}, spans=[(1, 4)])
    unused = [f for f in settle("/p/m.py", SOURCE, raw, ["JX201", "JX202", "JX301", "JX800"], None, ran)
              if f.code == "JX800"]
    assert [(f.span.start_line, "JX301" in f.message) for f in unused] == [(4, True)]
    # --ignore-noqa: every finding, one per place.
    assert len(settle("/p/m.py", SOURCE, raw, ["JX201", "JX202"], None, ignore_noqa=True)) == 3


def test_settle_applies_the_files_per_file_ignores(tmp_path) -> None:
    (tmp_path / "jaxlint.toml").write_text('[per-file-ignores]\n"gen_*.py" = ["JX202"]\n')
    config = load_config([str(tmp_path)])
    ignored, kept = str(tmp_path / "gen_a.py"), str(tmp_path / "a.py")
    raw = [_finding("JX202", 1, path=ignored), _finding("JX201", 2, path=ignored)]
    assert [f.code for f in settle(ignored, "", raw, ["JX201", "JX202"], config)] == ["JX201"]
    raw = [_finding("JX202", 1, path=kept)]
    assert [f.code for f in settle(kept, "", raw, ["JX201", "JX202"], config)] == ["JX202"]


TWO_SIGNATURES = '''import jax
import jax.numpy as jnp


def blackbox_function(x, y):
    x = x + 1
    y = x * y
    return x, y


@jax.jit
def mapped(x, y):
    x, y = jax.vmap(blackbox_function, in_axes=(None, 0))(x, y)
    return x[0], y
'''

EXAMPLES = '''import jax.numpy as jnp
import jaxlint
from two import mapped

jaxlint.example(mapped, 1.0, jnp.ones(10))
jaxlint.example(mapped, 1.0, jnp.ones(7))
'''


def test_the_worker_hands_every_signature_s_finding_to_settle_which_reports_the_first(tmp_path) -> None:
    """One place, two signatures (batches of 10 and 7): the worker's result holds both findings,
    check reports the first signature's, once."""
    path = tmp_path / "two.py"
    path.write_text(TWO_SIGNATURES)
    (tmp_path / "examples.py").write_text(EXAMPLES)
    (tmp_path / "pyproject.toml").write_text('[tool.jaxlint]\nexamples = ["examples.py"]\n')
    result = check_in_process([str(path)], select_rules(["JX101"], None))
    [analysis] = result.files
    raw = [f.message for f in analysis.result.findings]
    assert len(raw) == 2 and "(10 copies)" in raw[0] and "(7 copies)" in raw[1]
    [reported] = result.findings
    assert "(10 copies)" in reported.message


def test_one_per_place_prefers_real_arguments_and_otherwise_the_first() -> None:
    """The one writing of the rule (model.one_per_place), which settle, the store, the runner and
    the fixer's carried findings call."""
    guessed = dataclasses.replace(_finding("JX202", 3, "guessed"), arguments="inferred")
    real, later = _finding("JX202", 3, "real"), _finding("JX202", 3, "later")
    other = _finding("JX201", 3)
    assert [f.message for f in one_per_place([guessed, other, real, later])] == ["real", "m"]
    assert [f.message for f in one_per_place([real, guessed])] == ["real"]


NESTED = '''def outer(x):
    def inner(y):
        return y + 1
    return inner(x)


def helper(x):
    return x + 1
'''


def _safe(path: str, line: int, target: str | None = None) -> Finding:
    edit = Edit(Span(line, 4, line, 5), "y")
    return dataclasses.replace(_finding("JX203", line, path=path), span=Span(line, 4, line, 5), target=target,
                               fix=Fix("safe", "use y", (edit,)))


def test_a_watched_run_demotes_by_the_rule_check_demotes_by(tmp_path) -> None:
    """One rule for every driver (values.running): the fix is run by the finding's own traced
    target, else by the innermost traced function around it; only code none of them runs loses
    its safe fix. `outer` is the only function the run traced."""
    path = tmp_path / "m.py"
    path.write_text(NESTED)
    findings = [_safe(str(path), 3), _safe(str(path), 8, target="outer"), _safe(str(path), 7)]
    result = settled(findings, ["JX203"], Config(root=str(tmp_path)), [Linted(str(path), "outer", 1, signatures=1)])
    fixes = {f.span.start_line: f.fix for f in result.findings}
    assert {line: fix.applicability for line, fix in fixes.items()} == {3: "safe", 8: "safe", 7: "unsafe"}
    assert "no traced function runs this code" in fixes[7].message
