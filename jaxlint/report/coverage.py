"""Coverage: which targets were traced, which were not, and the hint comment that would trace each.

Built in the jaxlint process from a CheckResult (the workers' ``traced``/``skipped`` entries plus
the scanned Targets, which give lines and parameter names). Never imports JAX.
"""
from __future__ import annotations

import json
from dataclasses import asdict, dataclass
from typing import TYPE_CHECKING, Any, Callable

from jaxlint.model import Target
from jaxlint.scan import hints

if TYPE_CHECKING:
    from jaxlint.engine.results import CheckResult

# Trace errors that mean a parameter was needed as a Python value, not an array.
_STATIC_ERRORS = ("ConcretizationTypeError", "TracerBoolConversionError", "TracerIntegerConversionError",
                  "TracerArrayConversionError")


@dataclass(frozen=True)
class Traced:
    path: str
    target: str
    line: int
    source: str  # where the arguments came from: "hint", "import-call", ...
    signatures: list[str]


@dataclass(frozen=True)
class Untraced:
    path: str
    target: str
    line: int
    kind: str  # no-arguments, invalid-hint, trace-error, not-traceable, not-found, import-failed, timeout, crash
    reason: str
    hint: str | None  # the comment to put above the function; None when no hint can help
    note: str | None  # why there is no hint, or what to fill in


@dataclass
class Coverage:
    traced: list[Traced]
    untraced: list[Untraced]

    def to_json(self) -> dict[str, Any]:
        return {"traced": [asdict(t) for t in self.traced],
                "untraced": [asdict(u) for u in self.untraced],
                "summary": {"targets": len(self.traced) + len(self.untraced), "traced": len(self.traced)}}


def coverage(result: CheckResult) -> Coverage:
    """Every target of every file, once, sorted by path, line and name."""
    traced, untraced = [], []
    for analysis in result.files:
        path = analysis.source.path
        remaining = list(analysis.targets)
        if analysis.result is None:
            continue
        for skip in analysis.result.skipped:
            target = _take(remaining, skip.target, skip.line)
            hint, note = suggestion(target, skip.kind, skip.reason)
            untraced.append(Untraced(path, skip.target, skip.line or 0, skip.kind, skip.reason, hint, note))
        for entry in analysis.result.traced:
            target = _take(remaining, entry.target, None)
            line = target.name_span.start_line if target is not None else 0
            traced.append(Traced(path, entry.target, line, entry.source, list(entry.signatures or [entry.signature])))
    key = lambda item: (item.path, item.line, item.target)  # noqa: E731
    return Coverage(sorted(traced, key=key), sorted(untraced, key=key))


def _take(targets: list[Target], qualname: str, line: int | None) -> Target | None:
    """The first remaining target with that name (and line): two defs may share a qualname."""
    for index, target in enumerate(targets):
        if target.qualname == qualname and line in (None, target.name_span.start_line):
            return targets.pop(index)
    return None


def suggestion(target: Target | None, kind: str, reason: str) -> tuple[str | None, str | None]:
    """(hint comment, note) for an untraced target; the hint is a template with ``f32[...]``
    placeholders to replace by real dtypes and shapes."""
    if kind == "import-failed":
        return None, "the module failed to import (see the JX901 finding); fix that first"
    if kind in ("timeout", "crash"):
        return None, "the module did not finish importing (see the JX902/JX903 finding)"
    if kind == "not-found":
        return None, ("the name was not on the module after import (defined conditionally, "
                      "deleted, or renamed by a decorator such as parameterized tests?)")
    if kind == "not-traceable":
        return None, "it returns functions or objects: trace a function that calls what it makes"
    if target is None:
        return None, None
    params = list(target.params)
    if "." in target.qualname and params[:1] == ["self"]:
        # The hint's values are passed to the function found on the class: there is no instance.
        return None, (f"a hint cannot give `self`: call {target.qualname.rpartition('.')[0]}(...)."
                      f"{target.name}(...) once while the module is imported")
    if "." in target.qualname and params[:1] == ["cls"]:
        params = params[1:]  # a classmethod is found bound to its class
    if not params:
        if target.kind == "jit-bound":
            return None, "the wrapped function's parameters are unknown (it is not defined in this file)"
        return "# jaxlint: args", None
    static = {name for index, name in enumerate(target.params)
              if index in target.static_argnums or name in target.static_argnames}
    given = _given(target)  # keep what an existing hint already says
    parts = [given.get(name) or (f"{name}=<static>" if name in static else f"{name}=f32[...]")
             for name in params]
    notes = []
    names = [name for name in params if name in static and name not in given]
    if names:
        notes.append(f"{', '.join(names)} {'is' if len(names) == 1 else 'are'} static (static_argnums/"
                     f"static_argnames): write the Python value, e.g. {names[0]}=3")
    if kind == "trace-error" and any(error in reason for error in _STATIC_ERRORS):
        notes.append("a traced value was used as a Python value (`if n > 0`, `range(n)`): that parameter "
                     "must be static: give it a Python value in the hint and, under jax.jit, list it in "
                     "static_argnums/static_argnames")
    return "# jaxlint: args " + ", ".join(parts), "; ".join(notes) or None


def _given(target: Target) -> dict[str, str]:
    """``name=value`` per parameter of the target's hint comment, if it has one that parses."""
    try:
        spec = hints.parse_hint(target.hint) if target.hint is not None else {}
    except hints.HintError:
        return {}
    return {name: hints.describe({name: tree}) for name, tree in spec.items()}


def untraced_text(report: Coverage, relative: Callable[[str], str] = lambda path: path) -> str:
    """The --show-untraced listing: location, name, reason, then the hint (or why there is none)."""
    if not report.untraced:
        return ""
    lines = [f"untraced functions ({len(report.untraced)}):"]
    for item in report.untraced:
        lines.append(f"  {relative(item.path)}:{item.line}: {item.target} [{item.kind}] {item.reason}")
        if item.hint is not None:
            lines.append(f"      {item.hint}")
        if item.note is not None:
            lines.append(f"      ({item.note})" if item.hint is not None else f"      no hint helps: {item.note}")
    return "\n".join(lines) + "\n"


def write_report(report: Coverage, path: str) -> None:
    with open(path, "w", encoding="utf-8") as out:
        json.dump(report.to_json(), out, indent=2)
        out.write("\n")
