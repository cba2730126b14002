"""Which rules run, resolved as ruff resolves ``select``/``extend-select``/``ignore``, and the
values of their options. Errors are ValueError messages; config.py says where they came from."""
from __future__ import annotations

import json
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any

from jaxlint.model import Option
from jaxlint.rules import RuleInfo, rule_classes
from jaxlint.rules.catalog import rule_infos

if TYPE_CHECKING:
    from jaxlint.rules import Rule


def did_you_mean(word: str, candidates: list[str], cutoff: float = 0.6) -> str:
    """``"; did you mean `select`?"`` for the closest candidate, else ``"."``: a sentence ends.
    ``cutoff``: how alike (difflib's ratio) a candidate must be."""
    import difflib  # only an error message needs it

    # A code typed with a letter for a digit (JX1O1, JX3l0): that code, before any spelling match
    # (difflib rates JX1O1 closer to JX311 than to JX101).
    digits = word[:2].upper() + word[2:].translate(str.maketrans("OoIl", "0011"))
    if digits != word and digits in candidates:
        return f"; did you mean `{digits}`?"
    close = difflib.get_close_matches(word, candidates, n=1, cutoff=cutoff)
    if not close and word.upper() != word:  # JX codes typed in lower case
        close = difflib.get_close_matches(word.upper(), candidates, n=1, cutoff=cutoff)
    return f"; did you mean `{close[0]}`?" if close else "."


def matches(rule: RuleInfo | type[Rule] | ReportedCode, selector: str) -> bool:
    """Codes, code prefixes (``JX1``), kebab-case names and ``ALL``: whether ``selector`` chooses ``rule``."""
    return selector.upper() == "ALL" or rule.code.startswith(selector.upper()) or rule.name == selector


# The pipeline's codes (syntax and import errors, timeouts, crashes, jaxlint's own errors): one
# is suggested only for a code typed one character off it, never as the nearest code to a number
# that names no rule (JX999 is no typo of JX906, and nobody selects internal errors).
PIPELINE_CODES = "JX9"


def suggest_rule(word: str, rules: tuple[RuleInfo, ...] | list[RuleInfo]) -> str:
    """``did_you_mean`` for a rule code or name: the nearest rule a user selects; a JX9 code only
    when ``word`` is one typo away from it (JX9O1, JX910, JX9011, JX91)."""
    near = [r.code for r in rules if r.code.startswith(PIPELINE_CODES) and suggestable(word, r.code)]
    if near:
        return did_you_mean(word.upper(), near, cutoff=0.0)  # difflib only chooses among them
    candidates = [r.code for r in rules if not r.code.startswith(PIPELINE_CODES)] + [r.name for r in rules]
    return did_you_mean(word, candidates)


def suggestable(word: str, code: str) -> bool:
    """Whether ``code`` may be suggested for the unknown ``word``: a rule a user selects, or a
    pipeline code ``word`` is one typo away from."""
    typed = word.upper()
    return not code.startswith(PIPELINE_CODES) or (typed.startswith(PIPELINE_CODES) and _one_typo_apart(typed, code))


def _one_typo_apart(a: str, b: str) -> bool:
    """One character replaced, added or left out, or two neighbours swapped, turns ``a`` into ``b``."""
    if a == b or abs(len(a) - len(b)) > 1:
        return False
    if len(a) != len(b):
        short, long = sorted((a, b), key=len)
        return any(long[:i] + long[i + 1:] == short for i in range(len(long)))
    differ = [i for i, (x, y) in enumerate(zip(a, b)) if x != y]
    swapped = len(differ) == 2 and differ[1] == differ[0] + 1 and a[differ[0]] == b[differ[1]] \
        and a[differ[1]] == b[differ[0]]
    return len(differ) == 1 or swapped


@dataclass(frozen=True)
class ReportedCode:
    """A code jaxlint reports that is no rule of its own: ruff's E902 (io-error), a path given
    that does not exist. Selectors name it as they name a rule (``--ignore E902``)."""

    code: str
    name: str


IO_ERROR = ReportedCode("E902", "io-error")


def ignores_io_errors(ignores: list[str]) -> bool:
    """Whether an ignore list turns E902 off. Only an ignore does: a ``select`` of rules leaves
    it on (ruff drops it with a warning), so a missing path is never passed over unasked."""
    return any(selector.upper() != "ALL" and matches(IO_ERROR, selector) for selector in ignores)


def check_selector(selector: str) -> None:
    """Raise ValueError naming the closest code or name when ``selector`` selects no rule."""
    rules = rule_infos()
    known = [*rules, IO_ERROR]
    if not isinstance(selector, str) or not selector or not any(matches(r, selector) for r in known):
        raise ValueError(f"unknown rule selector `{selector}`{suggest_rule(str(selector), rules)}")


def rule_named(key: str) -> RuleInfo:
    """The one rule a code or kebab-case name stands for (rule option tables)."""
    rules = rule_infos()
    for rule in rules:
        if key in (rule.code, rule.name) or key.upper() == rule.code:
            return rule
    raise ValueError(f"unknown rule `{key}`{suggest_rule(key, rules)} Expected a code "
                     "(JX202) or a rule name (python-loop-unrolled).")


