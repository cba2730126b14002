"""The rule registry: every module in this package defining Rule subclasses contributes them.

Adding a rule is adding a file here (and regenerating the catalog: ``python -m
jaxlint.rules.catalog``); no other stage changes. What only needs the rules' metadata (codes and
names for selection and suppression comments) reads the catalog and imports no rule module.
"""
from __future__ import annotations

import functools
import importlib
import pkgutil
from typing import TYPE_CHECKING, Any

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


def all_rules() -> list[type[Rule]]:
    """Every rule, sorted by code. Importing rule modules must not import JAX."""
    return list(_registry())


def rule_classes(codes: Any) -> list[type[Rule]]:
    """The rules of ``codes`` (any collection of codes), sorted by code."""
    wanted = set(codes)
    return [rule for rule in _registry() if rule.code in wanted]


@functools.lru_cache(maxsize=None)
def _registry() -> tuple[type[Rule], ...]:
    # Walking the package costs ~1 ms; per-file callers (suppressions, per-file-ignores) add up.
    from jaxlint.rules.base import Rule

    found: dict[str, type[Rule]] = {}
    for info in pkgutil.iter_modules(__path__):
        if info.name in ("base", "catalog"):
            continue
        module = importlib.import_module(f"{__name__}.{info.name}")
        for value in vars(module).values():
            if isinstance(value, type) and issubclass(value, Rule) and value is not Rule \
                    and value.__module__ == module.__name__:
                found[value.code] = value
    return tuple(found[code] for code in sorted(found))


@functools.lru_cache(maxsize=None)
def codes_by_name() -> dict[str, str]:
    """Code and kebab-case name -> code, for every rule (what suppression comments may name)."""
    from jaxlint.rules.catalog import rule_infos

    return {key: rule.code for rule in rule_infos() for key in (rule.code, rule.name)}
