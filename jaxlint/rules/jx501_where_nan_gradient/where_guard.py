"""JX501's where guard: ``jnp.where(x > 0, jnp.log(x), 0.0)`` has a NaN gradient at x=0.

In the jaxpr ``jnp.where(pred, a, b)`` is ``select_n(pred, b, a)``. Its transpose sends a zero
cotangent to the excluded elements of ``a``; if ``a`` was computed (through elementwise ops) by an
op whose derivative is infinite or NaN at those elements (log at 0, sqrt at x <= 0, ...), the chain
rule multiplies 0 by inf: NaN. We report a ``where`` call of the analyzed file (the call at the
select_n's location) whose predicate is, in the jaxpr, a comparison of that op's very input ``x``
(the same value) with constants, when some excluded ``x`` makes the derivative non-finite; the
point is found exactly by evaluating the predicate and the op's bad set at every interval boundary.
The program decides, not the spelling: ``mask = x > 0`` on a line of its own, ``y = jnp.log(x)``
before the where, or the log in a helper of the file give the finding the inline form gives. A
division by a sum over the entries the same where keeps is the second shape (masked_sum.py).

Quiet: the double where (the op's input is then a select_n, not ``x``); library functions whose
gradient is their own rule (softplus, xlogy: custom_jvp) or whose own where guards the op (sinc);
selects that are not a ``where`` call of the source. The source gives only the place and the fix:
the double-where rewrite is offered when each unsafe op is spelled in the where's own branch
(``jnp.log(x)``, ``1 / x``), where the predicate's text means the same thing; otherwise the
finding is reported without a fix, its message saying what to guard.
"""
from __future__ import annotations

import ast
import dataclasses
from typing import Iterator, NamedTuple, cast

from jaxlint.fixes.double_where import build_fix, guard_edit
from jaxlint.ir import Location, Op, Value, patterns
from jaxlint.model import Fix, Span
from jaxlint.rules.base import ProgramContext
from jaxlint.rules.jx501_where_nan_gradient.masked_sum import masked_denominator
from jaxlint.rules.jx501_where_nan_gradient.predicate import candidates, predicate_of
from jaxlint.rules.jx501_where_nan_gradient.reverse_mode import reverse_reachable
from jaxlint.rules.jx501_where_nan_gradient.unsafe_ops import PASS, UNSAFE, live, spelled_at, strip
from jaxlint.scan.index import SourceIndex
from jaxlint.text import offset_of


class _Hit(NamedTuple):
    span: Span  # the unsafe op's place
    primitive: str
    node: ast.expr | None  # the unsafe call or operator of the source (``jnp.log(x)``), when spelled so
    argument: ast.expr | None  # its operand in the source (``x``), when known
    spelled: bool  # ``node`` is the op's own call or operator (else a library call holding it)
    safe: str
    witness: str | None  # an excluded value of x where the derivative is not finite; None: a masked sum
    branch_is_true: bool  # the unsafe op is in the where's second argument (else its third)
    total: Value | None = None  # a masked sum's denominator (its point, 0, is no test of the program's)


def where_findings(ctx: ProgramContext) -> Iterator[tuple[str, Span, Fix | None, tuple[Value, ...]]]:
    """(message, span, fix, points) of each where call of the source that excludes an unsafe point,
    once however often it was traced. ``points``: the masked sums' denominators when every hit is
    one; none when the where's predicate tests the point itself (the program says it is reached)."""
    found: dict[Span, tuple[ast.Call, list[_Hit]]] = {}
    for op in ctx.program.walk():
        if op.primitive != "select_n" or len(op.inputs) != 3 or not live(op.outputs[0]) \
                or not reverse_reachable(op.outputs[0]):
            continue
        for case in (1, 2):
            for hit, unsafe, leaves in _hits(ctx, op, case):
                where = _where_for(ctx, op, unsafe, leaves)
                if where is None:
                    continue
                hits = found.setdefault(ctx.index.span(where), (where, []))[1]
                if all(hit.span != other.span for other in hits):
                    hits.append(hit)
    for span, (where, hits) in found.items():
        hits.sort(key=lambda hit: (hit.span.start_line, hit.span.start_col))  # source order
        points = tuple(hit.total for hit in hits if hit.total is not None)
        yield _message(ctx.index, where, hits), span, _fix(ctx.index, where, hits), \
            points if len(points) == len(hits) else ()


