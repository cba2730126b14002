"""JX501's where guard: ``jnp.where(x > 0, jnp.log(x), 0.0)`` has a NaN gradient at x=0.

In the jaxpr ``jnp.where(pred, a, b)`` is ``select_n(pred, b, a)``. Its transpose sends a zero
cotangent to the excluded elements of ``a``; if ``a`` was computed (through elementwise ops) by an
op whose derivative is infinite or NaN at those elements (log at 0, sqrt at x <= 0, ...), the chain
rule multiplies 0 by inf: NaN. We report a ``where`` call of the analyzed file whose predicate is a
comparison of that op's very input ``x`` with constants, when some excluded ``x`` makes the
derivative non-finite; the point is found exactly by evaluating the predicate and the op's bad set
at every interval boundary. The double-where form is quiet (the op's input is then a select_n,
not ``x``), and so are library functions (sinc, softplus, xlogy, ...): their ops do not sit at a
``log``/``sqrt``/... call or operator of the source, and their own selects are not ``where`` calls.
"""
from __future__ import annotations

import ast
import math
import operator
from typing import Callable, Iterator, NamedTuple, cast

from jaxlint.fixes.double_where import build_fix, guard_edit
from jaxlint.ir import Location, Op, Value, patterns
from jaxlint.model import Fix, Span
from jaxlint.rules.base import ProgramContext
from jaxlint.rules.jx501_where_nan_gradient.unsafe_ops import PASS, UNSAFE, live, scalar, source_node, strip
from jaxlint.scan.index import SourceIndex
from jaxlint.text import offset_of


class _Hit(NamedTuple):
    argument: ast.expr  # the unsafe op's operand in the source (``x`` of ``jnp.log(x)``)
    node: ast.expr  # the unsafe call or operator
    safe: str
    witness: str  # an excluded value of x where the derivative is not finite
    branch_is_true: bool  # the unsafe op is in the where's second argument (else its third)


_COMPARE = {"gt": operator.gt, "lt": operator.lt, "ge": operator.ge, "le": operator.le,
            "eq": operator.eq, "ne": operator.ne}
_SWAPPED = {"gt": "lt", "lt": "gt", "ge": "le", "le": "ge", "eq": "eq", "ne": "ne"}


def where_findings(ctx: ProgramContext) -> Iterator[tuple[str, Span, Fix | None]]:
    """(message, span, fix) of each where call of the source that excludes an unsafe point, once
    however often it was traced."""
    found: dict[Span, tuple[ast.Call, list[_Hit]]] = {}
    for op in ctx.program.walk():
        if op.primitive == "select_n" and len(op.inputs) == 3 and live(op.outputs[0]):
            for case in (1, 2):
                for where, hit in _hits(ctx, op, case):
                    hits = found.setdefault(ctx.index.span(where), (where, []))[1]
                    if all(hit.argument is not other.argument for other in hits):
                        hits.append(hit)
    for span, (where, hits) in found.items():
        hits.sort(key=lambda hit: (hit.node.lineno, hit.node.col_offset))  # source order
        yield _message(ctx.index, where, hits), span, _fix(ctx.source, where, hits)


def _hits(ctx: ProgramContext, select: Op, case: int) -> Iterator[tuple[ast.Call, _Hit]]:
    """Unsafe ops feeding case ``case`` of ``select`` that the predicate excludes at a bad point."""
    branch_is_true = case == 2  # select_n(pred, on_false, on_true)
    for op in _unsafe_ops(select.inputs[case]):
        spec = UNSAFE[op.primitive]
        x = strip(op.inputs[spec.arg])
        if not patterns.inexact(x) or op.location is None or op.location.path != ctx.path:
            continue
        predicate = _predicate(select.inputs[0], x)
        if predicate is None:
            continue
        test, leaves, constants = predicate
        if any(leaf.location is None or leaf.location.path != ctx.path for leaf in leaves):
            continue
        witness = next((p for p in _candidates(constants)
                        if test(p) != branch_is_true and spec.bad(p, op)), None)
        if witness is None or not patterns.differentiable(x):
            continue
        where = _where_call(ctx.index, [cast(Location, leaf.location).span for leaf in leaves])
        node = source_node(ctx.index, op.location.span, spec)
        if where is None or node is None:
            continue
        branch = where.args[1] if branch_is_true else where.args[2]
        if not ctx.index.span(branch).contains(op.location.span):
            continue
        argument = node.right if isinstance(node, ast.BinOp) and spec.arg == 1 else (
            node.left if isinstance(node, ast.BinOp) else node.args[spec.arg])
        yield where, _Hit(argument, node, spec.safe, _number(witness), branch_is_true)


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


