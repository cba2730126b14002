"""``jaxlint rules`` (the list) and ``jaxlint rule`` (one rule's page, or every one's, as text or
JSON). The pages and their rendering are jaxlint.report.ruledocs's."""
from __future__ import annotations

import argparse
import json
from typing import Any, TextIO


def add_parsers(commands: Any) -> None:
    commands.add_parser("rules", help="list the rules")
    rule = commands.add_parser("rule", help="print a rule's documentation")
    rule.add_argument("rule", nargs="?", help="a code (JX101) or name (vmap-unbatched-output)")
    rule.add_argument("--all", action="store_true", help="every rule's documentation")
    rule.add_argument("--output-format", choices=["text", "json"], default="text")


def list_rules(out: TextIO) -> int:
    """``jaxlint rules``: one line per rule."""
    from jaxlint.rules import all_rules

    for rule in all_rules():
        out.write(f"{rule.code}  {rule.name:<30} {rule.severity:<8} {rule.summary}\n")
    return 0


def run(args: argparse.Namespace, out: TextIO, err: TextIO) -> int:
    """``jaxlint rule``: one rule's doc (or every rule's); 2 for an unknown rule or a bad invocation."""
    from jaxlint.report.ruledocs import UnknownRule, find_rule, rule_json, rule_text, use_color
    from jaxlint.rules import all_rules

    if args.all == (args.rule is not None):
        print("jaxlint rule: give one rule (code or name), or --all", file=err)
        return 2
    try:
        rules = all_rules() if args.all else [find_rule(args.rule)]
    except UnknownRule as error:
        print(f"jaxlint rule: {error}", file=err)
        return 2
    if args.output_format == "json":
        data = [rule_json(r) for r in rules]
        json.dump(data if args.all else data[0], out, indent=2)
        out.write("\n")
        return 0
    color = use_color(out)
    out.write("\n\n".join(rule_text(r, color) for r in rules))
    return 0
