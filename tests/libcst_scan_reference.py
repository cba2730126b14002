"""The libcst scanner jaxlint used before ``jaxlint.scan`` moved to ``ast`` (tests only).

Kept verbatim as the reference for tests/test_scan_differential.py: the ``ast`` scanner must give
the same targets. It lives under tests/ rather than in the package so nothing ships or imports
it by accident (it is ~30x slower).
"""
from __future__ import annotations

import ast
import re
import tokenize
from collections.abc import Collection
from dataclasses import dataclass, field

import libcst as cst
from libcst.metadata import CodeRange, MetadataWrapper, PositionProvider, QualifiedNameProvider

from jaxlint.model import Span, Target, TransformCall
from jaxlint.scan import mentions_jax

_JIT = "jit"
# Qualified names (as libcst resolves them through imports) -> short kind.
TRANSFORMS: dict[str, str] = {
    "jax.jit": _JIT,
    "jax.api.jit": _JIT,
    "jax._src.api.jit": _JIT,
    "jax.vmap": "vmap",
    "jax.api.vmap": "vmap",
    "jax._src.api.vmap": "vmap",
    **{f"jax.lax.{k}": k for k in ("scan", "fori_loop", "while_loop", "cond", "switch", "map")},
}
_PARTIAL = frozenset({"functools.partial"})
# Kept in step with jaxlint.scan (not a libcst matter): the hint ends at a further comment.
_HINT = re.compile(r"#\s*jaxlint:\s*args(?:\s+([^#]*?))?\s*(?:#.*)?$")
_LINE_BREAK = re.compile(r"\r\n|\r|\n")  # the line endings libcst counts lines by
# Every spelling of a transform names one of these words somewhere (at least in its import),
# so a file without them has no targets and can skip libcst's costly metadata passes.
_MAY_HAVE_TARGETS = re.compile(r"\b(?:jit|vmap|lax|scan|fori_loop|while_loop|cond|switch)\b")


class ScanSyntaxError(Exception):
    """The file does not parse; line is 1-based, column 0-based (reported as JX900)."""

    def __init__(self, message: str, line: int, column: int) -> None:
        super().__init__(f"{message} ({line}:{column})")
        self.message = message
        self.line = line
        self.column = column


@dataclass
class _Candidate:
    """A module-level function/method (or jit-bound assignment) being collected."""

    node: cst.CSTNode
    calls: list[TransformCall] = field(default_factory=list)
    # For a jit-bound assignment: (bound Name, wrapped expr, params, static_argnums, static_argnames).
    bound: tuple | None = None


def _span(rng: CodeRange) -> Span:
    return Span(rng.start.line, rng.start.column, rng.end.line, rng.end.column)


def _params(fn: cst.FunctionDef) -> list[str]:
    p = fn.params
    names = [x.name.value for x in (*p.posonly_params, *p.params)]
    if isinstance(p.star_arg, cst.Param):
        names.append(p.star_arg.name.value)
    names += [x.name.value for x in p.kwonly_params]
    if p.star_kwarg is not None:
        names.append(p.star_kwarg.name.value)
    return names


def _literal(module: cst.Module, expr: cst.BaseExpression) -> object:
    try:
        return ast.literal_eval(module.code_for_node(expr))
    except (ValueError, SyntaxError, TypeError, MemoryError, RecursionError):
        return None


def _as_tuple(value: object, typ: type) -> tuple | None:
    # jax accepts a single value or a sequence; bool is an int subclass but never an argnum.
    if isinstance(value, typ) and not isinstance(value, bool):
        return (value,)
    if isinstance(value, (tuple, list)) and all(isinstance(v, typ) and not isinstance(v, bool) for v in value):
        return tuple(value)
    return None


