"""Find the functions jaxlint traces, statically (``ast``; never imports jax or the scanned code).

Names resolve through imports and scopes as jaxlint.scan.names describes. Spans follow
``Span``: 1-based lines, 0-based character columns (``ast`` counts UTF-8 bytes: converted).
"""
from __future__ import annotations

import ast
import contextlib
import gc
import re
import tokenize
from functools import cached_property
from typing import Iterator

from jaxlint.model import Span, Target, TransformCall
from jaxlint.scan.names import JIT, TRANSFORMS, Resolver
from jaxlint.scan.walk import MODULE_TOP, Candidate, Walker, parameters
from jaxlint.text import char_column, line_code_span, split_lines

# The hint ends at a further comment (`# jaxlint: args x=f32[3]  # noqa: JX905`).
_HINT = re.compile(r"#\s*jaxlint:\s*args(?:\s+([^#]*?))?\s*(?:#.*)?$")
# jaxtyping's array annotations (``Float[Array, "n"]``): their dtype classes.
JAXTYPING_ARRAYS = frozenset({
    "Shaped", "Bool", "Key", "Num", "Inexact", "Float", "Float16", "Float32", "Float64", "BFloat16", "Complex",
    "Complex64", "Complex128", "Integer", "Int", "Int8", "Int16", "Int32", "Int64", "UInt", "UInt8", "UInt16",
    "UInt32", "UInt64", "Real"})
# Every spelling of a target names one of these somewhere (a transform at least in its import, a
# hint, jaxtyping), so a file without them has no targets and only needs its syntax checked.
_MAY_HAVE_TARGETS = re.compile(r"\b(?:jit|vmap|lax|scan|fori_loop|while_loop|cond|switch|jaxtyping)\b"
                               r"|#\s*jaxlint:\s*args")
_NAME_END = frozenset(" \t\f([\\:")
_JAX_WORD = re.compile(r"\bjax\b")


def mentions_jax(source: str) -> bool:
    """Cheap pre-filter: a file that never says ``jax`` has nothing to trace and is never imported."""
    # The search starts at the first "jax": a pattern that begins with \b has no literal prefix for
    # the regex engine to skip ahead by, so it would try every position of every file (a tenth of
    # a warm re-check's scan stage).
    first = source.find("jax")
    return first >= 0 and _JAX_WORD.search(source, first) is not None


class ScanSyntaxError(Exception):
    """The file does not parse; line is 1-based, column 0-based (reported as JX900)."""

    def __init__(self, message: str, line: int, column: int) -> None:
        super().__init__(f"{message} ({line}:{column})")
        self.message = message
        self.line = line
        self.column = column


def _as_tuple(value: object, typ: type) -> tuple | None:
    # jax accepts a single value or a sequence; bool is an int subclass but never an argnum.
    if isinstance(value, typ) and not isinstance(value, bool):
        return (value,)
    if isinstance(value, (tuple, list)) and all(isinstance(v, typ) and not isinstance(v, bool) for v in value):
        return tuple(value)
    return None


def _static(keywords: list[ast.keyword]) -> tuple[tuple[int, ...], tuple[str, ...]]:
    nums: tuple[int, ...] = ()
    names: tuple[str, ...] = ()
    for keyword in keywords:
        if keyword.arg not in ("static_argnums", "static_argnames"):
            continue
        try:
            value = ast.literal_eval(keyword.value)
        except (ValueError, SyntaxError, TypeError, MemoryError, RecursionError):
            value = None
        if keyword.arg == "static_argnums":
            nums = _as_tuple(value, int) or ()
        else:
            names = _as_tuple(value, str) or ()
    return nums, names


def _last_simple_statement(node: ast.stmt) -> ast.stmt:
    """Where a compound statement ends: CPython's own end takes in a trailing ``;``."""
    while True:
        if type(node) in (ast.Try, getattr(ast, "TryStar", ast.Try)):
            blocks = [node.finalbody, node.orelse, *([node.handlers[-1].body] if node.handlers else []), node.body]
        elif type(node) is ast.Match:
            blocks = [node.cases[-1].body]
        else:
            blocks = [getattr(node, "orelse", None), getattr(node, "body", None)]
        block = next((b for b in blocks if b), None)
        if not isinstance(block, list):  # a simple statement
            return node
        node = block[-1]


def hint_above(lines: list[str], first_line: int) -> tuple[str | None, Span | None]:
    """The ``# jaxlint: args`` hint on the line above ``first_line`` (1-based; the first decorator's
    line), and its span; (None, None) when there is none."""
    if first_line < 2 or first_line - 2 >= len(lines):
        return None, None
    line = lines[first_line - 2]
    match = _HINT.fullmatch(line.strip())
    if match is None:
        return None, None
    return (match.group(1) or "").strip(), line_code_span(first_line - 1, line)