def _hits(ctx: ProgramContext, select: Op, case: int) -> Iterator[tuple[_Hit, Op, list[Op]]]:
    """Unsafe ops of this file feeding case ``case`` of ``select`` that the predicate excludes at a
    bad point: the hit, the op and the predicate's comparisons (none for a masked sum)."""
    branch_is_true = case == 2  # select_n(pred, on_false, on_true)
    for op in _unsafe_ops(select.inputs[case]):
        if op.custom_derivative or op.location is None or op.location.path != ctx.path:
            continue
        spec = UNSAFE[op.primitive]
        node, argument, spelled = spelled_at(ctx.index, op)
        total = masked_denominator(select, case, op) if op.primitive == "div" else None
        if total is not None:
            yield _Hit(op.location.span, op.primitive, node, argument, spelled, spec.safe, None, branch_is_true,
                       total), op, []
            continue
        x = strip(op.inputs[spec.arg])
        predicate = predicate_of(select.inputs[0], x)
        if predicate is None or not patterns.inexact(x) or not patterns.differentiable(x):
            continue
        test, leaves, constants = predicate
        witness = next((p for p in candidates(constants) if _excludes(test(p), branch_is_true) and spec.bad(p, op)),
                       None)
        if witness is not None:
            hit = _Hit(op.location.span, op.primitive, node, argument, spelled, spec.safe, _number(witness),
                       branch_is_true)
            yield hit, op, leaves


def _excludes(kept: bool | None, branch_is_true: bool) -> bool:
    """The where surely discards the branch where the test says ``kept`` (None: other booleans decide)."""
    return kept is not None and kept != branch_is_true


def _unsafe_ops(value: Value) -> list[Op]:
    """Ops of ``UNSAFE`` that ``value`` is computed from through elementwise differentiable ops."""
    found, stack, seen = [], [value], set()
    while stack:
        op = stack.pop().producer
        if op is None or id(op) in seen or op.primitive not in PASS:
            continue  # a select_n (the double where's guard), a reduction, ...: stop
        seen.add(id(op))
        if op.primitive in UNSAFE:
            found.append(op)
        stack.extend(v for v in op.inputs if patterns.inexact(v))
    return found


def _where_for(ctx: ProgramContext, select: Op, unsafe: Op, leaves: list[Op]) -> ast.Call | None:
    """The source's where call of ``select``: the call at its location, else (a location JAX < 0.7
    kept from another call of its cached ``where``) the where whose predicate argument holds
    every comparison of the predicate, when it is written inline."""
    where = _where_at(ctx, select)
    if where is not None and (not ctx.program.stale_library_tracebacks or _same_call(ctx, select, unsafe)):
        return where
    if not leaves or any(leaf.location is None or leaf.location.path != ctx.path for leaf in leaves):
        return None
    return _where_holding(ctx.index, [cast(Location, leaf.location).span for leaf in leaves])


def _where_at(ctx: ProgramContext, select: Op) -> ast.Call | None:
    """The source's ``where(pred, a, b)`` call at the select's location (any module prefix, three
    positional arguments), else None: a select of a library function, a cond under vmap, ..."""
    if select.location is None or select.location.path != ctx.path:
        return None
    call = ctx.index.node_at(select.location.span, ast.Call)
    return call if call is not None and _is_where(ctx.index, call) else None


def _is_where(index: SourceIndex, call: ast.Call) -> bool:
    """``where(pred, a, b)`` or ``lax.select(pred, a, b)`` (the same select_n), plain arguments."""
    if len(call.args) != 3 or call.keywords or any(isinstance(a, ast.Starred) for a in call.args):
        return False
    return index.callee(call) == "where" or _is_lax_select(index, call)


def _is_lax_select(index: SourceIndex, call: ast.Call) -> bool:
    return index.callee(call) == "select" and "jax.lax.select" in index.call_names(call)


def _same_call(ctx: ProgramContext, select: Op, unsafe: Op) -> bool:
    """The select and the unsafe op were traced in one call of one function (JAX < 0.7: a cached
    where's select may keep the traceback of another function): the unsafe op's stack passes
    through the function holding the select, from the same callers."""
    select_stack, unsafe_stack = ctx.program.call_stack(select), ctx.program.call_stack(unsafe)
    depth = len(select_stack) - 1
    if depth < 0 or depth >= len(unsafe_stack) or select_stack[:depth] != unsafe_stack[:depth]:
        return False
    frame = unsafe_stack[depth]
    return frame.path == ctx.path and _function_at(ctx.index, frame.span) is _function_at(
        ctx.index, select_stack[depth].span)


def _function_at(index: SourceIndex, span: Span) -> ast.AST | None:
    """The innermost def or lambda around the expression at ``span`` (None: module level or unknown)."""
    node = index.node_at(span, ast.expr)
    defs = index.enclosing_defs(node) if node is not None else []
    return defs[0] if defs else None