def _predicate(value: Value, x: Value) -> tuple[Callable[[float], bool], list[Op], list[float]] | None:
    """``pred`` as a function of x's value, when it is only comparisons of x with constants."""
    op = strip(value, keep_kind=False).producer
    if op is None:
        return None
    if op.primitive in ("and", "or", "not"):
        parts = [_predicate(v, x) for v in op.inputs]
        if any(p is None for p in parts):
            return None
        tests = [p[0] for p in parts]
        leaves = [leaf for p in parts for leaf in p[1]]
        constants = [c for p in parts for c in p[2]]
        if op.primitive == "not":
            return (lambda p: not tests[0](p)), leaves, constants
        combine = all if op.primitive == "and" else any
        return (lambda p: combine(t(p) for t in tests)), leaves, constants
    if op.primitive not in _COMPARE:
        return None
    name, (left, right) = op.primitive, op.inputs
    constant = scalar(right)
    if constant is None:
        name, left, right, constant = _SWAPPED[name], right, left, scalar(left)
    of_x = _function_of(left, x)
    if constant is None or of_x is None:
        return None
    compare = _COMPARE[name]
    return (lambda p: compare(of_x(p), constant)), [op], [constant]


def _function_of(value: Value, x: Value) -> Callable[[float], float] | None:
    """``value`` as a function of x: x itself, or abs/neg of it."""
    value = strip(value)
    if value is x:
        return lambda p: p
    op = value.producer
    if op is not None and op.primitive in ("abs", "neg"):
        inner = _function_of(op.inputs[0], x)
        if inner is not None:
            return (lambda p: abs(inner(p))) if op.primitive == "abs" else (lambda p: -inner(p))
    return None


def _candidates(constants: list[float]) -> list[float]:
    """Every interval the predicate and the bad sets can distinguish: boundaries, midpoints, beyond."""
    constants = [c for c in constants if math.isfinite(c)]  # x = inf: not worth a finding
    points = sorted({0.0, 1.0, -1.0} | set(constants) | {-c for c in constants})
    between = [(a + b) / 2 for a, b in zip(points, points[1:])] + [points[0] - 1, points[-1] + 1]
    return [0.0, 1.0, -1.0] + sorted(set(points) - {0.0, 1.0, -1.0}, key=abs) + between


def _where_calls(index: SourceIndex) -> tuple[ast.Call, ...]:
    """``where(pred, a, b)`` calls of the source (any module prefix), three positional arguments."""
    parsed = index.parsed
    if parsed is None:
        return ()
    calls = {id(n): n for nodes in parsed.by_span.values() for n in nodes if isinstance(n, ast.Call)}
    return tuple(c for c in calls.values() if index.callee(c) == "where" and len(c.args) == 3
                 and not c.keywords and not any(isinstance(a, ast.Starred) for a in c.args))


def _where_call(index: SourceIndex, leaf_spans: list[Span]) -> ast.Call | None:
    """The innermost where call whose predicate argument holds every comparison of the predicate.

    Found from the comparisons, not from the select_n: on old JAX the select_n of jnp.where's
    cached inner jit keeps the location of the first call site.
    """
    where_calls = index.memo("jx501.where_calls", lambda: _where_calls(index))
    holding = [(index.span(c.args[0]), c) for c in where_calls]
    holding = [(s, c) for s, c in holding if all(s.contains(leaf) for leaf in leaf_spans)]
    if not holding:
        return None
    source = index.source
    size = lambda s: offset_of(source, s.end_line, s.end_col) - offset_of(source, s.start_line, s.start_col)  # noqa: E731
    return min(holding, key=lambda sc: size(sc[0]))[1]


def _number(p: float) -> str:
    return str(int(p)) if float(p).is_integer() else repr(p)


def _fix(source: str, where: ast.Call, hits: list[_Hit]) -> Fix | None:
    return build_fix([guard_edit(source, where, h.argument, h.safe, h.branch_is_true) for h in hits])


def _message(index: SourceIndex, where: ast.Call, hits: list[_Hit]) -> str:
    source = index.source
    argument, node, safe, witness, is_true = hits[0]
    x, unsafe = index.text(argument), index.text(node)
    edit = guard_edit(source, where, argument, safe, is_true)
    # The unsafe call or operator with its operand guarded: the edit applied inside its own text.
    start = offset_of(source, node.lineno, index.span(node).start_col)
    inner = (offset_of(source, edit.span.start_line, edit.span.start_col) - start,
             offset_of(source, edit.span.end_line, edit.span.end_col) - start)
    guarded = unsafe[:inner[0]] + edit.content + unsafe[inner[1]:]
    more = f" (and {len(hits) - 1} other unsafe op{'s' if len(hits) > 2 else ''} in this where)" \
        if len(hits) > 1 else ""
    return (f"{index.text(where.func)} excludes {x}={witness} from {unsafe}{more}, whose "
            f"derivative is not finite there: the forward value is right, but the gradient is NaN at "
            f"{x}={witness} (the where multiplies that derivative by a zero cotangent; 0 * inf and "
            f"0 * nan are NaN). Guard the input with the same predicate: {guarded}.")
