"""JX206 weak-type-recompile: a jitted function's output fed back as its own argument in a loop
(``s = step(s, x)``, ``params, opt = step(params, opt, batch)``) from a Python scalar, which jit
traces weakly typed, while the function returns it strongly typed: the second call compiles again.

A program rule over the target's traced signature: which inputs are weak and which outputs are not
is read on the IR (``Value.weak``, with ``Program.input_paths``/``output_paths`` naming each leaf);
the loop, the feedback and the Python scalar the state starts from are read on the source. Both
must agree: a Python scalar in the source whose traced input is not weak (a hint said ``f32[]``)
is not reported, nor is a weak input whose output stays weak (one compile: measured, JAX 0.4.35
and 0.10.2). The fix casts the starting literal to the dtype the function returns
(``jnp.float32(0.0)``), offered when that dtype is the input's; the fixer then proves it on the
traced function's values (the weak input runs as a Python scalar, worker/values.py).
"""
from __future__ import annotations

import ast
from dataclasses import dataclass
from typing import Iterable, Iterator

from jaxlint.model import Edit, Finding, Fix
from jaxlint.rules.base import ProgramContext, Rule
from jaxlint.rules.jx203_recompilation_hazard.loops import loop_kind, traced
from jaxlint.scan.index import DEFS, SourceIndex

# Measured by hand (bench/bench_weak_carry.py): the page example's second compile, a busy machine.
EXTRA_COMPILE = "50-200 ms for a small step on a 2-core CPU, JAX 0.4.35 to 0.10.2"


@dataclass(frozen=True)
class _Start:
    """A leaf of a fed-back argument that starts as a Python scalar."""

    name: str  # the variable fed back
    literal: ast.expr  # the scalar it starts as (``0.0``, ``-1``)
    path: str  # the leaf's path inside the argument (``""``, ``[0]``)


class WeakTypeRecompile(Rule):
    code = "JX206"
    name = "weak-type-recompile"
    summary = ("A jitted function's output fed back as its argument in a loop, starting from a Python "
               "scalar (weakly typed) while the output is strongly typed: the second call compiles again.")
    severity = "warning"
    fix = "safe"
    fixes_calls = True  # the cast is at the loop's start: see the fixer's check of the traced arguments
    reads_helpers = False  # the call sites are read in the target's own file

    @classmethod
    def check_program(cls, ctx: ProgramContext) -> Iterable[Finding]:
        program, target = ctx.program, ctx.target
        if target.kind not in ("jit-decorated", "jit-bound") or not ctx.in_target_file or ctx.index.tree is None:
            return
        if program.input_paths is None or program.output_paths is None:
            return
        name = target.bound_name or target.name
        inputs = dict(zip(program.input_paths, program.top.inputs))
        outputs = {p: v for p, v in zip(program.output_paths, program.top.outputs) if p is not None}
        for call in _loop_calls(ctx.index, name):
            flips = []
            for param, out_path, start in _fed_back(ctx.index, call, target):
                value_in = inputs.get(param + start.path)
                value_out = outputs.get(out_path + start.path)
                if value_in is None or value_out is None or not value_in.weak or value_out.weak \
                        or value_in.shape != value_out.shape:
                    continue
                flips.append((start, str(value_in.dtype), str(value_out.dtype)))
            if flips:
                yield _finding(cls, ctx, call, name, flips)


def _loop_calls(index: SourceIndex, name: str) -> Iterator[ast.Call]:
    """Calls of the module-level ``name`` in a loop that no jitted function traces (a jit inside
    a traced function is inlined, compiled once with it)."""
    for call in index.calls:
        if not isinstance(call.func, ast.Name) or call.func.id != name or index.shadowed(call.func):
            continue
        loops, _, scope = index.loops_around(call)
        if loops and not traced(scope, index):
            yield call


def _fed_back(index: SourceIndex, call: ast.Call, target: ast.AST) -> Iterator[tuple[str, str, _Start]]:
    """(parameter, output path, start) for each argument the assignment around ``call`` binds
    again from the call's output and that started as a Python scalar before the loop."""
    statement = index.parent(call)
    if not isinstance(statement, ast.Assign) or statement.value is not call or len(statement.targets) != 1:
        return
    bound = statement.targets[0]
    if isinstance(bound, ast.Name):
        outputs = {bound.id: ""}
    elif isinstance(bound, (ast.Tuple, ast.List)) and all(isinstance(e, ast.Name) for e in bound.elts):
        outputs = {e.id: f"[{k}]" for k, e in enumerate(bound.elts)}
    else:
        return
    params = target.params  # type: ignore[attr-defined]
    passed = [(params[i], a) for i, a in enumerate(call.args) if i < len(params) and not isinstance(a, ast.Starred)]
    passed += [(k.arg, k.value) for k in call.keywords if k.arg is not None]
    loop = index.loops_around(call)[0][0]  # its start: before this loop, or in an outer one's body
    for param, argument in passed:
        if isinstance(argument, ast.Name) and argument.id in outputs:
            for start in _starts(index, argument.id, loop):
                yield param, outputs[argument.id], start