def _where_holding(index: SourceIndex, leaf_spans: list[Span]) -> ast.Call | None:
    """The innermost where call whose predicate argument holds every comparison of the predicate."""
    where_calls = index.memo("jx501.where_calls", lambda: tuple(c for c in index.calls if _is_where(index, c)))
    holding = [(index.span(c.args[0]), c) for c in where_calls]
    holding = [(s, c) for s, c in holding if all(s.contains(leaf) for leaf in leaf_spans)]
    if not holding:
        return None
    source = index.source
    size = lambda s: offset_of(source, s.end_line, s.end_col) - offset_of(source, s.start_line, s.start_col)  # noqa: E731
    return min(holding, key=lambda sc: size(sc[0]))[1]


def _number(p: float) -> str:
    return str(int(p)) if float(p).is_integer() else repr(p)


def _fix(index: SourceIndex, where: ast.Call, hits: list[_Hit]) -> Fix | None:
    """The double where, when every hit is an op spelled inside the where's own branch: there the
    predicate's text names the values it names in the where (a name bound elsewhere may not be)."""
    if any(not _fixable(index, where, hit) for hit in hits):
        return None
    return build_fix([guard_edit(index.source, where, h.argument, h.safe, h.branch_is_true)  # type: ignore[arg-type]
                      for h in hits])


def _fixable(index: SourceIndex, where: ast.Call, hit: _Hit) -> bool:
    if hit.witness is None or hit.argument is None or hit.node is None or not hit.spelled \
            or _is_lax_select(index, where):  # lax.select(pred, x, 1.0) needs 1.0 broadcast: no fix
        return False
    branch = where.args[1] if hit.branch_is_true else where.args[2]
    return index.span(branch).contains(index.span(hit.node))


def _message(index: SourceIndex, where: ast.Call, hits: list[_Hit]) -> str:
    hit = hits[0]
    more = f" (and {len(hits) - 1} other unsafe op{'s' if len(hits) > 2 else ''} in this where)" \
        if len(hits) > 1 else ""
    func = index.text(where.func)
    unsafe = index.text(hit.node) if hit.node is not None else f"the {hit.primitive} it computes"
    if hit.witness is None:
        return _masked_sum_message(index, where, hit, unsafe, more)
    x = index.text(hit.argument) if hit.argument is not None else "its input"
    return (f"{func} excludes {x}={hit.witness} from {unsafe}{more}, whose "
            f"derivative is not finite there: the forward value is right, but the gradient is NaN at "
            f"{x}={hit.witness} (the where multiplies that derivative by a zero cotangent; 0 * inf and "
            f"0 * nan are NaN). Guard the input with the same predicate: {_guarded(index, where, hit)}.")


def _guarded(index: SourceIndex, where: ast.Call, hit: _Hit) -> str:
    """The unsafe call or operator with its operand guarded: the edit applied inside its own text."""
    if hit.node is None or hit.argument is None:
        return f"where({index.text(where.args[0])}, x, {hit.safe}) in place of the op's input x"
    source, unsafe = index.source, index.text(hit.node)
    edit = guard_edit(source, where, hit.argument, hit.safe, hit.branch_is_true)
    if _is_lax_select(index, where):  # its operands must agree in shape: the guard is jnp.where's
        edit = dataclasses.replace(edit, content="jnp.where" + edit.content[len(index.text(where.func)):])
    start = offset_of(source, hit.node.lineno, index.span(hit.node).start_col)
    inner = (offset_of(source, edit.span.start_line, edit.span.start_col) - start,
             offset_of(source, edit.span.end_line, edit.span.end_col) - start)
    return unsafe[:inner[0]] + edit.content + unsafe[inner[1]:]


def _masked_sum_message(index: SourceIndex, where: ast.Call, hit: _Hit, unsafe: str, more: str) -> str:
    total = index.text(hit.argument) if hit.argument is not None and hit.spelled else "s"
    divides = f"divides by {total} in {unsafe}" if hit.spelled else f"divides in {unsafe} by a sum s"
    return (f"{index.text(where.func)} {divides}{more}, a sum over the entries this where keeps: where "
            f"it keeps none, {total} is 0; the forward value is right (the where discards the quotient), "
            f"but the gradient is NaN there (the quotient's derivative is infinite at {total} = 0, times "
            f"the where's zero cotangent; 0 * inf is NaN). Divide by a sum that cannot be 0: "
            f"jnp.where({total} == 0, 1.0, {total}).")
