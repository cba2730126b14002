"""Rule documentation: the pages and their JSON and terminal text (which `jaxlint rule`,
jaxlint/cli/rule.py, prints).

The pages are edited in rules/JXnnn.md; jaxlint/docs is a symlink to that folder, and the build
copies the pages into the package, so they are read from the installed package wherever jaxlint
runs. Every rule has a page, the analysis failures (JX9xx) too; tests/test_rule_cases.py checks
it. No document lists the rules by hand: ``jaxlint rules`` prints them from the registry.
"""
from __future__ import annotations

import difflib
import json
import os
import re
from importlib import resources
from typing import TYPE_CHECKING, Any, TextIO

from jaxlint.rules import RuleInfo, rule_infos

if TYPE_CHECKING:
    from jaxlint.rules import Rule

FIX_WORDS = {"safe": "safe (`--fix` applies it)",
             "unsafe": "unsafe (`--fix --unsafe-fixes` applies it)",
             "display-only": "display-only (shown, never applied)",
             None: "none"}


class UnknownRule(ValueError):
    """A rule query that names no rule; the message suggests the closest ones."""


def doc_text(rule: RuleInfo | type[Rule]) -> str:
    """The rule's page (Markdown), as shipped in the package."""
    page = resources.files("jaxlint").joinpath("docs", f"{rule.code}.md")
    return page.read_text(encoding="utf-8")


def find_rule(query: str) -> RuleInfo | type[Rule]:
    """A rule by code (any case) or kebab-case name; UnknownRule says what is close."""
    rules = rule_infos()
    for rule in rules:
        if query.upper() == rule.code or query.lower() == rule.name:
            return rule
    prefixed = [r.code for r in rules if r.code.startswith(query.upper())] if query.strip() else []
    if prefixed:
        raise UnknownRule(f"{query!r} is a prefix of {', '.join(prefixed)}: name one rule")
    from jaxlint.config.selection import suggestable  # only the error needs it

    by_key = {r.code.lower(): r for r in rules if suggestable(query, r.code)} | {r.name: r for r in rules}
    close = difflib.get_close_matches(query.lower(), list(by_key), n=3, cutoff=0.6)
    suggestion = ", ".join(dict.fromkeys(f"{by_key[k].code} ({by_key[k].name})" for k in close))
    hint = f"; did you mean {suggestion}?" if suggestion else "; `jaxlint rules` lists them"
    raise UnknownRule(f"unknown rule {query!r}{hint}")


def rule_json(rule: RuleInfo | type[Rule]) -> dict[str, Any]:
    return {"code": rule.code, "name": rule.name, "summary": rule.summary, "severity": rule.severity,
            "fix": rule.fix, "options": options_json(rule), "doc": doc_text(rule)}


# --- rule options (``[tool.jaxlint.rules.JX202]``) --------------------------------------------------

# TOML's names for the value types an option can have.
TOML_TYPES = {int: "integer", float: "float", bool: "boolean", str: "string"}


def options_json(rule: RuleInfo | type[Rule]) -> list[dict[str, Any]]:
    """The rule's options in declaration order (``minimum``: null when unbounded)."""
    return [{"name": name, "type": TOML_TYPES[option.type], "default": option.default,
             "description": option.description, "minimum": option.minimum}
            for name, option in rule.options.items()]


def toml_value(value: Any) -> str:
    """A default as TOML spells it (``100000.0``, ``true``, ``"x"``)."""
    if isinstance(value, bool):
        return "true" if value else "false"
    return json.dumps(value) if isinstance(value, str) else repr(value)


def options_intro(rule: RuleInfo | type[Rule]) -> str:
    return (f"Set in `pyproject.toml` under `[tool.jaxlint.rules.{rule.code}]` (or "
            f"`[tool.jaxlint.rules.{rule.name}]`), in a `jaxlint.toml` or `.jaxlint.toml` under "
            f"`[rules.{rule.code}]`. `jaxlint check --show-settings` prints the values in effect.")


def option_markdown(rule: RuleInfo | type[Rule], name: str) -> str:
    """One option's entry on the rule's page: a heading, its facts and the TOML that sets it to
    its default. tests/test_rule_docs.py checks every page holds its rule's entries verbatim."""
    option = rule.options[name]
    kind = TOML_TYPES[option.type] + (" (an integer is accepted)" if option.type is float else "")
    minimum = f" Minimum: {option.minimum:g}." if option.minimum is not None else ""
    facts = f"Type: {kind}. Default: `{toml_value(option.default)}`.{minimum} {option.description[:1].upper()}" \
            f"{option.description[1:]}."
    return (f"### `{name}`\n\n{facts}\n\n```toml\n[tool.jaxlint.rules.{rule.code}]\n"
            f"{name} = {toml_value(option.default)}\n```")


# --- rendering for a terminal -------------------------------------------------------------------

_BOLD, _UNDERLINE, _CYAN, _RESET = "\x1b[1m", "\x1b[4m", "\x1b[36m", "\x1b[0m"
_LINK = re.compile(r"\[([^\]]+)\]\(([^)\s]+)\)")
_CODE_SPAN = re.compile(r"(`+)(.+?)\1")
_STRONG = re.compile(r"\*\*(.+?)\*\*")


def use_color(stream: TextIO) -> bool:
    """ANSI styles only on a terminal, and never when NO_COLOR is set (https://no-color.org)."""
    isatty = getattr(stream, "isatty", None)
    return bool(isatty and isatty()) and not os.environ.get("NO_COLOR")


def render(markdown: str, color: bool) -> str:
    """Markdown as terminal text: headings emphasized (bold, or underlined with = and - in plain
    text), fenced code indented by four spaces, links as ``text (url)``; tables stay as written."""
    out: list[str] = []
    fence: str | None = None
    for line in markdown.splitlines():
        stripped = line.lstrip()
        if stripped.startswith(("```", "~~~")) and (fence is None or stripped.startswith(fence)):
            fence = stripped[:3] if fence is None else None
            continue
        if fence is not None:
            out.append(("    " + (f"{_CYAN}{line}{_RESET}" if color else line)) if line.strip() else "")
            continue
        heading = re.match(r"(#{1,6})\s+(.*?)\s*#*\s*$", line)
        if heading:
            title = _inline(heading.group(2), color=False)
            if color:
                style = _BOLD + (_UNDERLINE if len(heading.group(1)) == 1 else "")
                out.append(f"{style}{title}{_RESET}")
            else:
                out += [title, ("=" if len(heading.group(1)) == 1 else "-") * len(title)]
            continue
        out.append(_inline(line, color))
    return "\n".join(out).rstrip("\n") + "\n"


def _inline(line: str, color: bool) -> str:
    line = _LINK.sub(r"\1 (\2)", line)
    pieces, last = [], 0
    for span in _CODE_SPAN.finditer(line):  # no emphasis inside code (`x ** -n`)
        pieces.append(_STRONG.sub(rf"{_BOLD}\1{_RESET}" if color else r"\1", line[last:span.start()]))
        pieces.append(f"{_CYAN}{span.group(2)}{_RESET}" if color else span.group(0))
        last = span.end()
    pieces.append(_STRONG.sub(rf"{_BOLD}\1{_RESET}" if color else r"\1", line[last:]))
    return "".join(pieces)


def rule_text(rule: RuleInfo | type[Rule], color: bool) -> str:
    """The rendered page, with severity and fix availability under the title."""
    title, _, rest = doc_text(rule).partition("\n")
    facts = f"Severity: {rule.severity}. Fix: {FIX_WORDS[rule.fix]}."
    return render(f"{title}\n\n{facts}\n{rest}", color)
