"""What a rule is: metadata next to a check over the IR (Fixit's shape, ruff's fields)."""
from __future__ import annotations

from dataclasses import dataclass
from typing import Any, ClassVar, Iterable

from jaxlint.model import Finding, Fix, Severity, Span, Target


@dataclass
class RuleContext:
    """What a rule sees for one traced target."""

    path: str
    source: str
    target: Target
    program: Any  # jaxlint.ir.Program
    signature: str  # the abstract arguments, e.g. "x=i32[] (weak), y=i32[10]"
    vmap_records: dict[str, Any]  # marker tag -> jaxlint.record.VmapRecord

    def finding(self, rule: type[Rule], message: str, span: Span, fix: Fix | None = None) -> Finding:
        return Finding(code=rule.code, name=rule.name, message=message, severity=rule.severity,
                       path=self.path, span=span, fix=fix, target=self.target.qualname)


class Rule:
    code: ClassVar[str]
    name: ClassVar[str]  # kebab-case
    summary: ClassVar[str]
    severity: ClassVar[Severity]
    # Analysis-failure codes (JX9xx) are reported by the pipeline itself and have no check.
    checks_ir: ClassVar[bool] = True

    @classmethod
    def check(cls, ctx: RuleContext) -> Iterable[Finding]:
        return ()

    @classmethod
    def explain(cls, path: str, source: str, target: Target | None, error: BaseException,
                span: Span) -> list[Finding]:
        """Findings that explain an import or trace failure raised at ``span`` better than the
        generic JX601/JX901 finding (which is then dropped); [] when this rule cannot."""
        return []
