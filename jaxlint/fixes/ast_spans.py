"""The text of edits: a node's span and text in character columns (jaxlint's ``Span``; ast counts
UTF-8 bytes), and the text to write an expression in another's place, for fix builders, which get
the source text. Questions about the source (which node is at a span, what a call calls) are the
source index's (jaxlint.scan.index).
"""
from __future__ import annotations

import ast

from jaxlint.model import Span
from jaxlint.scan.index import parse
from jaxlint.text import char_span, offset_of


def node_span(source: str, node: ast.AST) -> Span:
    """``node``'s span in characters (ast counts UTF-8 bytes)."""
    return char_span(source, Span(node.lineno, node.col_offset,  # type: ignore[attr-defined]
                                   node.end_lineno, node.end_col_offset))  # type: ignore[attr-defined]


def node_text(source: str, node: ast.AST) -> str:
    span = node_span(source, node)
    return source[offset_of(source, span.start_line, span.start_col):
                  offset_of(source, span.end_line, span.end_col)]


# Binding strength of the expressions a replacement can be (Python's grammar, loosest first).
_BINARY = {ast.BitOr: 8, ast.BitXor: 9, ast.BitAnd: 10, ast.LShift: 11, ast.RShift: 11, ast.Add: 12, ast.Sub: 12,
           ast.Mult: 13, ast.MatMult: 13, ast.Div: 13, ast.FloorDiv: 13, ast.Mod: 13, ast.Pow: 15}
_UNARY = 14  # -x, +x, ~x
_ATOM = 16  # names, attributes, subscripts, calls, literals, displays
# Where any expression stands without parentheses except a bare tuple, walrus, yield or starred one.
_OPEN_SLOTS = (ast.Assign, ast.AnnAssign, ast.AugAssign, ast.Return, ast.Expr, ast.keyword)
_NEEDS_PARENTHESES_ANYWHERE = (ast.Tuple, ast.NamedExpr, ast.Yield, ast.YieldFrom, ast.Starred, ast.Await,
                               ast.GeneratorExp)


def _strength(node: ast.expr) -> int:
    if isinstance(node, ast.BinOp):
        return _BINARY[type(node.op)]
    if isinstance(node, ast.UnaryOp):
        return 6 if isinstance(node.op, ast.Not) else _UNARY
    if isinstance(node, ast.Compare):
        return 7
    if isinstance(node, ast.BoolOp):
        return 5 if isinstance(node.op, ast.And) else 4
    if isinstance(node, ast.IfExp):
        return 3
    if isinstance(node, ast.Lambda):
        return 2
    return 1 if isinstance(node, _NEEDS_PARENTHESES_ANYWHERE) else _ATOM


def replacement_text(source: str, place: ast.expr, replacement: ast.expr) -> str:
    """The text of ``replacement`` (an expression of ``source``) to write over ``place``, in
    parentheses only where Python would read it otherwise: ``y = x + 1`` but ``2 * (x + 1)``."""
    text = node_text(source, replacement)
    strength = _strength(replacement)
    parsed = parse(source)
    parent = parsed.parents.get(place) if parsed is not None else None
    if isinstance(parent, ast.Attribute) and isinstance(replacement, ast.Constant) \
            and isinstance(replacement.value, (int, float, complex)):
        return f"({text})"  # 1.T reads as a malformed number
    if strength == _ATOM or strength > 1 and _stands_alone(place, parent, strength):
        return text
    return f"({text})"


def _stands_alone(place: ast.expr, parent: ast.AST | None, strength: int) -> bool:
    """Whether an expression of ``strength`` needs no parentheses at ``place`` (child of ``parent``)."""
    if isinstance(parent, _OPEN_SLOTS):
        return True
    if isinstance(parent, ast.Call):
        return place is not parent.func and strength > 2  # f(lambda: 1, 2) is fine, but keep it plain
    if isinstance(parent, (ast.List, ast.Set)) or isinstance(parent, ast.Tuple) and strength > 2:
        return True
    if isinstance(parent, ast.Subscript):
        return place is parent.slice
    if isinstance(parent, ast.BinOp):
        outer = _BINARY[type(parent.op)]
        if isinstance(parent.op, ast.Pow):  # right-associative: a ** b ** c, 2 ** -x
            return place is parent.right and strength >= _UNARY
        return strength > outer or strength == outer and place is parent.left
    if isinstance(parent, ast.UnaryOp):
        return strength >= (6 if isinstance(parent.op, ast.Not) else _UNARY)  # -x ** 2 is -(x ** 2)
    if isinstance(parent, (ast.Compare, ast.BoolOp, ast.IfExp)):
        return strength > _strength(parent)
    return False