class _Targets:
    """Turns the walker's candidates into Targets, with spans in characters."""

    def __init__(self, source: str, walker: Walker) -> None:
        self.source = source
        self.ascii = source.isascii()
        self.walker = walker
        self.resolver = Resolver(walker.imports, walker.class_named_like_module)

    @cached_property
    def lines(self) -> list[str]:
        return split_lines(self.source)

    def col(self, line: int, byte_col: int) -> int:
        if self.ascii or not 0 < line <= len(self.lines):
            return byte_col
        return char_column(self.lines[line - 1], byte_col)

    def span(self, node: ast.AST, end: ast.AST | None = None) -> Span:
        end = end or node
        return Span(node.lineno, self.col(node.lineno, node.col_offset),  # type: ignore[attr-defined]
                    end.end_lineno, self.col(end.end_lineno, end.end_col_offset))  # type: ignore[attr-defined]

    def _skip_blanks(self, line: int, col: int) -> tuple[int, int]:
        """Skip spaces and backslash continuations."""
        while True:
            text = self.lines[line - 1]
            while col < len(text) and text[col] in " \t\f":
                col += 1
            if col == len(text) - 1 and text[col] == "\\" and line < len(self.lines):
                line, col = line + 1, 0
                continue
            return line, col

    def name_span(self, fn: ast.FunctionDef | ast.AsyncFunctionDef) -> Span:
        """The def's name as written (``ast`` keeps the NFKC-normalized name, not its position)."""
        line, col = fn.lineno, self.col(fn.lineno, fn.col_offset)
        if type(fn) is ast.AsyncFunctionDef:
            line, col = self._skip_blanks(line, col + len("async"))
        line, col = self._skip_blanks(line, col + len("def"))
        text, end = self.lines[line - 1], col
        while end < len(text) and text[end] not in _NAME_END:
            end += 1
        return Span(line, col, line, end)

    def decorator_line(self, decorator: ast.expr) -> int:
        """Line of the ``@`` before ``decorator``: it starts a line, maybe above the expression."""
        line = decorator.lineno
        if "@" in self.lines[line - 1][: decorator.col_offset]:
            return line
        while line > 1:
            line -= 1
            if self.lines[line - 1].lstrip().startswith("@"):
                return line
        return decorator.lineno

    def hint(self, first_line: int) -> tuple[str | None, Span | None]:
        return hint_above(self.lines, first_line)

    def jaxtyped(self, node: ast.FunctionDef | ast.AsyncFunctionDef) -> bool:
        """A parameter annotated with a jaxtyping array type (``Float[Array, "n"]``, ``Key[...]``),
        in a module that imports jaxtyping: the annotation says which arrays it takes."""
        if not self.imports_jaxtyping:
            return False
        for param in parameters(node.args):
            annotation = param.annotation
            if isinstance(annotation, ast.Constant) and isinstance(annotation.value, str):  # "Float[Array, 'n']"
                try:
                    annotation = ast.parse(annotation.value, mode="eval").body
                except SyntaxError:
                    continue
            if isinstance(annotation, ast.Subscript):
                base = annotation.value
                name = base.attr if isinstance(base, ast.Attribute) else getattr(base, "id", "")
                if name in JAXTYPING_ARRAYS:
                    return True
        return False

    @cached_property
    def imports_jaxtyping(self) -> bool:
        return "jaxtyping" in self.source and any(
            name.split(".")[0] == "jaxtyping" for module, aliases in self.walker.imports
            for name in [module, *(dotted for dotted, _ in aliases)])

    # -- transform uses inside a candidate ------------------------------------------------

    def calls(self, candidate: Candidate, handled: set[int]) -> list[TransformCall]:
        return [TransformCall(TRANSFORMS[name], name, self.span(node), self.span(transform))
                for node, transform, name in self.resolver.calls(candidate.sites, handled)]

    # -- targets --------------------------------------------------------------------------

    def targets(self) -> list[Target]:
        found: list[Target] = []
        # Module-level defs seen so far, by name, for jit-bound targets: (params, calls).
        defs: dict[str, tuple[list[str], list[TransformCall]]] = {}
        for candidate in self.walker.candidates:
            if candidate.kind == "def":
                target = self._def_target(candidate, defs)
            else:
                target = self._bound_target(candidate, defs)
            if target is not None:
                found.append(target)
        return found

    def _def_target(self, candidate: Candidate, defs: dict) -> Target | None:
        node = candidate.node
        calls = self.calls(candidate, set())
        jit = None
        for decorator in node.decorator_list:
            transform = self.resolver.decorator(decorator, candidate.scope, candidate.index)
            if transform is not None and TRANSFORMS[transform[0]] == JIT:
                jit = transform
                break
        params = [p.arg for p in parameters(node.args)]
        if candidate.owner is None:  # a module-level def: a later ``g = jax.jit(f)`` may wrap it
            defs[node.name] = (params, calls)
        first_line = self.decorator_line(node.decorator_list[0]) if node.decorator_list else node.lineno
        hint, hint_span = self.hint(first_line)
        transforms = any(c.kind != JIT for c in calls)
        annotated = not (jit or transforms or hint is not None) and self.jaxtyped(node)
        if jit is None and not transforms and hint is None and not annotated:
            return None
        nums, names = _static(jit[1]) if jit else ((), ())
        # A hint or a jaxtyping annotation names a function to trace, jitted or not (library
        # numerics are plain functions).
        kind = ("jit-decorated" if jit else "contains-transform" if transforms else "hinted" if hint is not None
                else "annotated")
        return Target(
            name=node.name,
            qualname=f"{candidate.owner}.{node.name}" if candidate.owner else node.name,
            kind=kind,
            span=self.span(node, _last_simple_statement(node)),
            name_span=self.name_span(node),
            first_line=first_line,
            params=params,
            static_argnums=nums,
            static_argnames=names,
            hint=hint,
            hint_span=hint_span,
            calls=calls,
        )

    def _bound_target(self, candidate: Candidate, defs: dict) -> Target | None:
        """``g = jax.jit(f, ...)`` and the like: the module attribute g is a jitted function."""
        stmt = candidate.node
        target = stmt.targets[0] if type(stmt) is ast.Assign else stmt.target
        bound = self.resolver.jit_bound(stmt.value, candidate.scope, candidate.index)
        if bound is None:
            return None
        wrapped, config, handled = bound
        params, calls = [], []
        if type(wrapped) is ast.Name and wrapped.id in defs:
            params, def_calls = defs[wrapped.id]
            calls = list(def_calls)
        calls += self.calls(candidate, handled)
        nums, names = _static(config)
        span = self.span(stmt)
        hint, hint_span = self.hint(span.start_line)
        return Target(
            name=wrapped.id if type(wrapped) is ast.Name else target.id,
            qualname=target.id,
            kind="jit-bound",
            span=span,
            name_span=self.span(target),
            first_line=span.start_line,
            params=params,
            bound_name=target.id,
            static_argnums=nums,
            static_argnames=names,
            hint=hint,
            hint_span=hint_span,
            calls=calls,
        )


