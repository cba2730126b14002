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
