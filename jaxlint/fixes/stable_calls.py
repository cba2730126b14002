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
from typing import Sequence

from jaxlint.model import Edit, Fix, Span
from jaxlint.scan.index import SourceIndex


def stable_call(index: SourceIndex, node: ast.expr, function: str, arguments: Sequence[str],
                note: str = "", spelled: str | None = None) -> Fix:
    """The unsafe fix replacing ``node`` by a call of ``function`` (qualified: ``jax.nn.logsumexp``)
    with ``arguments`` (their text). ``spelled``: how to write the function, if not as the module
    imports it. A call needs no parentheses anywhere."""
    module, _, name = function.rpartition(".")
    spelling, extra = (spelled, ()) if spelled is not None else _spelled(index, module, name)
    text = f"{spelling}({', '.join(arguments)})"
    return Fix("unsafe", f"use `{text}`{note}", extra + (Edit(index.span(node), text),))


def spelled_name(index: SourceIndex, qualified: str) -> tuple[str, tuple[Edit, ...]]:
    """How the module can spell ``qualified`` (``jax.lax.Precision``: ``lax.Precision`` after
    ``from jax import lax``), and the edit adding ``import jax`` when no import reaches it."""
    module, _, name = qualified.rpartition(".")
    return _spelled(index, module, name)


def negated(index: SourceIndex, node: ast.expr) -> str:
    """The text of ``-x`` for ``x``, ``x`` for ``-x``, ``-(a + b)`` for ``a + b``."""
    if isinstance(node, ast.UnaryOp) and isinstance(node.op, ast.USub):
        return index.text(node.operand) if _atomic(node.operand) else f"({index.text(node.operand)})"
    text = index.text(node)
    return f"-{text}" if _atomic(node) else f"-({text})"


def _atomic(node: ast.expr) -> bool:
    return isinstance(node, (ast.Name, ast.Attribute, ast.Subscript, ast.Call)) or (
        isinstance(node, ast.Constant) and not isinstance(node.value, (int, float)))


def _spelled(index: SourceIndex, module: str, name: str) -> tuple[str, tuple[Edit, ...]]:
    """How the source can spell ``module.name`` (``jax.nn.logsumexp``), and the edit adding
    ``import jax`` when no import reaches it."""
    tree = index.tree
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
    return f"{module}.{name}", (_import_jax(index.source, tree),)


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