def _parse(path: str, source: str) -> ast.Module:
    try:
        return compile(source, path, "exec", ast.PyCF_ONLY_AST, dont_inherit=True)
    except SyntaxError as err:
        raise ScanSyntaxError(err.msg, err.lineno or 1, max((err.offset or 1) - 1, 0)) from None
    except ValueError as err:  # null bytes, on Python < 3.12
        raise ScanSyntaxError(str(err), 1, 0) from None
    except RecursionError:
        raise ScanSyntaxError("too deeply nested to parse", 1, 0) from None
    except MemoryError:
        raise ScanSyntaxError("too large to parse", 1, 0) from None


@contextlib.contextmanager
def gc_paused() -> Iterator[None]:
    """The cyclic garbage collector paused for the block (and enabled again after it, if it was).

    Parsing and scanning allocate an object per AST node, scope and binding, and make no
    reference cycles: every collection the allocations trigger only rescans live objects, the
    trees already parsed included, so on a large module it costs more than the scan itself."""
    enabled = gc.isenabled()
    gc.disable()
    try:
        yield
    finally:
        if enabled:
            gc.enable()


def scan_source(path: str, source: str, tree: ast.Module | None = None) -> list[Target]:
    """The targets in ``source`` (the text of ``path``), in source order. ``tree``: the source
    already parsed (the source index's), else it is parsed here."""
    with gc_paused():
        return _scan(path, source, tree)


def _scan(path: str, source: str, tree: ast.Module | None) -> list[Target]:
    if source.startswith("\ufeff"):  # decoded without utf-8-sig: the BOM is no part of the code
        source, tree = source[1:], None
    if tree is None:
        tree = _parse(path, source)  # a broken file is reported (JX900) even without targets
    if not (mentions_jax(source) and _MAY_HAVE_TARGETS.search(source)):
        return []
    walker = Walker()
    try:
        walker.body(tree.body, MODULE_TOP)
    except SyntaxError as err:  # what CPython's compiler would reject, e.g. a module-level nonlocal
        line = err.lineno or 1
        lines = split_lines(source)
        column = char_column(lines[line - 1], (err.offset or 1) - 1) if line <= len(lines) else 0
        raise ScanSyntaxError(err.msg, line, column) from None
    found = _Targets(source, walker).targets()
    # ``f = jax.jit(f)`` rebinds f: the module attribute is the jitted object, which the
    # jit-bound target already covers, so tracing the def separately would repeat findings.
    rebound = {(t.bound_name, t.first_line) for t in found if t.kind == "jit-bound"}
    targets = [
        t
        for t in found
        if not (t.kind == "contains-transform" and any(n == t.qualname and line > t.first_line for n, line in rebound))
    ]
    return sorted(targets, key=lambda t: (t.first_line, t.span.start_line, t.span.start_col))


def scan_file(path: str) -> list[Target]:
    """Read ``path`` honoring its PEP 263 coding cookie / BOM, then scan it."""
    try:
        with tokenize.open(path) as f:
            source = f.read()
    except SyntaxError as err:  # unknown or inconsistent coding cookie
        raise ScanSyntaxError(err.msg, err.lineno or 1, 0) from None
    except UnicodeDecodeError as err:
        raise ScanSyntaxError(f"cannot decode file: {err.reason}", 1, 0) from None
    return scan_source(path, source)
