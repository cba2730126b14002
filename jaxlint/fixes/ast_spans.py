"""Find the ``ast`` node an op's location points at, in character columns (jaxlint's ``Span``).

ast counts columns in UTF-8 bytes; ``Span`` counts characters. Nodes are indexed once per source
text by their character span, so a rule looks up "the Call/Subscript at this op's location".
"""
from __future__ import annotations

import ast
from typing import TypeVar

from jaxlint.model import Span
from jaxlint.scan.index import Parsed
from jaxlint.scan.index import parse as parse_source
from jaxlint.text import char_span, offset_of

N = TypeVar("N", bound=ast.AST)


def parse(source: str) -> Parsed | None:
    """The parsed source (jaxlint.scan.index's one cache per text: rules, fixes and the source
    index share one AST); None when it does not parse."""
    return parse_source(source)


def node_at(source: str, span: Span, kind: type[N]) -> N | None:
    """The outermost node of type ``kind`` whose span is exactly ``span``."""
    parsed = parse(source)
    if parsed is None:
        return None
    found = [n for n in parsed.by_span.get(span, []) if isinstance(n, kind)]
    return found[0] if found else None  # ast.walk is breadth-first: outermost first


def node_span(source: str, node: ast.AST) -> Span:
    """``node``'s span in characters (ast counts UTF-8 bytes)."""
    return char_span(source, Span(node.lineno, node.col_offset,  # type: ignore[attr-defined]
                                   node.end_lineno, node.end_col_offset))  # type: ignore[attr-defined]


def node_text(source: str, node: ast.AST) -> str:
    span = node_span(source, node)
    return source[offset_of(source, span.start_line, span.start_col):
                  offset_of(source, span.end_line, span.end_col)]


def int_literal(node: ast.AST) -> int | None:
    """``3`` or ``-3`` written as a literal, else None (bools are not ints here)."""
    sign = 1
    if isinstance(node, ast.UnaryOp) and isinstance(node.op, (ast.USub, ast.UAdd)):
        sign = -1 if isinstance(node.op, ast.USub) else 1
        node = node.operand
    if isinstance(node, ast.Constant) and type(node.value) is int:
        return sign * node.value
    return None


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
