"""JX501's clamp guard: ``jnp.clip(jnp.log(p), c)`` has a NaN gradient at p=0.

``jnp.clip(y, lo, hi)`` is ``min(hi, max(lo, y))`` in the jaxpr (``jnp.maximum``/``minimum`` are
``max``/``min``, ``lax.clamp`` is ``clamp``). Where the bound wins, the cotangent sent to ``y`` is 0
(checked with jax.grad: at a tie it is split, not 0). If ``y`` is computed from an op whose
derivative is infinite at some input (log at 0, sqrt at 0, 1/x at 0), and the op's value there
lies strictly beyond the bound (log(0) = -inf < c), the chain rule multiplies 0 by inf: NaN. The
value at the singular input is carried through the ops between (negation, a constant added,
multiplied, divided) and compared with the bound, so ``clip(log(p), max=0)`` (-inf is kept),
``clip(sqrt(x), 0)`` (a tie: the gradient is inf, not NaN) and a clamp of the input
(``log(clip(p, tiny))``) are quiet, as is an input that cannot reach the singular point
(``exp``/``sigmoid`` output, a positive constant plus a non-negative value, a product of such, a
positive constant less the square of a value clipped below its root (jax_md's
``1 - clip(x, -1 + eps, 1 - eps) ** 2``, in float32), a
where that keeps the value only where it is above a constant >= 0: ``where(d > eps, d, 1)``). Nor
is a singular input that is a difference of two computed values (``x_pos[1] - x_pos[0]``), or a
sum of squares of such (``vdot(n - c, n - c)``), values computed before a branch included: it
is 0 only where the two coincide, which code
like a spline's knots or a solver's distinct steps excludes by construction and guessed arguments
cannot tell; a real coincidence is missed.
"""
from __future__ import annotations

import ast
import math
from typing import Callable, Iterator

from jaxlint.fixes.guard_inside import move_guard_inside
from jaxlint.ir import Op, Value, patterns, primitives, region_links
from jaxlint.model import Fix, Span
from jaxlint.rules.base import ProgramContext
from jaxlint.rules.jx501_where_nan_gradient.predicate import candidates, predicate_of
from jaxlint.rules.jx501_where_nan_gradient.reverse_mode import reverse_reachable
from jaxlint.rules.jx501_where_nan_gradient.unsafe_ops import UNSAFE, scalar, singular_values, spelled_at, strip

_GUARD_PRIMITIVES = ("max", "min", "clamp")
# How the source spells a clamp (``jnp.clip``, ``x.clip``, ``jnp.maximum``, ``lax.clamp``, ...).
_GUARD_CALLS = frozenset({"clip", "maximum", "minimum", "clamp", "max", "min", "fmax", "fmin"})
_POSITIVE = ("exp", "exp2", "logistic")  # outputs that are > 0 (barring underflow)
_NON_NEGATIVE = _POSITIVE + ("abs", "sqrt", "square")
_AFFINE = ("add", "sub", "mul", "div")


def clamp_findings(ctx: ProgramContext) -> Iterator[tuple[str, Span, Fix | None, Value]]:
    """(message, span, fix, the unsafe op's input) of each clamp call of the source that clamps
    away the value of an unsafe op at its singular point, once however often it was traced. The
    point comes from the arithmetic alone: nothing in the program tests it."""
    found: dict[Span, tuple[bool, str, Fix | None, Value]] = {}
    for op in ctx.program.walk():
        if op.primitive in _GUARD_PRIMITIVES and not op.custom_derivative and _reaches_float_output(op.outputs[0]) \
                and reverse_reachable(op.outputs[0]):
            hit = _hit(ctx, op)
            # clip(1 / x, -c, c) clamps both x=0 and x=-0 away: name 0 rather than -0
            if hit is not None and (hit[1] not in found or found[hit[1]][0] and not hit[3]):
                found[hit[1]] = (hit[3], hit[0], hit[2], hit[4])
    for span, (_, message, fix, point) in found.items():
        yield message, span, fix, point


def _bounds(op: Op) -> tuple[Value, float | None, float | None] | None:
    """The clamped value and the constant lower and upper bounds of a max, min or clamp."""
    if op.primitive == "clamp" and len(op.inputs) == 3:
        low, value, high = op.inputs
        return value, scalar(low), scalar(high)
    if len(op.inputs) != 2:
        return None
    constants = [scalar(v) for v in op.inputs]
    if (constants[0] is None) == (constants[1] is None):
        return None  # two traced operands (a real maximum) or two constants
    value = op.inputs[1] if constants[0] is not None else op.inputs[0]
    bound = constants[0] if constants[0] is not None else constants[1]
    return (value, bound, None) if op.primitive == "max" else (value, None, bound)


