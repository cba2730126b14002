"""``PATH::QUALNAME`` -> the file's text and a Target, in the jaxlint process (no JAX).

A function check would trace (jitted, or using vmap/scan/...) is its scanned Target; any other
module-level function or method is explained too, as a "plain" target.
"""
from __future__ import annotations

import ast
import io
import os
import tokenize

from jaxlint import scan
from jaxlint.explain import ExplainError
from jaxlint.model import Span, Target
from jaxlint.scan.factories import returned_closures
from jaxlint.scan.index import SourceIndex
from jaxlint.scan.walk import parameters
from jaxlint.text import SourceError, SourceFile, char_column, read_source
from jaxlint.text import relative as display  # re-exported: explain shows paths as check does


def parse_spec(spec: str) -> tuple[str, str]:
    path, separator, qualname = spec.rpartition("::")
    if not separator or not path or not qualname:
        raise ExplainError(f"expected PATH::FUNCTION (e.g. examples/founding.py::my_mapped_function), got {spec!r}")
    return os.path.abspath(path), qualname


def read(path: str) -> SourceFile:
    if not os.path.isfile(path):
        raise ExplainError(f"no such file: {display(path)}")
    try:
        return read_source(path)
    except SourceError as error:
        raise ExplainError(f"cannot read {display(path)}: {error.message}") from None
    except OSError as error:
        raise ExplainError(f"cannot read {display(path)}: {error.strerror or error}") from None


def find_target(path: str, text: str, qualname: str, args: str | None = None) -> Target:
    """The target named ``qualname``; ``args`` (``--args``) replaces any hint comment."""
    try:
        targets = scan.scan_source(path, text)
    except scan.ScanSyntaxError as error:
        raise ExplainError(f"{display(path)}:{error.line}:{error.column}: syntax error: {error.message}") from None
    target = next((t for t in targets if t.qualname == qualname), None) or _plain(path, text, qualname)
    if target is None:
        known = sorted({t.qualname for t in targets} | set(_functions(text)))
        listing = f"; functions there: {', '.join(known)}" if known else ""
        raise ExplainError(f"no function {qualname!r} in {display(path)}{listing}")
    if args is not None:
        target.hint, target.hint_span = args, None
    return target


def code(line: str) -> str:
    """A source line without its indentation and trailing comment."""
    stripped = line.strip()
    try:
        for token in tokenize.generate_tokens(io.StringIO(stripped).readline):
            if token.type == tokenize.COMMENT:
                return stripped[:token.start[1]].rstrip()
    except (tokenize.TokenError, IndentationError, SyntaxError):
        pass
    return stripped


def _definitions(text: str) -> dict[str, ast.FunctionDef | ast.AsyncFunctionDef]:
    """Every function by its ``__qualname__``: module-level ones, methods, and nested ones
    (``make_step.<locals>.step``: a closure, traced as an examples file registers it)."""
    try:
        tree = ast.parse(text)
    except (SyntaxError, ValueError):
        return {}
    found: dict[str, ast.FunctionDef | ast.AsyncFunctionDef] = {}

    def visit(body: list[ast.stmt], prefix: str) -> None:
        for node in body:
            if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef)):
                found.setdefault(prefix + node.name, node)
                visit(node.body, f"{prefix}{node.name}.<locals>.")
            elif isinstance(node, ast.ClassDef):
                visit(node.body, f"{prefix}{node.name}.")

    visit(tree.body, "")
    return found


def _functions(text: str) -> list[str]:
    return list(_definitions(text))


def _plain(path: str, text: str, qualname: str) -> Target | None:
    node = _definitions(text).get(qualname)
    if node is None:
        return None
    lines = text.splitlines()
    line_text = lambda n: lines[n - 1] if 1 <= n <= len(lines) else ""  # noqa: E731
    first_line = node.decorator_list[0].lineno if node.decorator_list else node.lineno
    name_col = line_text(node.lineno).find(node.name, char_column(line_text(node.lineno), node.col_offset))
    end_line = node.end_lineno or node.lineno
    span = Span(node.lineno, char_column(line_text(node.lineno), node.col_offset), end_line,
                char_column(line_text(end_line), node.end_col_offset or 0))
    hint, hint_span = scan.hint_above(lines, first_line)
    params = [a.arg for a in parameters(node.args)]
    factory, _, name = qualname.partition(".<locals>.")
    closure = name in returned_closures(SourceIndex(path, text)).get(factory, ())  # check traces it so too
    return Target(name=node.name, qualname=qualname, kind="closure" if closure else "plain", span=span,
                  name_span=Span(node.lineno, max(name_col, 0), node.lineno, max(name_col, 0) + len(node.name)),
                  first_line=first_line, params=params, hint=hint, hint_span=hint_span)
