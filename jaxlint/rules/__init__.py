"""The rule registry: every module in this package defining Rule subclasses contributes them.

Adding a rule is adding a file here; no other stage changes.
"""
from __future__ import annotations

import functools
import importlib
import pkgutil

from jaxlint.rules.base import ProgramContext, Rule, SourceContext

__all__ = ["ProgramContext", "Rule", "SourceContext", "all_rules", "codes_by_name"]


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


@functools.lru_cache(maxsize=None)
def codes_by_name() -> dict[str, str]:
    """Code and kebab-case name -> code, for every rule (what suppression comments may name)."""
    return {key: rule.code for rule in _registry() for key in (rule.code, rule.name)}