def _hit(ctx: ProgramContext, guard: Op) -> tuple[str, Span, Fix | None, bool, Value] | None:
    """(message, span, fix, whether the point is -0, the unsafe op's input) of a guard op that
    clamps away a singular point."""
    bounds = _bounds(guard)
    if bounds is None or guard.location is None or guard.location.path != ctx.path:
        return None
    value, low, high = bounds
    traced = _through(value)
    if traced is None:
        return None
    unsafe, carry = traced
    if unsafe.custom_derivative:  # inside a custom_jvp/vjp function (xlogy): its gradient is its own rule
        return None
    spec = UNSAFE[unsafe.primitive]
    x = strip(unsafe.inputs[spec.arg])
    if not patterns.inexact(x) or not patterns.differentiable(x) or unsafe.location is None \
            or unsafe.location.path != ctx.path:
        return None
    if _a_difference(x):
        return None
    positive = _positive(x)
    point = next(((p, carry(y)) for p, y in singular_values(unsafe)
                  if not (positive and p <= 0) and _clamped(carry(y), low, high)), None)
    if point is None:
        return None
    call = ctx.index.node_at(guard.location.span, ast.Call)
    # The op as spelled (jnp.log(p)), or a library call of one argument holding it (jnp.log10(p)):
    # the program decides, the source only names it; a fix only for the op's own spelling.
    node, argument, spelled = spelled_at(ctx.index, unsafe)
    if call is None or node is None or argument is None or ctx.index.callee(call) not in _GUARD_CALLS:
        return None
    bound = low if low is not None and point[1] < low else high
    fix = None
    if spelled and isinstance(node, ast.Call) and bound is not None and low is not None and high is None:
        fix = move_guard_inside(ctx.source, call, ctx.index.callee(call) or "", node,
                                ctx.index.callee(node) or "", bound)
    negative_zero = point[0] == 0 and math.copysign(1.0, point[0]) < 0
    return _message(ctx, call, node, argument, point, bound, fix), ctx.index.span(call), fix, negative_zero, x


def _through(value: Value) -> tuple[Op, Callable[[float], float]] | None:
    """The unsafe op ``value`` is computed from, and ``value`` as a function of that op's value,
    through negation and arithmetic with a scalar constant; None for anything else."""
    op = strip(value).producer
    if op is None:
        return None
    if op.primitive == "neg":
        inner = _through(op.inputs[0])
        return None if inner is None else (inner[0], lambda y: -inner[1](y))
    if op.primitive in _AFFINE and len(op.inputs) == 2:
        constants = [scalar(v) for v in op.inputs]
        if (constants[0] is None) != (constants[1] is None) and not (
                op.primitive == "div" and constants[0] is not None):  # c / y: an unsafe op itself
            right = constants[1] is not None
            c = constants[1] if right else constants[0]
            inner = _through(op.inputs[0] if right else op.inputs[1])
            if inner is None or c is None or (op.primitive == "div" and c == 0):
                return None
            unsafe, f = inner
            apply = {"add": lambda y: f(y) + c, "mul": lambda y: f(y) * c, "div": lambda y: f(y) / c,
                     "sub": (lambda y: f(y) - c) if right else (lambda y: c - f(y))}[op.primitive]
            return unsafe, apply
    if op.primitive in ("max", "min") and op is not None:
        bounds = _bounds(op)  # an inner clamp (clip's max under its min): the value it lets through
        inner = _through(bounds[0]) if bounds is not None else None
        if inner is not None and bounds is not None:
            low, high, f = bounds[1], bounds[2], inner[1]
            return inner[0], lambda y: min(max(f(y), low if low is not None else -math.inf),
                                           high if high is not None else math.inf)
    if op.primitive in UNSAFE:
        return op, lambda y: y
    return None


def _reaches_float_output(value: Value) -> bool:
    """A gradient could flow back into ``value``: it reaches a float output of its region (or an
    operand of a control-flow op) through ops that are not gradient-free (a comparison, a cast
    to int, ... end the path: a clamp whose result only feeds a test is never differentiated)."""
    stack, seen = [value], set()
    while stack:
        value = stack.pop()
        if id(value) in seen or not patterns.inexact(value):
            continue
        seen.add(id(value))
        region = value.producer.region if value.producer is not None else None
        if region is not None and any(out is value for out in region.outputs):
            return True
        for use in value.uses:
            if use.regions:
                return True  # into a loop or cond: not followed
            if not primitives.traits(use.primitive).gradient_free:
                stack.extend(use.outputs)
    return False


def _clamped(y: float, low: float | None, high: float | None) -> bool:
    """The bound wins strictly (a tie splits the cotangent: inf, not NaN)."""
    return not math.isnan(y) and ((low is not None and y < low) or (high is not None and y > high))