def _specificity(selector: str) -> int:
    """ALL < JX < JX1 < JX10 < a whole code or name: the more specific selector wins."""
    if selector.upper() == "ALL":
        return 0
    if any(selector in (r.code, r.name) or selector.upper() == r.code for r in rule_infos()):
        return 100
    return len(selector)


@dataclass
class Selection:
    """One layer's rule selection: a configuration file, a ``--config`` snippet, the flags."""

    select: list[str] | None = None  # None: not set, the layer only adjusts the previous one
    extend_select: list[str] = field(default_factory=list)
    ignore: list[str] = field(default_factory=list)


def resolve_rules(layers: list[Selection]) -> list[RuleInfo]:
    """Every rule is on by default; each layer applies its selectors from least to most specific,
    an ignore winning over a select of equal specificity; a layer that sets ``select`` replaces
    what the layers before it chose (ruff's ``as_rule_table``). The rules' metadata: the rule
    modules are not imported."""
    rules = rule_infos()
    enabled = {r.code for r in rules}
    carried_ignores: list[str] = []
    for layer in layers:
        selecting = (layer.select or []) + layer.extend_select
        ignoring = layer.ignore + carried_ignores
        updates: dict[str, bool] = {}
        for level in sorted({_specificity(s) for s in selecting + ignoring}):
            for selector in selecting:
                if _specificity(selector) == level:
                    updates.update((r.code, True) for r in rules if matches(r, selector))
            for selector in ignoring:
                if _specificity(selector) == level:
                    updates.update((r.code, False) for r in rules if matches(r, selector))
        carried_ignores = []
        if layer.select is not None:
            enabled = {code for code, on in updates.items() if on}
            if not layer.select and not layer.extend_select and layer.ignore:
                carried_ignores = layer.ignore  # `select = []` with ignores: ruff carries them on
        else:
            enabled |= {code for code, on in updates.items() if on}
            enabled -= {code for code, on in updates.items() if not on}
    return [r for r in rules if r.code in enabled]


def select_rules(select: list[str] | tuple[str, ...] | None,
                 ignore: list[str] | tuple[str, ...] | None) -> list[type[Rule]]:
    """The rules one select list and one ignore list choose, as ``jaxlint check --select/--ignore``
    without a configuration file: one layer of ``resolve_rules`` (the more specific selector wins;
    ``select=None``: every rule, ``select=[]``: none). An unknown selector raises ValueError."""
    for selector in [*(select or ()), *(ignore or ())]:
        check_selector(selector)
    chosen = resolve_rules([Selection(None if select is None else list(select), [], list(ignore or ()))])
    return rule_classes(r.code for r in chosen)


def codes_matching(selectors: tuple[str, ...] | list[str]) -> set[str]:
    return {r.code for r in rule_infos() for s in selectors if matches(r, s)}


def _type_name(kind: type) -> str:
    return {int: "an integer", float: "a number", bool: "true or false", str: "a string"}[kind]


def describe(value: Any) -> str:
    """A TOML value and its type, for error messages: ``"fast" (a string)``."""
    kinds = {bool: "a boolean", int: "an integer", float: "a number", str: "a string",
             list: "an array", dict: "a table"}
    kind = next((name for t, name in kinds.items() if isinstance(value, t)), type(value).__name__)
    text = json.dumps(value, default=str)  # TOML spells strings, booleans and arrays alike
    return f"{text if len(text) <= 60 else text[:57] + '...'} ({kind})"


def check_option(rule: RuleInfo, name: str, value: Any) -> Any:
    """The value of a rule option as the rule reads it; ValueError for an unknown name or a
    value of the wrong type or range."""
    declared = rule.options
    if name not in declared:
        if not declared:
            raise ValueError(f"{rule.code} ({rule.name}) has no options")
        raise ValueError(f"unknown option `{name}` of {rule.code} ({rule.name}){did_you_mean(name, list(declared))} "
                         f"Its options: {', '.join(declared)}")
    option: Option = declared[name]
    number = option.type in (int, float)
    good = (isinstance(value, option.type) or (option.type is float and isinstance(value, int))) \
        and not (isinstance(value, bool) and option.type is not bool)
    if good and number and option.minimum is not None and value < option.minimum:
        good = False
    if not good:
        at_least = f" of at least {option.minimum:g}" if number and option.minimum is not None else ""
        raise ValueError(f"expected {_type_name(option.type)}{at_least} ({option.description}), got {describe(value)}")
    return float(value) if option.type is float else value


def option_values(overrides: dict[str, dict[str, Any]]) -> dict[str, dict[str, Any]]:
    """code -> option -> value for every rule that has options, the defaults filled in."""
    return {rule.code: {name: overrides.get(rule.code, {}).get(name, option.default)
                        for name, option in rule.options.items()}
            for rule in rule_infos() if rule.options}
