"""JX202 python-loop-unrolled: one source line traced into hundreds of repeated equations."""
from __future__ import annotations

from collections import defaultdict
from typing import Hashable, Iterable, Sequence

from jaxlint.ir import Op
from jaxlint.model import Cost, Finding, Span
from jaxlint.rules.base import Option, ProgramContext, Rule


class PythonLoopUnrolled(Rule):
    code = "JX202"
    name = "python-loop-unrolled"
    summary = "One source line produced hundreds of equations: a Python loop unrolled at trace time."
    severity = "warning"

    # A line is reported when it produced at least min-equations equations in one trace, made of
    # one sequence of equations repeated at least min-repeats times. A single library call
    # (``jax.scipy.linalg.expm`` gives ~170 equations at its line, its gradient ~300) repeats
    # nothing; a short loop over a big body (a few iterations) is left alone.
    min_equations = 200
    min_repeats = 10
    options = {
        "min-equations": Option(int, min_equations, "equations one source line must produce in one trace",
                                minimum=1),
        "min-repeats": Option(int, min_repeats, "times one block of equations must repeat", minimum=2),
    }

    @classmethod
    def check_program(cls, ctx: ProgramContext) -> Iterable[Finding]:
        if ctx.target.kind == "inferred":
            # A plain function no jit wraps, traced with jaxlint's guesses: it may well run eagerly
            # (numpyro's DCC._find_slps loops over 1,000 prior samples, op by op), and then XLA
            # compiles no copy: the cost this rule names is not known to exist.
            return
        # Equations inside a library jit carry the location of the user's call (ir.build falls back
        # to it), so a count per line alone cannot tell a loop from one big library call: the
        # repetition of the line's op sequence can.
        lines: dict[int, list[Op]] = defaultdict(list)
        for op in ctx.ops_here():
            lines[op.location.span.start_line].append(op)
        for line, ops in sorted(lines.items()):
            if len(ops) < ctx.option(cls, "min-equations"):
                continue
            loops = [loop for group in _by_call_site(ctx, ops) if (loop := _loop(cls, ctx, group)) is not None]
            if not loops:
                continue
            # One finding per line: the largest loop (a loop body can call the line twice).
            group, repeats, period = max(loops, key=lambda loop: len(loop[0]))
            cost = Cost(basis="shapes", equations=len(group),
                        note=f"{len(group)} equations compiled separately instead of one {period}-equation body")
            yield ctx.finding(cls, _message(len(group), repeats, period), _line_span(ctx.source, group), cost=cost)


_JITTED_KINDS = ("jit-decorated", "jit-bound")  # targets a jit of their own wraps: one program


def _by_call_site(ctx: ProgramContext, ops: list[Op]) -> list[list[Op]]:
    """The line's equations grouped by where the line was called from.

    The iterations of one Python loop run the line from the same call site; the same helper
    called from several places (an init, an unrolled first step, a line search inside a
    ``cond``, a ``while`` body, a JVP rule) is as many separate calls, which no ``fori_loop``
    or ``scan`` can roll into one body. The call site is the user frames above the line in the
    equation's traceback, and those of every call and control-flow equation around it: the
    body of a ``custom_jvp`` function is traced once and reused, its traceback has no caller.

    In a function no jit of its own wraps, each call of a jitted function is its own group: a
    Python loop that calls one (dynamax's ``fit_em`` runs its jitted EM step once per progress-bar
    update) dispatches one compiled program again and again, cached after the first; nothing is
    unrolled into one program.
    """
    program = ctx.program
    own_jit = ctx.target.kind in _JITTED_KINDS
    groups: dict[tuple, list[Op]] = defaultdict(list)
    for op in ops:
        site = tuple(program.stack_of(info) for info in op.enclosing) + (program.call_stack(op)[:-1],)
        if op.under_jit and op.enclosing and not own_jit:
            site += (id(op.enclosing[0]),)  # the outermost call around it: one dispatch of a jitted function
        groups[site].append(op)
    return list(groups.values())


def _loop(cls: type[Rule], ctx: ProgramContext, ops: list[Op]) -> tuple[list[Op], int, int] | None:
    """(ops, repeats, period) when ``ops`` are one block repeated as an unrolled loop, else None."""
    if len(ops) < ctx.option(cls, "min-equations"):
        return None
    repeats, period = repetitions([_fingerprint(op) for op in ops])
    if repeats < ctx.option(cls, "min-repeats"):
        return None
    # fori_loop and scan trace one body for every iteration, so one shape: iterations whose
    # shapes change (an init loop drawing ever larger blocks) cannot be rolled as they are.
    if repetitions([(_fingerprint(op), _shapes(op)) for op in ops])[0] < ctx.option(cls, "min-repeats"):
        return None
    return ops, repeats, period


def _fingerprint(op: Op) -> Hashable:
    # The primitive and the expression on the line it came from; shapes and params may change
    # between iterations (a growing concatenation, a static index ``x[i]``).
    assert op.location is not None  # check_program collects located ops only
    span = op.location.span
    return op.primitive, span.start_col, span.end_line, span.end_col


def _shapes(op: Op) -> Hashable:
    return tuple(str(value.aval) for value in op.outputs)


def repetitions(seq: Sequence[Hashable]) -> tuple[int, int]:
    """(repeats, period): the most repetitions of one block at the start or the end of ``seq``.

    Both ends, because the first or last iteration of a loop often differs (a dtype conversion,
    a broadcast), and under ``jax.grad`` the forward copies come first, the backward ones last.
    """
    return max(_prefix_repetitions(seq), _prefix_repetitions(seq[::-1]))


def _prefix_repetitions(seq: Sequence[Hashable]) -> tuple[int, int]:
    # KMP prefix function: the prefix of length L has smallest period L - pi[L-1], in O(len(seq)).
    best = (1, len(seq))
    pi = [0] * len(seq)
    for i in range(1, len(seq)):
        k = pi[i - 1]
        while k and seq[i] != seq[k]:
            k = pi[k - 1]
        if seq[i] == seq[k]:
            k += 1
        pi[i] = k
        period = i + 1 - k
        if (i + 1) // period > best[0]:
            best = ((i + 1) // period, period)
    return best


def _line_span(source: str, ops: list[Op]) -> Span:
    """The source line the equations came from, without its indentation."""
    assert ops[0].location is not None  # check_program collects located ops only
    line = ops[0].location.span.start_line
    lines = source.splitlines()
    text = lines[line - 1] if line <= len(lines) else ""
    start = len(text) - len(text.lstrip())
    return Span(line, start, line, max(len(text.rstrip()), start))


def _message(equations: int, repeats: int, period: int) -> str:
    return (f"this line produced {equations} equations in one trace: a block of {period} "
            f"equation{'s' if period != 1 else ''} repeated {repeats} times, so the line ran "
            f"{repeats} times at trace time (a Python loop unrolled, here or in a caller). "
            f"Cost: XLA compiles every copy; compile time grows with the equation count (measured: "
            f"a 1000-iteration unrolled loop of 3 equations compiled in about 10 s vs 0.1 s). Use "
            f"jax.lax.fori_loop or jax.lax.scan to trace and compile the body once.")
