"""Coverage: which targets were traced, which were not, and the hint comment that would trace each.

Built in the jaxlint process from a CheckResult (the workers' ``traced``/``skipped`` entries plus
the scanned Targets, which give lines and parameter names). Never imports JAX.
"""
from __future__ import annotations

import ast
import functools
import json
from dataclasses import asdict, dataclass, field
from typing import TYPE_CHECKING, Any, Callable

from jaxlint.model import Span, Target
from jaxlint.scan import hints
from jaxlint.scan.functions import FUNCTION_PARAMETER, KEY_PARAMETER
from jaxlint.scan.index import first_line, parse

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


@dataclass(frozen=True)
class Function:
    """A JAX function (scan/functions.py) and whether the rules read its operations."""

    path: str
    function: str
    line: int
    linted: bool


@dataclass
class Coverage:
    traced: list[Traced]
    untraced: list[Untraced]
    functions: list[Function] = field(default_factory=list)

    def to_json(self) -> dict[str, Any]:
        targets = [u for u in self.untraced if u.kind != "not-a-target"]
        return {"traced": [asdict(t) for t in self.traced],
                "untraced": [asdict(u) for u in self.untraced],
                "functions": [asdict(f) for f in self.functions],
                "summary": {"targets": len(self.traced) + len(targets), "traced": len(self.traced),
                            "jax_functions": len(self.functions),
                            "linted": sum(1 for f in self.functions if f.linted)}}


def coverage(result: CheckResult) -> Coverage:
    """Every target and every JAX function of every file, once, sorted by path, line and name;
    a JAX function that is not a target and was not linted is untraced, kind "not-a-target"."""
    traced, untraced, functions = [], [], []
    for analysis in result.files:
        path = analysis.source.path
        linted = {f.first_line for f in analysis.linted}
        firsts = {t.first_line for t in analysis.targets}
        for function in analysis.functions:
            functions.append(Function(path, function.qualname, function.line, function.first_line in linted))
            if function.first_line not in linted and function.first_line not in firsts:
                hint, note = _plain_suggestion(function, analysis.source.text)
                untraced.append(Untraced(path, function.qualname, function.line, "not-a-target",
                                         "no jit, transform or hint names it, and no traced function ran it",
                                         hint, note))
        remaining = list(analysis.targets)
        if analysis.result is None:
            continue
        for skip in analysis.result.skipped:
            target = _take(remaining, skip.target, skip.line)
            hint, note = suggestion(target, skip.kind, skip.reason, analysis.source.text)
            untraced.append(Untraced(path, skip.target, skip.line or 0, skip.kind, skip.reason, hint, note))
        for entry in analysis.result.traced:
            target = _take(remaining, entry.target, None)
            line = target.name_span.start_line if target is not None else 0
            traced.append(Traced(path, entry.target, line, entry.source, list(entry.signatures or [entry.signature])))
    key = lambda item: (item.path, item.line, item.target)  # noqa: E731
    return Coverage(sorted(traced, key=key), sorted(untraced, key=key),
                    sorted(functions, key=lambda f: (f.path, f.line, f.function)))


def _plain_suggestion(function: Any, text: str) -> tuple[str | None, str | None]:
    """A hint for a JAX function nothing names (a scan.functions.JaxFunction), or why none helps."""
    if "<locals>" in function.qualname:
        return None, ("a nested function is linted through a traced function that calls it, or by "
                      "`pytest --jaxlint` when the tests call it")
    span = Span(function.line, 0, function.line, 0)
    name = function.qualname.rpartition(".")[2]
    target = Target(name, function.qualname, "hinted", span, span, function.first_line, list(function.params))
    hint, note = suggestion(target, "no-arguments", "", text)
    also = "or run the tests with `pytest --jaxlint`"
    return hint, note if note and "pytest --jaxlint" in note else f"{note}; {also}" if note else also


