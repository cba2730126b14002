"""The rules' metadata without their modules: code, name, summary, severity, fix, options.

A warm re-check (every file's result cached) selects rules, resolves suppression comments and
prints findings, which needs only this; importing the rule modules (with the IR and the fix
builders they pull in) would cost more than the rest of such a run. The metadata is generated
from the rule classes into ``catalog.json`` next to this file:

    python -m jaxlint.rules.catalog

tests/test_registry.py fails when the sha256 of the rule sources differs from the one the
catalog was generated from, so it cannot go stale unnoticed.
"""
from __future__ import annotations

import functools
import hashlib
import json
import os
import sys
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any

from jaxlint.model import Applicability, Finding, Fix, Option, Severity, Span

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
                target: str | None = None) -> Finding:
        """A finding of this rule, as ``Rule.finding`` makes it: for the pipeline's own codes
        (analysis failures, JX800), which the parent reports without the rule modules."""
        return Finding(code=self.code, name=self.name, message=message, severity=self.severity,
                       path=path, span=span, fix=fix, target=target)


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


def sources_digest() -> str:
    """sha256 of the rule package's Python sources (this module's aside), by relative path."""
    digest = hashlib.sha256()
    for folder, dirs, files in os.walk(HERE):
        dirs[:] = sorted(d for d in dirs if d != "__pycache__")
        for name in sorted(files):
            path = os.path.join(folder, name)
            relative = os.path.relpath(path, HERE).replace(os.sep, "/")
            if name.endswith(".py") and relative != "catalog.py":
                with open(path, "rb") as handle:
                    digest.update(relative.encode() + b"\0" + handle.read())
    return digest.hexdigest()


def generate() -> dict[str, Any]:
    """The catalog as catalog.json holds it, from the rule classes."""
    return {"sources": sources_digest(), "rules": [_to_json(info_of(rule)) for rule in _rule_classes()]}


def stored_digest() -> str | None:
    """The rule sources' sha256 catalog.json was generated from (None: no readable catalog)."""
    try:
        with open(CATALOG, encoding="utf-8") as handle:
            return json.load(handle).get("sources")
    except (OSError, ValueError, AttributeError):
        return None


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
