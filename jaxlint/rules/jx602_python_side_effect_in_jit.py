"""JX602 python-side-effect-in-jit: print or store a traced value from inside a jitted function.

Under ``jax.jit`` the body runs once, at trace time, with tracers for the non-static arguments:
``print(x)`` prints a tracer (and nothing on later calls), and a tracer stored in a global, a
closure list or an attribute of a static object outlives the trace (a leaked tracer).

The rule reads the body of a jitted target (its decorated def, or the def a module-level
``f = jax.jit(g)`` wraps) in statement order and follows which names hold traced values: the
non-static parameters, and anything computed from them except static metadata (``.shape``,
``.dtype``, ``len(...)``). Nested defs and lambdas are not entered: their arguments may be static.
"""
from __future__ import annotations

import ast
from typing import Iterable, Iterator

from jaxlint.model import Finding, Target
from jaxlint.rules.base import ProgramContext, Rule
from jaxlint.scan.index import SourceIndex

# Attributes of an array that are static Python values under jit.
STATIC_ATTRS = frozenset({"shape", "dtype", "ndim", "size", "itemsize", "nbytes", "weak_type",
                          "sharding", "aval", "device", "devices"})
# Builtins whose result is static for a traced argument.
STATIC_BUILTINS = frozenset({"len", "type", "isinstance", "id", "hasattr", "callable", "getattr"})
# ``jnp.shape(x)``, ``np.ndim(x)``, ``jnp.result_type(x)``: static metadata functions.
STATIC_FUNCTIONS = frozenset({"shape", "ndim", "size", "result_type", "issubdtype", "isdtype"})
# Methods of a non-local container that store their argument in it.
STORE_METHODS = frozenset({"append", "extend", "insert", "appendleft", "update", "setdefault"})


class PythonSideEffectInJit(Rule):
    code = "JX602"
    name = "python-side-effect-in-jit"
    summary = "A `print` or a store of a traced value inside a jitted function runs once, at trace time."
    severity = "warning"
    reads_helpers = False  # reads the jitted function's own body

    @classmethod
    def check_program(cls, ctx: ProgramContext) -> Iterable[Finding]:
        target = ctx.target
        if target.kind not in ("jit-decorated", "jit-bound"):
            return  # a function that is not jitted runs eagerly: print shows real values
        tree = ctx.index.tree
        if tree is None:
            return
        function = _find_def(ctx.index, target)
        if function is None:
            return
        analysis = _Body(function, target.static_argnums, target.static_argnames)
        for node, message in analysis.findings():
            span = ctx.index.span(node)
            yield ctx.finding(cls, f"{message} (in jitted `{target.qualname}`)", span)


def _find_def(index: SourceIndex, target: Target) -> ast.FunctionDef | None:
    by_name = index.memo("jx602.defs", lambda: _defs_by_name(index.functions))
    defs = by_name.get(target.name, [])
    if target.kind == "jit-decorated":
        return next((n for n in defs if n.lineno == target.name_span.start_line), None)
    # jit-bound: the module-level def the assignment wraps (the last one above it).
    tree = index.tree
    above = [n for n in defs if n in tree.body and n.lineno < target.span.start_line] if tree is not None else []
    return max(above, key=lambda n: n.lineno) if above else None


def _defs_by_name(functions: list[ast.AST]) -> dict[str, list[ast.FunctionDef]]:
    found: dict[str, list[ast.FunctionDef]] = {}
    for node in functions:
        if isinstance(node, ast.FunctionDef):
            found.setdefault(node.name, []).append(node)
    return found


