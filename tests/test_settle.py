"""The one settle step (jaxlint/engine/settle.py) and the runner's one finding per place: what
every driver (check, pytest --jaxlint, jaxlint.lint) reports of the findings the rules made."""
from __future__ import annotations

import jax
import jax.numpy as jnp

from jaxlint.analysis.program import program_findings
from jaxlint.config import load_config
from jaxlint.engine.settle import settle
from jaxlint.engine.suppressions import Analyzed
from jaxlint.model import Finding, Span, Target
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