def _positive(value: Value) -> bool:
    """``value`` is never 0 or negative: an exp or sigmoid, a positive constant, a positive value
    added to a non-negative one (a square, sqrt or abs, or a where choosing among such and
    constants >= 0), or a product or quotient of positive values (jax-md's ``(d12 + EPS) * (d32 +
    EPS)``; barring underflow, as for exp)."""
    constant = scalar(value)
    if constant is not None:
        return constant > 0
    op = strip(value).producer
    if op is None:
        return False
    if op.primitive in _POSITIVE:
        return True
    bounds = _bounds(op) if op.primitive in ("max", "clamp") else None
    if bounds is not None and bounds[1] is not None and bounds[1] > 0:
        return True  # maximum(n, 1.0): clamped from below by a positive bound
    if op.primitive == "add" and len(op.inputs) == 2:
        first, second = op.inputs
        return (_positive(first) and _non_negative(second)) or (_positive(second) and _non_negative(first))
    if op.primitive in ("mul", "div") and len(op.inputs) == 2:
        return _positive(op.inputs[0]) and _positive(op.inputs[1])
    if op.primitive == "sub" and len(op.inputs) == 2:  # 1 - clip(x, -1 + eps, 1 - eps) ** 2
        return _above_clipped_square(scalar(op.inputs[0]), op.inputs[1])
    if op.primitive == "select_n" and len(op.inputs) == 3:  # boolean: (predicate, when false, when true)
        return all(_positive(case) or _kept_only_positive(op.inputs[0], case, chosen)
                   for case, chosen in zip(op.inputs[1:], (False, True)))
    return False


def _above_clipped_square(constant: float | None, value: Value) -> bool:
    """``constant`` exceeds, in float32, every value of ``value``, the square of a value clamped
    between two constants (``clip(x, -1 + eps, 1 - eps) ** 2``)."""
    import numpy as np  # lazily: rule modules are imported without JAX or NumPy work

    op = strip(value).producer
    if constant is None or op is None or not (
            op.primitive == "integer_pow" and int(op.params.get("y", 0)) == 2 or
            op.primitive == "mul" and len(op.inputs) == 2 and strip(op.inputs[0]) is strip(op.inputs[1])):
        return False
    low, high, inner = -math.inf, math.inf, strip(op.inputs[0]).producer
    while inner is not None and inner.primitive in _GUARD_PRIMITIVES:  # clip: a min over a max
        bounds = _bounds(inner)
        if bounds is None:
            break
        low = max(low, bounds[1] if bounds[1] is not None else -math.inf)
        high = min(high, bounds[2] if bounds[2] is not None else math.inf)
        inner = strip(bounds[0]).producer
    if math.isinf(low) or math.isinf(high):
        return False
    square = max(np.float32(low) * np.float32(low), np.float32(high) * np.float32(high))
    return bool(np.float32(constant) - square > 0)


def _a_difference(value: Value, depth: int = 0) -> bool:
    """``value`` is 0 only where two computed values coincide: a difference of two values the
    function computes (``x_pos[1] - x_pos[0]``; not its inputs, whose difference is 0 for any
    caller that passes two equal ones), a constant multiple of one, a where of such (distrax's
    spline bins and quadratic roots, whose knots are apart by construction), or a sum of squares
    of such."""
    op = strip(value).producer
    if op is None or depth > _MAX_DEPTH:
        return False
    if op.primitive == "sub" and len(op.inputs) == 2:
        return all(scalar(v) is None and _computed(v) for v in op.inputs)
    if op.primitive == "neg":
        return _a_difference(op.inputs[0], depth + 1)
    if op.primitive in ("mul", "div") and len(op.inputs) == 2:
        constants = [scalar(v) for v in op.inputs]
        if constants[0] is not None and constants[0] != 0 and op.primitive == "mul":
            return _a_difference(op.inputs[1], depth + 1)
        if constants[1] is not None and constants[1] != 0:
            return _a_difference(op.inputs[0], depth + 1)
    if op.primitive == "select_n" and len(op.inputs) >= 3:
        return all(_a_difference(case, depth + 1) for case in op.inputs[1:])
    return _a_squared_norm_of_difference(op, depth)


_MAX_DEPTH = 16  # ops walked through (negations, constant factors, wheres) to the difference
_MAX_TERMS = 64  # squares a sum adds (a pytree's leaves); a longer sum is not read


