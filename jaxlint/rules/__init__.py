"""The rule registry: every module in this package defining Rule subclasses contributes them.

Adding a rule is adding a file here; no other stage changes.
"""
from __future__ import annotations

import functools
import importlib
import pkgutil

from jaxlint.rules.base import Rule, RuleContext

__all__ = ["Rule", "RuleContext", "all_rules", "select_rules"]


def all_rules() -> list[type[Rule]]:
    """Every rule, sorted by code. Importing rule modules must not import JAX."""
    return list(_registry())


@functools.lru_cache(maxsize=None)
def _registry() -> tuple[type[Rule], ...]:
    # Walking the package costs ~1 ms; per-file callers (suppressions, per-file-ignores) add up.
    found: dict[str, type[Rule]] = {}
    for info in pkgutil.iter_modules(__path__):
        if info.name == "base":
            continue
        module = importlib.import_module(f"{__name__}.{info.name}")
        for value in vars(module).values():
            if isinstance(value, type) and issubclass(value, Rule) and value is not Rule \
                    and value.__module__ == module.__name__:
                found[value.code] = value
    return tuple(found[code] for code in sorted(found))


def _matches(rule: type[Rule], selector: str) -> bool:
    return rule.code.startswith(selector.upper()) or rule.name == selector or selector.upper() == "ALL"


def select_rules(select: list[str] | None, ignore: list[str] | None) -> list[type[Rule]]:
    """Rules chosen by codes, code prefixes (``JX1``) and names; unknown selectors raise ValueError."""
    rules = all_rules()
    for selector in (select or []) + (ignore or []):
        if not any(_matches(rule, selector) for rule in rules):
            raise ValueError(f"unknown rule selector {selector!r}")
    chosen = [r for r in rules if not select or any(_matches(r, s) for s in select)]
    return [r for r in chosen if not any(_matches(r, s) for s in ignore or [])]
