"""Find the ``ast`` node an op's location points at, in character columns (jaxlint's ``Span``).

ast counts columns in UTF-8 bytes; ``Span`` counts characters. Nodes are indexed once per source
text by their character span, so a rule looks up "the Call/Subscript at this op's location".
"""
from __future__ import annotations

import ast
import functools
import re
from dataclasses import dataclass
from typing import TypeVar

from jaxlint.model import Span
from jaxlint.text import char_column, offset_of

N = TypeVar("N", bound=ast.AST)
_LINE_BREAK = re.compile(r"\r\n|\r|\n")  # the line endings Python's tokenizer counts


@dataclass(frozen=True)
class Parsed:
    source: str
    by_span: dict[Span, list[ast.AST]]
    parents: dict[ast.AST, ast.AST]


@functools.lru_cache(maxsize=8)
def parse(source: str) -> Parsed | None:
    try:
        tree = ast.parse(source)
    except (SyntaxError, ValueError, RecursionError, MemoryError):
        return None
    lines = _LINE_BREAK.split(source)
    by_span: dict[Span, list[ast.AST]] = {}
    parents: dict[ast.AST, ast.AST] = {}
    for node in ast.walk(tree):
        for child in ast.iter_child_nodes(node):
            parents[child] = node
        if isinstance(node, ast.expr):
            by_span.setdefault(_char_span(lines, node), []).append(node)
    return Parsed(source, by_span, parents)


def _char_col(lines: list[str], line: int, byte_col: int) -> int:
    return char_column(lines[line - 1] if 0 < line <= len(lines) else "", byte_col)


def _char_span(lines: list[str], node: ast.AST) -> Span:
    return Span(node.lineno, _char_col(lines, node.lineno, node.col_offset),
                node.end_lineno, _char_col(lines, node.end_lineno, node.end_col_offset))


def node_at(source: str, span: Span, kind: type[N]) -> N | None:
    """The outermost node of type ``kind`` whose span is exactly ``span``."""
    parsed = parse(source)
    if parsed is None:
        return None
    found = [n for n in parsed.by_span.get(span, []) if isinstance(n, kind)]
    return found[0] if found else None  # ast.walk is breadth-first: outermost first


def node_span(source: str, node: ast.AST) -> Span:
    return _char_span(_LINE_BREAK.split(source), node)


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
