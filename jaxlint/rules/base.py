"""What a rule is: metadata next to a check over the IR (Fixit's shape, ruff's fields)."""
from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any, ClassVar, Iterable

from jaxlint.model import Applicability, Finding, Fix, Severity, Span, Target


@dataclass
class RuleContext:
    """What a rule sees for one traced target."""

    path: str
    source: str
    target: Target
    program: Any  # jaxlint.ir.build.Program
    signature: str  # the abstract arguments, e.g. "x=i32[] (weak), y=i32[10]"
    vmap_records: dict[str, Any]  # marker tag -> jaxlint.worker.instrument.VmapRecord
    # code -> option name -> value, from the configuration (``[tool.jaxlint.rules.JX202]``)
    options: dict[str, dict[str, Any]] = field(default_factory=dict)
    # The run's configuration as the worker got it (``Config.for_job()``: root, signatures, ...);
    # empty outside a ``jaxlint check`` run (jaxlint.api), where a rule finds what it needs itself.
    config: dict[str, Any] = field(default_factory=dict)

    def option(self, rule: type[Rule], name: str) -> Any:
        """The configured value of one of ``rule``'s declared options, else its default."""
        return self.options.get(rule.code, {}).get(name, rule.options[name].default)

    def finding(self, rule: type[Rule], message: str, span: Span, fix: Fix | None = None) -> Finding:
        return rule.finding(self.path, span, message, fix, self.target.qualname)


@dataclass(frozen=True)
class Option:
    """A rule option users set in ``[tool.jaxlint.rules.<CODE>]``, e.g. ``min-equations = 200``."""

    type: type  # int, float, bool or str; an int is accepted where a float is expected
    default: Any
    description: str  # one line, shown by --show-settings and in errors
    minimum: float | None = None  # numbers only


class Rule:
    code: ClassVar[str]
    name: ClassVar[str]  # kebab-case
    summary: ClassVar[str]
    severity: ClassVar[Severity]
    # The applicability of the fixes the rule offers (None: it offers none); docs and JSON show it.
    fix: ClassVar[Applicability | None] = None
    # Analysis-failure codes (JX9xx) are reported by the pipeline itself and have no check.
    checks_ir: ClassVar[bool] = True
    # Kebab-case option name -> declaration; read them with ``ctx.option(cls, name)``.
    options: ClassVar[dict[str, Option]] = {}

    @classmethod
    def finding(cls, path: str, span: Span, message: str, fix: Fix | None = None,
                target: str | None = None) -> Finding:
        """A finding of this rule: the one place a Finding is made (code, name and severity are the
        rule's). ``target``: the qualname of the traced function it came from, if any."""
        return Finding(code=cls.code, name=cls.name, message=message, severity=cls.severity,
                       path=path, span=span, fix=fix, target=target)

    @classmethod
    def check(cls, ctx: RuleContext) -> Iterable[Finding]:
        return ()

    @classmethod
    def explain(cls, path: str, source: str, target: Target | None, error: BaseException,
                span: Span) -> list[Finding]:
        """Findings that explain an import or trace failure raised at ``span`` better than the
        generic JX601/JX901 finding (which is then dropped); [] when this rule cannot."""
        return []
