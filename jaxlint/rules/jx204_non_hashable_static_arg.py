"""JX204 non-hashable-static-arg: a list, dict, set or array passed at a static argument of a jit.

A source rule (``check_source``): jit hashes static arguments to key its cache, and
raises ``ValueError: Non-hashable static arguments are not supported`` for these. The jitted
functions are the module's own ``@jax.jit(static_argnums=...)`` / ``partial(jax.jit, ...)``
decorated functions and ``g = jax.jit(f, static_argnames=...)`` bindings (jaxlint's scan finds
them; the source index's ``jitted_with_static``). A source rule: once per file.
"""
from __future__ import annotations

import ast
from typing import Iterable

from jaxlint.model import Edit, Finding, Fix, Span, Target
from jaxlint.rules.base import Rule, SourceContext
from jaxlint.scan.index import SourceIndex, static_arguments

_ARRAY_MAKERS = frozenset(f"{m}.{f}" for m in ("numpy", "jax.numpy") for f in ("array", "asarray"))
_KINDS = {ast.List: "a list", ast.Dict: "a dict", ast.Set: "a set", ast.ListComp: "a list comprehension",
          ast.DictComp: "a dict comprehension", ast.SetComp: "a set comprehension"}


class NonHashableStaticArg(Rule):
    code = "JX204"
    name = "non-hashable-static-arg"
    summary = "A list, dict, set or array passed where jit's static_argnums/static_argnames needs a hashable value."
    severity = "error"
    fix = "unsafe"

    @classmethod
    def check_source(cls, ctx: SourceContext) -> Iterable[Finding]:
        for message, span, fix in _problems(ctx.index):
            yield ctx.finding(cls, message, span, fix)

    @classmethod
    def explain(cls, ctx: SourceContext, target: Target | None, error: BaseException,
                span: Span) -> list[Finding]:
        """The findings that explain an import or trace failure raised at ``span`` (the innermost
        frame in the file), for the pipeline to report instead of the JX601/JX901 finding; [] when
        the failure is not a non-hashable static argument this rule sees in the source."""
        if not isinstance(error, ValueError) or "Non-hashable static arguments" not in str(error):
            return []
        return [cls.finding(ctx.path, call, message, fix, target.qualname if target is not None else None)
                for message, call, fix in _problems(ctx.index)
                if call.start_line <= span.start_line <= call.end_line]


def _problems(index: SourceIndex) -> list[tuple[str, Span, Fix | None]]:
    """(message, span of the call, fix) for each call passing an unhashable static argument."""
    if "static_arg" not in index.source or index.tree is None:
        return []  # no static_argnums/static_argnames anywhere
    jitted = index.jitted_with_static
    problems = []
    for call in index.calls:
        func = call.func
        if isinstance(func, ast.Attribute) and func.attr in ("lower", "trace"):
            func = func.value  # f.lower(...) / f.trace(...) take f's arguments
        if not (isinstance(func, ast.Name) and func.id in jitted) or index.shadowed(func):
            continue
        target = jitted[func.id]
        bad = [(label, node) for _, label, argument in static_arguments(call, target)
               for node in _unhashable(argument, index)]
        if bad:  # one finding per call: the call is where it fails
            problems.append((_message(index, func.id, target, bad), index.span(call),
                             _tuple_fix(index, [n for _, n in bad])))
    return problems


def _unhashable(node: ast.expr, index: SourceIndex) -> list[ast.expr]:
    """The unhashable literals in ``node``: itself, or inside a tuple literal."""
    if isinstance(node, ast.Tuple):
        return [bad for element in node.elts for bad in _unhashable(element, index)]
    if type(node) in _KINDS or _array_maker(node, index):
        return [node]
    return []


def _array_maker(node: ast.expr, index: SourceIndex) -> str | None:
    """``numpy.array``/``jax.numpy.asarray``... when ``node`` calls one of them."""
    if not isinstance(node, ast.Call):
        return None
    return min(index.call_names(node) & _ARRAY_MAKERS, default=None)


def _message(index: SourceIndex, name: str, target: Target, bad: list[tuple[str, ast.expr]]) -> str:
    passed = []
    for where, node in bad:
        maker = _array_maker(node, index)
        kind = f"an array ({maker})" if maker else _KINDS[type(node)]
        text = index.text(node)
        shown = text if len(text) <= 40 and "\n" not in text else text.splitlines()[0][:37] + "..."
        passed.append(f"{where} is {kind}, `{shown}`")
    declared = ", ".join(
        [f"static_argnums={target.static_argnums!r}"] * bool(target.static_argnums)
        + [f"static_argnames={target.static_argnames!r}"] * bool(target.static_argnames))
    return (f"`{name}` is jitted with {declared}, but static {'; '.join(passed)}: not hashable, so the "
            "call raises ValueError: Non-hashable static arguments are not supported. Pass a hashable "
            "value (a tuple, a frozenset, a Python scalar) or make the argument non-static.")


def _tuple_fix(index: SourceIndex, bad: list[ast.expr]) -> Fix | None:
    """List literals become tuple literals: unsafe, the function may use them as lists."""
    edits = []
    for node in bad:
        if not isinstance(node, ast.List) or any(isinstance(e, ast.Starred) for e in node.elts):
            return None
        inner = index.text(node)[1:-1]
        if len(node.elts) == 1 and not inner.rstrip().endswith(","):
            inner += ","
        edits.append(Edit(index.span(node), f"({inner})"))
    return Fix("unsafe", "Pass a tuple instead of the list", tuple(edits))
