"""The rules' metadata without their modules: code, name, summary, severity, fix, options.

A warm re-check (every file's result cached) selects rules, resolves suppression comments and
prints findings, which needs only this; importing the rule modules (with the IR and the fix
builders they pull in) would cost more than the rest of such a run. The metadata is generated
from the rule classes into ``catalog.json`` next to this file:

    python -m jaxlint.rules.catalog

tests/test_registry.py fails when what a rule class declares (``stale_codes``) differs from its
entry, so the catalog cannot go stale unnoticed; an edit that declares nothing new (a comment, a
rule's logic) needs no regeneration.
"""
from __future__ import annotations

import functools
import json
import os
import sys
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any

from jaxlint.model import Applicability, Cost, Finding, Fix, Option, Severity, Span

if TYPE_CHECKING:
    from jaxlint.rules.base import Rule

HERE = os.path.dirname(os.path.abspath(__file__))
CATALOG = os.path.join(HERE, "catalog.json")
# TOML's value types by the name the catalog stores them under.
OPTION_TYPES: dict[str, type] = {"int": int, "float": float, "bool": bool, "str": str}


@dataclass(frozen=True)
class RuleInfo:
    """A rule's metadata, with the attribute names of its ``Rule`` class."""

    code: str
    name: str
    summary: str
    severity: Severity
    fix: Applicability | None = None
    by_pipeline: bool = False
    stabilizing_fix: bool = False
    options: dict[str, Option] = field(default_factory=dict)
    fixes_calls: bool = False

    def finding(self, path: str, span: Span, message: str, fix: Fix | None = None,
                target: str | None = None, *, cost: Cost | None = None) -> Finding:
        """A finding of this rule, as ``Rule.finding`` makes it: for the pipeline's own codes
        (analysis failures, JX800), which the parent reports without the rule modules."""
        return Finding(code=self.code, name=self.name, message=message, severity=self.severity,
                       path=path, span=span, fix=fix, target=target, cost=cost)


def rule_infos() -> tuple[RuleInfo, ...]:
    """Every rule's metadata, sorted by code, read from catalog.json (from the rule classes when
    the file is missing or unreadable: slower, never wrong)."""
    return _loaded()


@functools.lru_cache(maxsize=None)
def _loaded() -> tuple[RuleInfo, ...]:
    try:
        with open(CATALOG, encoding="utf-8") as handle:
            return tuple(_from_json(entry) for entry in json.load(handle)["rules"])
    except (OSError, ValueError, KeyError, TypeError):
        return tuple(info_of(rule) for rule in _rule_classes())


@functools.lru_cache(maxsize=None)
def by_code() -> dict[str, RuleInfo]:
    return {info.code: info for info in rule_infos()}


def rule_info(code: str) -> RuleInfo:
    """One rule's metadata; KeyError for a code no rule has."""
    return by_code()[code]


def info_of(rule: type[Rule]) -> RuleInfo:
    return RuleInfo(rule.code, rule.name, rule.summary, rule.severity, rule.fix, rule.by_pipeline,
                    rule.stabilizing_fix, dict(rule.options), rule.fixes_calls)


def _to_json(info: RuleInfo) -> dict[str, Any]:
    type_names = {kind: name for name, kind in OPTION_TYPES.items()}
    return {"code": info.code, "name": info.name, "summary": info.summary, "severity": info.severity,
            "fix": info.fix, "by_pipeline": info.by_pipeline, "stabilizing_fix": info.stabilizing_fix,
            "fixes_calls": info.fixes_calls,
            "options": [{"name": name, "type": type_names[o.type], "default": o.default,
                         "description": o.description, "minimum": o.minimum} for name, o in info.options.items()]}


def _from_json(entry: dict[str, Any]) -> RuleInfo:
    options = {o["name"]: Option(OPTION_TYPES[o["type"]], o["default"], o["description"], o["minimum"])
               for o in entry["options"]}
    return RuleInfo(entry["code"], entry["name"], entry["summary"], entry["severity"], entry["fix"],
                    entry["by_pipeline"], entry["stabilizing_fix"], options, entry.get("fixes_calls", False))


def generate() -> dict[str, Any]:
    """The catalog as catalog.json holds it, from the rule classes."""
    return {"rules": [_to_json(info_of(rule)) for rule in _rule_classes()]}


def stale_codes() -> list[str]:
    """The codes whose entry in catalog.json is not what their rule class declares (code, name,
    summary, severity, fix, options and the pipeline's flags): a rule changed, added or removed
    since the catalog was generated. [] when it is current; every code when it is unreadable."""
    try:
        with open(CATALOG, encoding="utf-8") as handle:
            stored = {entry["code"]: entry for entry in json.load(handle)["rules"]}
    except (OSError, ValueError, KeyError, TypeError):
        stored = {}
    declared = {entry["code"]: entry for entry in generate()["rules"]}
    return sorted(code for code in stored.keys() | declared.keys() if stored.get(code) != declared.get(code))


def _rule_classes() -> list[type[Rule]]:
    from jaxlint.rules.registry import all_rules  # only to generate the catalog, or without one

    return all_rules()


def main() -> int:
    text = json.dumps(generate(), indent=1) + "\n"
    with open(CATALOG, "w", encoding="utf-8") as handle:
        handle.write(text)
    print(f"wrote {os.path.relpath(CATALOG)}", file=sys.stderr)
    return 0


if __name__ == "__main__":
    sys.exit(main())