def _starts(index: SourceIndex, name: str, loop: ast.AST) -> list[_Start]:
    """The Python scalar leaves of the value ``name`` holds when ``loop`` starts: its last
    assignment before the loop in the same block, else in the enclosing blocks (an outer loop's
    body: a state reset each epoch; then the block before the outer loop), within the scope."""
    child, parent = loop, index.parent(loop)
    while parent is not None:
        for body in _bodies(parent):
            if any(s is child for s in body):
                before = body[:next(i for i, s in enumerate(body) if s is child)]
                for statement in reversed(before):
                    value = _assigned(statement, name)
                    if value is not None:
                        return list(_scalar_leaves(name, value, ""))
                    if _rebinds(statement, name):
                        return []
        if isinstance(parent, (*DEFS, ast.Lambda, ast.ClassDef, ast.Module)):
            return []
        child, parent = parent, index.parent(parent)
    return []


def _bodies(node: ast.AST) -> list[list[ast.stmt]]:
    return [getattr(node, f) for f in ("body", "orelse", "finalbody") if isinstance(getattr(node, f, None), list)]


def _assigned(statement: ast.stmt, name: str) -> ast.expr | None:
    """The value ``statement`` assigns to ``name`` alone (``s = 0.0``, ``a = b = 0.0``, ``s, t = 0.0, 1``)."""
    if not isinstance(statement, ast.Assign):
        return None
    for bound in statement.targets:
        if isinstance(bound, ast.Name) and bound.id == name:
            return statement.value
        if isinstance(bound, ast.Tuple) and isinstance(statement.value, ast.Tuple) \
                and len(bound.elts) == len(statement.value.elts):
            for element, value in zip(bound.elts, statement.value.elts):
                if isinstance(element, ast.Name) and element.id == name:
                    return value
    return None


def _rebinds(statement: ast.stmt, name: str) -> bool:
    """``statement`` binds ``name`` some other way (``s += 1``, a loop target, ``with ... as s``)."""
    return any(isinstance(n, ast.Name) and n.id == name and not isinstance(n.ctx, ast.Load)
               for n in ast.walk(statement))


def _scalar_leaves(name: str, value: ast.expr, path: str) -> Iterator[_Start]:
    if _is_scalar(value):
        yield _Start(name, value, path)
    elif isinstance(value, (ast.Tuple, ast.List)):
        for k, element in enumerate(value.elts):
            yield from _scalar_leaves(name, element, f"{path}[{k}]")


def _is_scalar(node: ast.expr) -> bool:
    """A Python int or float literal (bool is not weakly typed; complex is left out)."""
    if isinstance(node, ast.UnaryOp) and isinstance(node.op, (ast.USub, ast.UAdd)):
        node = node.operand
    return isinstance(node, ast.Constant) and type(node.value) in (int, float)


def _finding(rule: type[Rule], ctx: ProgramContext, call: ast.Call, name: str,
             flips: list[tuple[_Start, str, str]]) -> Finding:
    index = ctx.index
    start, dtype_in, dtype_out = flips[0]
    leaf = f"`{start.name}{start.path}`"
    scalar = "float" if isinstance(ast.literal_eval(start.literal), float) else "int"
    changes = "" if dtype_in == dtype_out else f" and as {dtype_out}"
    message = (f"`{name}` is called in a {loop_kind(index.loops_around(call)[0][0])} with its output fed back "
               f"as {leaf}, which starts as the Python {scalar} `{index.text(start.literal)}`: jit traces it "
               f"weakly typed ({dtype_in}) on the first call, `{name}` returns it strongly typed{changes}, so "
               f"the second call traces and compiles `{name}` again")
    if len(flips) > 1:
        message += f" (so does {', '.join(f'`{s.name}{s.path}`' for s, _, _ in flips[1:])})"
    message += (f". Cost: one extra compile ({EXTRA_COMPILE}), not one per step; the first two calls run "
                "different executables.")
    namespace = _jnp(index)
    if namespace is None:
        return ctx.finding(rule, message + " Start it as a JAX scalar of the dtype it returns.", index.span(call))
    edits: dict = {}
    casts = []
    for start, _, out in flips:
        text = f"{namespace}.{out}({index.text(start.literal)})"
        if index.span(start.literal) not in edits:
            edits[index.span(start.literal)] = text
            casts.append(f"`{start.name}{start.path}` as `{text}`")
    said = " and ".join(casts)
    message += f" Start {said}, the dtype{'s' if len(casts) > 1 else ''} `{name}` returns."
    # Same dtype: the cast changes no value (the fixer compares the first call's outputs); a
    # changed dtype (an int that becomes float) may change what the first call computes.
    same = all(i == o for _, i, o in flips)
    fix = Fix("safe" if same else "display-only", f"Start {said}",
              tuple(Edit(span, text) for span, text in edits.items()))
    return ctx.finding(rule, message, index.span(call), fix)


def _jnp(index: SourceIndex) -> str | None:
    """How the module names ``jax.numpy`` at its top level (``jnp``, else ``jax.numpy``), if it does."""
    found = None
    for statement in index.tree.body if index.tree is not None else ():
        if isinstance(statement, ast.Import):
            for alias in statement.names:
                if alias.name == "jax.numpy" and alias.asname:
                    return alias.asname
                if alias.name in ("jax", "jax.numpy") and alias.asname is None:
                    found = "jax.numpy"
        elif isinstance(statement, ast.ImportFrom) and statement.module == "jax" and statement.level == 0:
            for alias in statement.names:
                if alias.name == "numpy":
                    return alias.asname or "numpy"
    return found
