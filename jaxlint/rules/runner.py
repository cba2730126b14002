"""Running rules over a context: the same in the worker, the parent and ``jaxlint.lint``. A rule
that crashes is a JX906 finding about jaxlint, not a lost run."""
from __future__ import annotations

from typing import Callable, Iterable, Sequence

from jaxlint.model import Finding, Span, Target, one_per_place
from jaxlint.rules.analysis_failures import InternalErrorRule
from jaxlint.rules.base import ProgramContext, Rule, RunContext, SourceContext, checks


def describe_error(error: BaseException) -> str:
    """``Type: first line of the message`` (what findings quote of an exception)."""
    text = str(error).strip().splitlines()
    head = text[0].rstrip(".") if text else ""  # messages append "; ..." after it
    return f"{type(error).__name__}: {head}" if head else type(error).__name__


def run_source_rules(rules: Sequence[type[Rule]], ctx: SourceContext, codes: set[str]) -> list[Finding]:
    """Every ``check_source`` of ``rules`` (those of ``codes``) over one file."""
    chosen = checks([r for r in rules if r.code in codes], "check_source")
    return _run(chosen, lambda rule: rule.check_source(ctx), codes, ctx.path, Span(1, 0, 1, 0), None, "")


def run_program_rules(rules: Sequence[type[Rule]], ctx: ProgramContext, codes: set[str]) -> list[Finding]:
    """Every ``check_program`` of ``rules`` (those of ``codes``) over one traced signature."""
    chosen = checks([r for r in rules if r.code in codes and (ctx.in_target_file or r.reads_helpers)],
                    "check_program")
    return _run(chosen, lambda rule: rule.check_program(ctx), codes, ctx.target_path or ctx.path,
                ctx.target.name_span, ctx.target, f" for {ctx.target.qualname}")


def run_run_rules(rules: Sequence[type[Rule]], ctx: RunContext, codes: set[str]) -> list[Finding]:
    """Every ``check_run`` of ``rules`` (those of ``codes``) over one scope of a run; a rule that
    raises is reported at the first line of the first file where the scope made a call."""
    chosen = checks([r for r in rules if r.code in codes], "check_run")
    places = [c.place for c in ctx.events.compiles] + [s.place for s in ctx.events.syncs]
    place = next((p for p in places if p is not None), None)
    if not chosen or place is None:
        return []
    return _run(chosen, lambda rule: rule.check_run(ctx), codes, place.path, Span(1, 0, 1, 0), None,
                f" over {ctx.events.scope}")


def internal_error(codes: set[str], path: str, span: Span, target: Target | None, what: str,
                   error: BaseException) -> list[Finding]:
    """The JX906 finding for jaxlint failing while doing ``what`` ("building the IR for f")."""
    if InternalErrorRule.code not in codes:
        return []
    return [InternalErrorRule.finding(path, span, f"jaxlint failed while {what}: {describe_error(error)} "
                                      "(a bug in jaxlint; please report it)",
                                      target=target.qualname if target is not None else None)]


def _run(rules: list[type[Rule]], check: Callable[[type[Rule]], Iterable[Finding]], codes: set[str],
         path: str, span: Span, target: Target | None, where: str) -> list[Finding]:
    """The rules' findings, one per place (``one_per_place``): a rule may meet the same source
    line through several operations (a helper called twice, a loop body) and need not remember it."""
    findings: list[Finding] = []
    for rule in rules:
        try:
            for finding in check(rule):  # those a rule made before it raised are kept
                findings.append(finding)
        except Exception as error:
            findings += internal_error(codes, path, span, target, f"running rule {rule.code}{where}", error)
    return one_per_place(findings)
