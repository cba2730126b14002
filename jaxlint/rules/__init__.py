"""The rules: their classes (``all_rules``, from the registry walking this package) and their
metadata (``rule_infos``, from the catalog, which imports no rule module).

Adding a rule is adding a file here and regenerating the catalog (``python -m
jaxlint.rules.catalog``); no other stage changes. What only needs the rules' metadata (codes and
names for selection and suppression comments) reads the catalog.
"""
from __future__ import annotations

import functools
from typing import TYPE_CHECKING, Any

from jaxlint.rules.registry import all_rules, rule_classes

if TYPE_CHECKING:
    from jaxlint.rules.base import ProgramContext, Rule, SourceContext
    from jaxlint.rules.catalog import RuleInfo, rule_infos

__all__ = ["ProgramContext", "Rule", "RuleInfo", "SourceContext", "all_rules", "codes_by_name", "rule_classes",
           "rule_infos"]

_FROM_BASE = ("ProgramContext", "Rule", "SourceContext")
_FROM_CATALOG = ("RuleInfo", "rule_infos")


def __getattr__(name: str) -> Any:
    # The classes live in base, which imports the IR: only what runs rules pays for it. The
    # catalog is not imported with the package either, so that `python -m jaxlint.rules.catalog`
    # runs it once.
    if name in _FROM_BASE:
        from jaxlint.rules import base

        return getattr(base, name)
    if name in _FROM_CATALOG:
        from jaxlint.rules import catalog

        return getattr(catalog, name)
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")


@functools.lru_cache(maxsize=None)
def codes_by_name() -> dict[str, str]:
    """Code and kebab-case name -> code, for every rule (what suppression comments may name)."""
    from jaxlint.rules.catalog import rule_infos

    return {key: rule.code for rule in rule_infos() for key in (rule.code, rule.name)}
