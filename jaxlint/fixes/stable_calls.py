"""The numerics rules' rewrites (JX7xx): replace one expression of the source by a call to JAX's
stable function (``jnp.log(jnp.sum(jnp.exp(x)))`` -> ``jax.nn.logsumexp(x)``).

The stable function is named the way the module already imports it (``jnp.log1p`` after
``import jax.numpy as jnp``, ``log1p`` after ``from jax.numpy import log1p``, ``J.numpy.log1p``
after ``import jax as J``); when nothing imported reaches it, the fix adds ``import jax``.
The fixes change values (to the right ones where the original overflowed or lost precision), so
they are "unsafe"; ``--unsafe-fixes`` applies one only after the fixer has compared the values
(equal on ordinary inputs, no new infinities or NaN on wide ones).
"""
from __future__ import annotations

import ast
import functools
from typing import Iterable

from jaxlint.fixes.ast_spans import node_at, node_span, node_text, parse
from jaxlint.model import Edit, Fix, Span
from jaxlint.scan.index import imported_names


def callee(source: str, call: ast.Call) -> str | None:
    """The called name: ``log`` for ``jnp.log(...)``, ``log(...)``, ``x.log(...)`` and for
    ``ln(...)`` after ``from jax.numpy import log as ln``."""
    func = call.func
    if isinstance(func, ast.Attribute):
        return func.attr
    if isinstance(func, ast.Name):
        return _imported_as(source).get(func.id, func.id)
    return None


@functools.lru_cache(maxsize=8)
def _imported_as(source: str) -> dict[str, str]:
    """Local name -> imported name, for ``from m import a as b`` at any level of the module."""
    parsed = parse(source)
    return {alias.asname: alias.name for node in (ast.walk(parsed.tree) if parsed is not None else ())
            if isinstance(node, ast.ImportFrom) for alias in node.names if alias.asname}


def call_at(source: str, span: Span, names: Iterable[str]) -> ast.Call | None:
    """The call at ``span`` when it calls one of ``names`` with plain arguments."""
    node = node_at(source, span, ast.Call)
    return as_call(source, node, *names) if node is not None else None


def as_call(source: str, node: ast.AST | None, *names: str) -> ast.Call | None:
    """``node`` when it is a call of one of ``names`` (function or method form) with plain arguments."""
    if not isinstance(node, ast.Call) or callee(source, node) not in names:
        return None
    if any(isinstance(a, ast.Starred) for a in node.args) or any(k.arg is None for k in node.keywords):
        return None
    return node


def reduction_operand(source: str, call: ast.Call) -> tuple[ast.expr, dict[str, ast.expr]] | None:
    """``jnp.sum(a, axis, keepdims=...)`` or ``a.sum(axis, ...)``: the reduced operand and the
    ``axis``/``keepdims`` arguments by name; None when other arguments are passed."""
    func = call.func
    method = isinstance(func, ast.Attribute) and not module_like(source, func.value)
    operand = func.value if method else (call.args[0] if call.args else None)  # type: ignore[union-attr]
    positional = call.args if method else call.args[1:]
    if operand is None or len(positional) > 1:
        return None
    named = {"axis": positional[0]} if positional else {}
    for keyword in call.keywords:
        if keyword.arg not in ("axis", "keepdims") or keyword.arg in named:
            return None
        named[keyword.arg] = keyword.value
    return operand, named


def single_argument(call: ast.Call) -> ast.expr | None:
    """The only argument of ``f(x)`` (``jnp.exp(x)``), no keywords."""
    if len(call.args) == 1 and not call.keywords:
        return call.args[0]
    return None


def module_like(source: str, node: ast.expr) -> bool:
    """``jnp``, ``jax.numpy``: a path starting at a name the module imports (not ``x`` of ``x.sum()``)."""
    while isinstance(node, ast.Attribute):
        node = node.value
    parsed = parse(source)
    return isinstance(node, ast.Name) and parsed is not None and node.id in imported_names(parsed.tree)


def qualified(source: str, module: str, name: str) -> tuple[str, tuple[Edit, ...]]:
    """How the source can spell ``module.name`` (``jax.nn.logsumexp``), and the edit adding
    ``import jax`` when no import reaches it."""
    parsed = parse(source)
    tree = parsed.tree if parsed is not None else None
    best: str | None = None
    jax_alias: str | None = None
    for node in tree.body if tree is not None else []:
        if isinstance(node, ast.Import):
            for alias in node.names:
                if alias.name == module and alias.asname:
                    best = best or f"{alias.asname}.{name}"
                elif alias.name == "jax" and not jax_alias:
                    jax_alias = alias.asname or "jax"
                elif alias.name.startswith("jax.") and not alias.asname and not jax_alias:
                    jax_alias = "jax"  # ``import jax.numpy`` binds ``jax``
        elif isinstance(node, ast.ImportFrom) and node.level == 0 and node.module:
            for alias in node.names:
                if node.module == module and alias.name == name:
                    best = best or (alias.asname or name)
                elif f"{node.module}.{alias.name}" == module:
                    best = best or f"{alias.asname or alias.name}.{name}"
    if best is not None:
        return best, ()
    if jax_alias is not None:
        return f"{jax_alias}{module[3:]}.{name}", ()
    return f"{module}.{name}", (_import_jax(source, tree),)


def _import_jax(source: str, tree: ast.Module | None) -> Edit:
    """An edit adding ``import jax`` after the module's leading docstring and imports."""
    line = 1
    for node in tree.body if tree is not None else []:
        docstring = isinstance(node, ast.Expr) and isinstance(node.value, ast.Constant) \
            and isinstance(node.value.value, str) and line == 1
        if isinstance(node, (ast.Import, ast.ImportFrom)) or docstring:
            line = (node.end_lineno or node.lineno) + 1
        else:
            break
    newline = "\r\n" if "\r\n" in source else "\n"
    return Edit(Span(line, 0, line, 0), f"import jax{newline}")


def rewrite(source: str, node: ast.expr, text: str, extra: tuple[Edit, ...], message: str) -> Fix:
    """The unsafe fix replacing ``node`` by ``text`` (a call: needs no parentheses anywhere)."""
    return Fix("unsafe", message, extra + (Edit(node_span(source, node), text),))


def negated(source: str, node: ast.expr) -> str:
    """``-x`` for ``x``, ``x`` for ``-x``, ``-(a + b)`` for ``a + b``."""
    if isinstance(node, ast.UnaryOp) and isinstance(node.op, ast.USub):
        return node_text(source, node.operand) if _atomic(node.operand) else f"({node_text(source, node.operand)})"
    text = node_text(source, node)
    return f"-{text}" if _atomic(node) else f"-({text})"


def _atomic(node: ast.expr) -> bool:
    return isinstance(node, (ast.Name, ast.Attribute, ast.Subscript, ast.Call)) or (
        isinstance(node, ast.Constant) and not isinstance(node.value, (int, float)))


def same_expression(a: ast.AST, b: ast.AST) -> bool:
    """Both are the same expression (spacing and parentheses aside)."""
    return ast.dump(a) == ast.dump(b)
