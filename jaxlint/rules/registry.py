"""The rule classes: every module in this package defining Rule subclasses contributes them.

Adding a rule is adding a file here (and regenerating the catalog); no other stage changes.
"""
from __future__ import annotations

import functools
import os
from typing import TYPE_CHECKING, Iterable

if TYPE_CHECKING:
    from jaxlint.rules.base import Rule

# Modules of the package that define no rule.
NOT_RULES = ("base", "catalog", "registry", "runner")


def all_rules() -> list[type[Rule]]:
    """Every rule, sorted by code. Importing rule modules must not import JAX."""
    return list(_registry())


def rule_classes(codes: Iterable[str]) -> list[type[Rule]]:
    """The rules of ``codes``, sorted by code."""
    wanted = set(codes)
    return [rule for rule in _registry() if rule.code in wanted]


@functools.lru_cache(maxsize=None)
def _registry() -> tuple[type[Rule], ...]:
    # Walking the package costs ~1 ms; per-file callers (suppressions, per-file-ignores) add up.
    import importlib
    import pkgutil

    from jaxlint.rules.base import Rule

    package = __name__.rpartition(".")[0]
    found: dict[str, type[Rule]] = {}
    for info in pkgutil.iter_modules([os.path.dirname(os.path.abspath(__file__))]):
        if info.name in NOT_RULES:
            continue
        module = importlib.import_module(f"{package}.{info.name}")
        for value in vars(module).values():
            if isinstance(value, type) and issubclass(value, Rule) and value is not Rule \
                    and value.__module__ == module.__name__:
                found[value.code] = value
    return tuple(found[code] for code in sorted(found))