def _take(targets: list[Target], qualname: str, line: int | None) -> Target | None:
    """The first remaining target with that name (and line): two defs may share a qualname."""
    for index, target in enumerate(targets):
        if target.qualname == qualname and line in (None, target.name_span.start_line):
            return targets.pop(index)
    return None


def suggestion(target: Target | None, kind: str, reason: str, text: str = "") -> tuple[str | None, str | None]:
    """(hint comment, note) for an untraced target; the hint is a template with ``f32[...]``
    placeholders to replace by real dtypes and shapes. ``text``: the file's source, whose def
    fits each value to its parameter (literals for ints and bools, ``key[]`` for keys, nothing
    for a parameter with a default; no hint at all when one takes a function)."""
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
                      f"{target.name}(...) once while the module is imported, or register an instance "
                      "in an examples file")
    if "." in target.qualname and params[:1] == ["cls"]:
        params = params[1:]  # a classmethod is found bound to its class
    if not params:
        if target.kind == "jit-bound":
            return None, "the wrapped function's parameters are unknown (it is not defined in this file)"
        return "# jaxlint: args", None
    static = {name for index, name in enumerate(target.params)
              if index in target.static_argnums or name in target.static_argnames}
    given = _given(target)  # keep what an existing hint already says
    kinds = parameter_kinds(text, target.first_line, target.name) if text else {}
    functions = [name for name in params if kinds.get(name) == "function" and name not in given]
    if functions:
        return None, (f"{', '.join(functions)} {'takes' if len(functions) == 1 else 'take'} a function, which a "
                      "hint cannot write: register a call in an examples file, or run `pytest --jaxlint`")
    params = [name for name in params if name in given or kinds.get(name) != "default"]
    parts = [given.get(name) or _placeholder(name, kinds.get(name), name in static) for name in params]
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


_PLACEHOLDERS = {"bool": "False", "int": "1", "float": "f32[]", "key": "key[]"}


def _placeholder(name: str, kind: str | None, static: bool) -> str:
    if kind in _PLACEHOLDERS:
        return f"{name}={_PLACEHOLDERS[kind]}"
    return f"{name}=<static>" if static else f"{name}=f32[...]"


def parameter_kinds(text: str, line: int, name: str) -> dict[str, str]:
    """Per parameter of the def ``name`` at ``line`` (its first): "default" (it has one), "bool",
    "int", "float", "key", "function" (by annotation or name) or "array"."""
    node = _definitions(text).get((line, name))
    if node is None:
        return {}
    args = node.args
    positional = [*args.posonlyargs, *args.args]
    defaults = {a.arg for a in positional[len(positional) - len(args.defaults):]} | {
        a.arg for a, d in zip(args.kwonlyargs, args.kw_defaults) if d is not None}
    kinds = {}
    for arg in [*positional, *args.kwonlyargs]:
        annotation = ast.unparse(arg.annotation) if arg.annotation is not None else ""
        if arg.arg in defaults:
            kinds[arg.arg] = "default"
        elif annotation in ("bool", "int", "float"):
            kinds[arg.arg] = annotation
        elif "Callable" in annotation or (not annotation and FUNCTION_PARAMETER.fullmatch(arg.arg)):
            kinds[arg.arg] = "function"
        elif annotation.startswith(("Key[", "PRNGKeyArray")) or (not annotation and KEY_PARAMETER.fullmatch(arg.arg)):
            kinds[arg.arg] = "key"
        else:
            kinds[arg.arg] = "array"
    return kinds


@functools.lru_cache(maxsize=4)
def _definitions(text: str) -> dict[tuple[int, str], ast.FunctionDef | ast.AsyncFunctionDef]:
    """The file's defs by (first line, name): one walk per file, however many are untraced."""
    parsed = parse(text)
    if parsed is None:
        return {}
    return {(first_line(n), n.name): n for n in ast.walk(parsed.tree)
            if isinstance(n, (ast.FunctionDef, ast.AsyncFunctionDef))}


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