class _Collector(cst.CSTVisitor):
    METADATA_DEPENDENCIES = (QualifiedNameProvider, PositionProvider)

    def __init__(self, module: cst.Module, lines: list[str]) -> None:
        super().__init__()
        self.module = module
        self.lines = lines
        self.targets: list[Target] = []
        self.scopes: list[cst.CSTNode] = []  # enclosing ClassDef/FunctionDef nodes
        self.current: _Candidate | None = None
        self.handled: set[int] = set()  # ids of Call nodes already recorded as part of another
        # Module-level defs seen so far, by name, for jit-bound targets: (params, calls).
        self.defs: dict[str, tuple[list[str], list[TransformCall]]] = {}

    # -- resolution helpers -------------------------------------------------------------

    def _qualified(self, expr: cst.CSTNode, table: Collection[str]) -> str | None:
        # Only plain names/attributes: libcst also reports "jax.vmap" for the Call ``jax.vmap(f)``.
        if not isinstance(expr, (cst.Name, cst.Attribute)):
            return None
        for q in sorted(self.get_metadata(QualifiedNameProvider, expr, set()), key=lambda q: q.name):
            if q.name in table:
                return q.name
        return None

    def _decorator_transform(self, expr: cst.BaseExpression) -> tuple[str, list[cst.Arg]] | None:
        """Transform used as a decorator and the keyword args configuring it.

        Accepts ``@T``, ``@partial(T, ...)`` and ``@jax.jit(...)`` (jit's decorator-factory form).
        """
        name = self._qualified(expr, TRANSFORMS)
        if name is not None:
            return name, []
        if isinstance(expr, cst.Call):
            name = self._qualified(expr.func, TRANSFORMS)
            if name is not None and TRANSFORMS[name] == _JIT and all(a.keyword for a in expr.args):
                return name, list(expr.args)
            if self._qualified(expr.func, _PARTIAL) and expr.args and expr.args[0].keyword is None:
                name = self._qualified(expr.args[0].value, TRANSFORMS)
                if name is not None:
                    return name, list(expr.args[1:])
        return None

    def _static(self, args: list[cst.Arg]) -> tuple[tuple[int, ...], tuple[str, ...]]:
        nums: tuple[int, ...] = ()
        names: tuple[str, ...] = ()
        for arg in args:
            key = arg.keyword.value if arg.keyword else None
            if key == "static_argnums":
                nums = _as_tuple(_literal(self.module, arg.value), int) or ()
            elif key == "static_argnames":
                names = _as_tuple(_literal(self.module, arg.value), str) or ()
        return nums, names

    def _pos(self, node: cst.CSTNode) -> Span:
        return _span(self.get_metadata(PositionProvider, node))

    def _hint(self, first_line: int) -> tuple[str | None, Span | None]:
        if first_line < 2 or first_line - 2 >= len(self.lines):
            return None, None
        line = self.lines[first_line - 2]
        match = _HINT.fullmatch(line.strip())
        if match is None:
            return None, None
        start = len(line) - len(line.lstrip())
        return (match.group(1) or "").strip(), Span(first_line - 1, start, first_line - 1, len(line.rstrip()))

    def _record(self, node: cst.CSTNode, transform: cst.CSTNode, qualified: str) -> None:
        if self.current is not None:
            self.current.calls.append(
                TransformCall(TRANSFORMS[qualified], qualified, self._pos(node), self._pos(transform))
            )

    # -- scopes -------------------------------------------------------------------------

    def _is_target_scope(self) -> bool:
        """Module scope, or the body of a module-level class."""
        return not self.scopes or (len(self.scopes) == 1 and isinstance(self.scopes[0], cst.ClassDef))

    def visit_ClassDef(self, node: cst.ClassDef) -> None:
        self.scopes.append(node)

    def leave_ClassDef(self, original_node: cst.ClassDef) -> None:
        self.scopes.pop()

    def visit_FunctionDef(self, node: cst.FunctionDef) -> None:
        if self.current is None and self._is_target_scope():
            self.current = _Candidate(node)
        self.scopes.append(node)

    def leave_FunctionDef(self, original_node: cst.FunctionDef) -> None:
        self.scopes.pop()
        cand = self.current
        if cand is None or cand.node is not original_node:
            return
        self.current = None
        node = original_node
        jit = None
        for dec in node.decorators:
            found = self._decorator_transform(dec.decorator)
            if found is not None and TRANSFORMS[found[0]] == _JIT:
                jit = found
                break
        if not self.scopes:  # a module-level def: a later ``g = jax.jit(f)`` may wrap it
            self.defs[node.name.value] = (_params(node), cand.calls)
        if jit is None and not any(c.kind != _JIT for c in cand.calls):
            return
        method = self.scopes[0].name.value + "." if self.scopes else ""
        first_line = self._pos(node.decorators[0] if node.decorators else node).start_line
        nums, names = self._static(jit[1]) if jit else ((), ())
        hint, hint_span = self._hint(first_line)
        self.targets.append(
            Target(
                name=node.name.value,
                qualname=method + node.name.value,
                kind="jit-decorated" if jit else "contains-transform",
                span=self._pos(node),
                name_span=self._pos(node.name),
                first_line=first_line,
                params=_params(node),
                static_argnums=nums,
                static_argnames=names,
                hint=hint,
                hint_span=hint_span,
                calls=cand.calls,
            )
        )

    # -- transform uses inside a target ---------------------------------------------------

    def visit_Decorator(self, node: cst.Decorator) -> bool | None:
        if self.current is None:
            return None
        # The target's own decorators (``@jax.jit(static_argnums=0)``) are not calls in its body.
        if any(d is node for d in getattr(self.current.node, "decorators", ())):
            return False
        found = self._decorator_transform(node.decorator)
        if found is not None:
            self.handled.add(id(node.decorator))
            self._record(node.decorator, node.decorator, found[0])
        return None

    def visit_Call(self, node: cst.Call) -> None:
        if self.current is None or id(node) in self.handled:
            return
        # Applied form ``jax.vmap(f)(x)``: one call spanning the application.
        if isinstance(node.func, cst.Call):
            name = self._qualified(node.func.func, TRANSFORMS)
            if name is not None:
                self.handled.add(id(node.func))
                self._record(node, node.func, name)
                return
        name = self._qualified(node.func, TRANSFORMS)
        if name is not None:
            self._record(node, node, name)

    # -- jit-bound assignments ------------------------------------------------------------

    def _jit_bound(self, target: cst.BaseExpression, value: cst.BaseExpression | None) -> None:
        if self.scopes or self.current is not None or not isinstance(target, cst.Name):
            return
        if not isinstance(value, cst.Call):
            return
        positional = [a for a in value.args if a.keyword is None and not a.star]
        name = self._qualified(value.func, TRANSFORMS)
        if name is not None and TRANSFORMS[name] == _JIT and positional:
            wrapped, config = positional[0].value, list(value.args)
        else:
            # ``partial(jax.jit, ...)(f)`` and ``jax.jit(static_argnums=...)(f)``.
            found = self._decorator_transform(value.func)
            if found is None or TRANSFORMS[found[0]] != _JIT or len(positional) != 1:
                return
            wrapped, config = positional[0].value, found[1]
            self.handled.add(id(value.func))
        self.handled.add(id(value))
        params, calls = [], []
        if isinstance(wrapped, cst.Name) and wrapped.value in self.defs:
            params, def_calls = self.defs[wrapped.value]
            calls = list(def_calls)
        nums, names = self._static(config)
        self.current = _Candidate(value, calls, (target, wrapped, params, nums, names))

    def _finish_bound(self, stmt: cst.CSTNode) -> None:
        cand, self.current = self.current, None
        target, wrapped, params, nums, names = cand.bound
        span = self._pos(stmt)
        hint, hint_span = self._hint(span.start_line)
        self.targets.append(
            Target(
                name=wrapped.value if isinstance(wrapped, cst.Name) else target.value,
                qualname=target.value,
                kind="jit-bound",
                span=span,
                name_span=self._pos(target),
                first_line=span.start_line,
                params=params,
                bound_name=target.value,
                static_argnums=nums,
                static_argnames=names,
                hint=hint,
                hint_span=hint_span,
                calls=cand.calls,
            )
        )

    def visit_Assign(self, node: cst.Assign) -> None:
        if len(node.targets) == 1:
            self._jit_bound(node.targets[0].target, node.value)

    def leave_Assign(self, original_node: cst.Assign) -> None:
        if self.current is not None and self.current.bound is not None:
            self._finish_bound(original_node)

    def visit_AnnAssign(self, node: cst.AnnAssign) -> None:
        self._jit_bound(node.target, node.value)

    def leave_AnnAssign(self, original_node: cst.AnnAssign) -> None:
        self.leave_Assign(original_node)  # type: ignore[arg-type]