def _computed(value: Value) -> bool:
    """A value the function computes: an op's output, or the input of a branch or a call's body
    that such a value feeds (optimistix's dogleg computes its steps, then switches); not the
    function's own inputs, nor a loop's carry (another value each step)."""
    for _ in range(_MAX_DEPTH):
        value = strip(value)
        if value.producer is not None:
            return True
        region = value.region_input
        op = region.parent if region is not None else None
        if op is None or op.primitive in primitives.LOOPS:
            return False
        links = region_links(op, region)
        index = next((i for i, v in enumerate(region.inputs) if v is value), None)
        operand = links.operands[index] if links is not None and index is not None \
            and index < len(links.operands) else None
        if operand is None:
            return False
        value = op.inputs[operand]
    return False


def _a_squared_norm_of_difference(op: Op, depth: int) -> bool:
    """A sum of squares of differences (``vdot(n - c, n - c)``, ``sum((u - v) ** 2)``, a pytree's
    squared norm adding one per leaf): 0 only where each difference is, as a difference is
    (optimistix's dogleg divides by the squared distance of its Newton and Cauchy steps). Walked
    once per op (a sum may add one term twice), at most _MAX_TERMS of them."""
    pending, seen = [op], set()
    while pending:
        term = pending.pop()
        if id(term) in seen:
            continue
        seen.add(id(term))
        if len(seen) > _MAX_TERMS:
            return False
        if term.primitive == "add" and len(term.inputs) == 2:
            producers = [strip(v).producer for v in term.inputs]
            if any(producer is None for producer in producers):
                return False
            pending += producers
        elif not _a_square_of_difference(term, depth):
            return False
    return True


def _a_square_of_difference(op: Op, depth: int) -> bool:
    """``d * d``, ``d ** 2``, ``vdot(d, d)`` or ``sum(d ** 2)`` of a difference ``d``."""
    if op.primitive == "reduce_sum" and op.inputs:
        squared = strip(op.inputs[0]).producer
        return squared is not None and squared.primitive != "reduce_sum" and _a_square_of_difference(squared, depth)
    if op.primitive == "integer_pow" and op.params.get("y") == 2 or op.primitive == "square":
        return _a_difference(op.inputs[0], depth + 1)
    if op.primitive in ("mul", "dot_general") and len(op.inputs) == 2 and strip(op.inputs[0]) is strip(op.inputs[1]):
        return _a_difference(op.inputs[0], depth + 1)
    return False


def _kept_only_positive(predicate: Value, case: Value, chosen: bool) -> bool:
    """The where picks ``case`` only where the predicate, a comparison of ``case`` itself with
    constants, says it is > 0 (optimistix's ``where(d > eps, d, 1)``): never at 0 or below."""
    found = predicate_of(predicate, case)
    if found is None:
        return False
    test = found[0]
    return not any(test(p) is None or test(p) == chosen  # None: other booleans may choose it
                   for p in [-0.0, *candidates(found[2])] if p <= 0)


def _non_negative(value: Value) -> bool:
    if _at_least_zero(scalar(value)):
        return True
    op = strip(value).producer
    if op is None:
        return False
    if op.primitive == "integer_pow":
        return int(op.params.get("y", 1)) % 2 == 0
    if op.primitive == "mul" and len(op.inputs) == 2:
        return strip(op.inputs[0]) is strip(op.inputs[1])
    if op.primitive == "select_n":  # where(mask, sqrt(...), 0.0): every case is
        return all(_non_negative(case) or _at_least_zero(scalar(case)) for case in op.inputs[1:])
    return op.primitive in _NON_NEGATIVE or _positive(value)


def _at_least_zero(constant: float | None) -> bool:
    return constant is not None and constant >= 0


def _number(p: float) -> str:
    if math.isinf(p):
        return "inf" if p > 0 else "-inf"
    if p == 0:
        return "-0" if math.copysign(1.0, p) < 0 else "0"
    return str(int(p)) if float(p).is_integer() and abs(p) < 1e6 else f"{p:.6g}"


def _message(ctx: ProgramContext, call: ast.Call, node: ast.expr, argument: ast.expr,
             point: tuple[float, float], bound: float | None, fix: Fix | None) -> str:
    index = ctx.index
    x, unsafe, p, y = index.text(argument), index.text(node), _number(point[0]), _number(point[1])
    side = "below" if bound is not None and point[1] < bound else "above"
    instead = fix.edits[0].content if fix is not None else \
        f"clamp {x} before {index.text(node.func) if isinstance(node, ast.Call) else 'the operation'}"
    return (f"{index.text(call.func)} clamps away {x}={p}, where {unsafe} has an infinite derivative: "
            f"what it computes from there is {y}, {side} the bound {_number(bound) if bound is not None else ''}. "
            f"The forward value is right, but the gradient is NaN at {x}={p} (the clamp's zero "
            f"derivative times an infinite one; 0 * inf is NaN). Clamp the input instead: {instead}.")
