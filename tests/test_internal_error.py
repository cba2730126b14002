"""A rule that crashes on a jaxpr becomes a JX906 finding; the other rules' findings survive."""
from __future__ import annotations

import jax
import jax.numpy as jnp

from jaxlint.analysis.program import program_findings
from jaxlint.model import Span, Target
from jaxlint.rules.base import ProgramContext, Rule


class CrashingRule(Rule):
    code, name, severity, summary = "JX001", "crashes", "info", "Raises on every jaxpr."

    @classmethod
    def check_program(cls, ctx: ProgramContext):
        raise KeyError("surprising primitive")


class CountingRule(Rule):
    code, name, severity, summary = "JX002", "counts", "info", "Reports the number of ops."

    @classmethod
    def check_program(cls, ctx: ProgramContext):
        ops = sum(1 for _ in ctx.program.walk())
        yield ctx.finding(cls, f"{ops} ops", ctx.target.name_span)


def test_crashing_rule_is_a_finding_not_a_lost_run() -> None:
    span = Span(1, 4, 1, 5)
    target = Target(name="f", qualname="f", kind="jit-decorated", span=span, name_span=span, first_line=1)
    closed = jax.make_jaxpr(lambda x: jnp.sin(x) * 2)(jnp.ones(3))
    findings = program_findings([CountingRule, CrashingRule], {"JX001", "JX002", "JX906"}, "/p/m.py", "", target,
                                closed, "x=f32[3]")
    assert [f.code for f in findings] == ["JX002", "JX906"]
    assert findings[0].message == "2 ops"
    assert "running rule JX001" in findings[1].message and "KeyError" in findings[1].message
    assert findings[1].span == span and findings[1].severity == "error"
    # Deselected, the internal error is dropped, but the other rule's finding stays.
    assert [f.code for f in program_findings([CountingRule, CrashingRule], {"JX001", "JX002"}, "/p/m.py", "",
                                              target, closed, "")] == ["JX002"]