def scan_source(path: str, source: str) -> list[Target]:
    """The targets in ``source`` (the text of ``path``), in source order."""
    if not (mentions_jax(source) and _MAY_HAVE_TARGETS.search(source)):
        _check_syntax(path, source)  # still report JX900 for a broken file
        return []
    try:
        module = cst.parse_module(source)
    except cst.ParserSyntaxError as err:
        raise _syntax_error(path, source, err) from None
    collector = _Collector(module, _LINE_BREAK.split(source))
    MetadataWrapper(module, unsafe_skip_copy=True).visit(collector)
    # ``f = jax.jit(f)`` rebinds f: the module attribute is the jitted object, which the
    # jit-bound target already covers, so tracing the def separately would repeat findings.
    rebound = {(t.bound_name, t.first_line) for t in collector.targets if t.kind == "jit-bound"}
    targets = [
        t
        for t in collector.targets
        if not (t.kind == "contains-transform" and any(n == t.qualname and line > t.first_line for n, line in rebound))
    ]
    return sorted(targets, key=lambda t: (t.first_line, t.span.start_line, t.span.start_col))


def _check_syntax(path: str, source: str) -> None:
    try:
        compile(source, path, "exec", ast.PyCF_ONLY_AST, dont_inherit=True)
    except SyntaxError as err:
        raise ScanSyntaxError(err.msg, err.lineno or 1, max((err.offset or 1) - 1, 0)) from None
    except ValueError as err:  # null bytes, on Python < 3.12
        raise ScanSyntaxError(str(err), 1, 0) from None


def _syntax_error(path: str, source: str, err: cst.ParserSyntaxError) -> ScanSyntaxError:
    # libcst often reports the line after the real error; CPython's parser pinpoints it.
    try:
        compile(source, path, "exec", ast.PyCF_ONLY_AST, dont_inherit=True)
    except SyntaxError as py_err:
        if py_err.lineno:
            return ScanSyntaxError(py_err.msg, py_err.lineno, max((py_err.offset or 1) - 1, 0))
    except (ValueError, RecursionError, MemoryError):
        pass
    return ScanSyntaxError(err.message, err.raw_line, err.raw_column)


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