class _Body:
    def __init__(self, function: ast.FunctionDef, static_argnums: tuple[int, ...],
                 static_argnames: tuple[str, ...]) -> None:
        self.function = function
        args = function.args
        positional = [a.arg for a in (*args.posonlyargs, *args.args)]
        static = {positional[i] for i in static_argnums if -len(positional) <= i < len(positional)}
        static |= set(static_argnames)
        params = positional + [a.arg for a in args.kwonlyargs]
        params += [a.arg for a in (args.vararg, args.kwarg) if a is not None]
        self.static = static
        self.traced: set[str] = {p for p in params if p not in static}
        self.declared: set[str] = set()  # names declared global/nonlocal
        self.local: set[str] = set(params)
        for node in _own_nodes(function):
            if isinstance(node, (ast.Global, ast.Nonlocal)):
                self.declared.update(node.names)
            elif isinstance(node, ast.Name) and isinstance(node.ctx, ast.Store):
                self.local.add(node.id)
            elif isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef)) and node is not function:
                self.local.add(node.name)
            elif isinstance(node, (ast.Import, ast.ImportFrom)):
                self.local.update((a.asname or a.name).split(".")[0] for a in node.names)
        self.local -= self.declared
        self.found: dict[int, tuple[ast.AST, str]] = {}

    def findings(self) -> list[tuple[ast.AST, str]]:
        self._block(self.function.body)
        return list(self.found.values())

    # -- which expressions hold traced values ------------------------------------------

    def tainted(self, e: ast.AST | None) -> bool:
        if e is None or isinstance(e, (ast.Constant, ast.Lambda)):
            return False
        if isinstance(e, ast.Name):
            return e.id in self.traced
        if isinstance(e, ast.Attribute):
            return e.attr not in STATIC_ATTRS and self.tainted(e.value)
        if isinstance(e, ast.Subscript):
            return self.tainted(e.value)
        if isinstance(e, ast.Call):
            func = e.func
            if isinstance(func, ast.Name) and func.id in STATIC_BUILTINS:
                return False
            if isinstance(func, ast.Attribute) and func.attr in STATIC_FUNCTIONS and not self.tainted(func.value):
                return False
            args = [*e.args, *(k.value for k in e.keywords)]
            return any(self.tainted(a) for a in args) or (
                isinstance(func, ast.Attribute) and self.tainted(func.value))
        if isinstance(e, (ast.ListComp, ast.SetComp, ast.GeneratorExp, ast.DictComp)):
            return any(self.tainted(g.iter) for g in e.generators)
        return any(self.tainted(child) for child in ast.iter_child_nodes(e) if isinstance(child, ast.expr))

    def _bind(self, target: ast.AST, traced: bool) -> None:
        if isinstance(target, ast.Name):
            if traced:
                self.traced.add(target.id)
            else:
                self.traced.discard(target.id)
        elif isinstance(target, (ast.Tuple, ast.List)):
            for element in target.elts:
                self._bind(element, traced)
        elif isinstance(target, ast.Starred):
            self._bind(target.value, traced)

    # -- statements, in order ---------------------------------------------------------

    def _block(self, body: list[ast.stmt]) -> None:
        for stmt in body:
            self._stmt(stmt)

    def _stmt(self, stmt: ast.stmt) -> None:
        if isinstance(stmt, (ast.Assign, ast.AnnAssign, ast.AugAssign)):
            value = stmt.value
            traced = self.tainted(value)
            targets = stmt.targets if isinstance(stmt, ast.Assign) else [stmt.target]
            for target in targets:
                if traced:
                    self._check_store(stmt, target)
                if isinstance(stmt, ast.AugAssign):
                    traced = traced or self.tainted(target)
                self._bind(target, traced)
        elif isinstance(stmt, ast.Expr) and isinstance(stmt.value, ast.Call):
            self._check_call(stmt, stmt.value)
        elif isinstance(stmt, (ast.For, ast.AsyncFor)):
            for _ in range(2):  # twice: names traced in one iteration are traced in the next
                self._bind_loop_target(stmt.target, stmt.iter)
                self._block(stmt.body)
            self._block(stmt.orelse)
        elif isinstance(stmt, ast.While):
            for _ in range(2):
                self._block(stmt.body)
            self._block(stmt.orelse)
        elif isinstance(stmt, ast.If):
            before = set(self.traced)
            self._block(stmt.body)
            after_body, self.traced = self.traced, before
            self._block(stmt.orelse)
            self.traced |= after_body  # traced on either path: maybe traced after the if
        elif isinstance(stmt, (ast.With, ast.AsyncWith)):
            for item in stmt.items:
                if item.optional_vars is not None:
                    self._bind(item.optional_vars, self.tainted(item.context_expr))
            self._block(stmt.body)
        elif isinstance(stmt, ast.Try):
            for block in (stmt.body, *(h.body for h in stmt.handlers), stmt.orelse, stmt.finalbody):
                self._block(block)
        elif isinstance(stmt, (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef)):
            self.traced.discard(stmt.name)

    def _bind_loop_target(self, target: ast.AST, iterable: ast.expr) -> None:
        if isinstance(iterable, ast.Call) and isinstance(iterable.func, ast.Name) \
                and iterable.func.id == "enumerate" and iterable.args \
                and isinstance(target, ast.Tuple) and len(target.elts) == 2:
            self._bind(target.elts[0], False)  # the counter is a Python int
            self._bind(target.elts[1], self.tainted(iterable.args[0]))
        else:
            self._bind(target, self.tainted(iterable))

    # -- the side effects ---------------------------------------------------------------

    def _nonlocal(self, name: str) -> bool:
        """A module global or a closure variable: it outlives the trace."""
        return name not in self.local

    def _report(self, node: ast.AST, message: str) -> None:
        self.found.setdefault(id(node), (node, message))

    def _check_call(self, stmt: ast.stmt, call: ast.Call) -> None:
        func = call.func
        if isinstance(func, ast.Name) and func.id == "print" and "print" not in self.local:
            shown = [a for a in call.args if self.tainted(a)]
            if shown:
                self._report(stmt, (
                    f"print({_names(shown)}) prints a traced value: under jax.jit it runs once, when "
                    "JAX traces the function, and prints a tracer (an abstract shape such as "
                    "Traced<ShapedArray(float32[3])>), not the values; later calls print nothing. "
                    "Use jax.debug.print (e.g. jax.debug.print(\"{}\", x)) or return the value"))
        elif isinstance(func, ast.Attribute) and func.attr in STORE_METHODS \
                and isinstance(func.value, ast.Name) and self._nonlocal(func.value.id):
            if any(self.tainted(a) for a in [*call.args, *(k.value for k in call.keywords)]):
                self._report(stmt, (
                    f"`{func.value.id}.{func.attr}(...)` stores a traced value in `{func.value.id}`, "
                    "which is not local to the function: it runs once, at trace time, and leaves a "
                    "tracer in it that outlives the trace (using it later raises "
                    "UnexpectedTracerError; later calls add nothing). Return the value instead"))

    def _check_store(self, stmt: ast.stmt, target: ast.AST) -> None:
        if isinstance(target, (ast.Tuple, ast.List)):
            for element in target.elts:
                self._check_store(stmt, element)
            return
        if isinstance(target, ast.Starred):
            self._check_store(stmt, target.value)
            return
        where = None
        if isinstance(target, ast.Name) and target.id in self.declared:
            where = f"the global `{target.id}`"
        elif isinstance(target, (ast.Attribute, ast.Subscript)) and isinstance(target.value, ast.Name):
            base = target.value.id
            # ``self`` (or any object) passed as a static argument, or a global/closure object:
            # the caller's own object. A traced (pytree) ``self`` is rebuilt for the trace.
            if (base in self.static or self._nonlocal(base)) and base not in self.traced:
                shown = ast.unparse(target)
                where = f"`{shown}`"
        if where is not None:
            self._report(stmt, (
                f"assigns a traced value to {where}, which outlives the trace: under jax.jit the "
                "assignment runs once, at trace time, and stores a tracer (using it later raises "
                "UnexpectedTracerError; later calls store nothing). Return the value instead"))


def _own_nodes(function: ast.FunctionDef) -> Iterator[ast.AST]:
    """Nodes of ``function``'s own scope: nested defs, lambdas and comprehensions not entered."""
    stack: list[ast.AST] = list(function.body)
    while stack:
        node = stack.pop()
        yield node
        if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef, ast.Lambda,
                             ast.ListComp, ast.SetComp, ast.DictComp, ast.GeneratorExp)):
            continue
        stack.extend(ast.iter_child_nodes(node))


def _names(args: list[ast.expr]) -> str:
    return ", ".join(ast.unparse(a) for a in args)
