"""JX507 int32-overflow: integer arithmetic the jaxpr proves to leave its dtype's range, which XLA
wraps around silently: ``jnp.arange(100_000) * 100_000`` has 1,409,965,408 where 9,999,900,000
was meant, and a ``fori_loop`` index times a stride wraps in its last iterations.

For each integer value the rule keeps two values some element of it is *proven to take* (not
bounds: ``lo <= hi``, each reached at some position, in some iteration) and the axes it may vary
along (array dimensions, and the loops whose iterations it changes with). They come from literals,
``iota``, loop indices (a ``scan`` carry or a ``fori_loop``'s ``while`` counter stepped by a
literal from a known start, to a known trip count), and from the table below, keyed by primitive
with everything else unknown (as JAX's key-reuse checker keys its signatures). A binary op
combines two operands only when any of their values can meet at one position: the same value on
both sides, or operands varying along disjoint axes (a scalar or a broadcast against an array, an
outer product); then every pair of their proven values is reached, and so is its exact result,
computed with Python ints. A ``wraps`` op (add, sub, mul, reduce_sum) whose exact result is out of
range is the finding; its output is then unknown (the values downstream are wrapped ones).

Only code proven to run is judged: the top of the program and the bodies of loops known to run at
least once (not ``cond`` branches, not a ``while`` whose trip count is unknown), and an op whose
result surely reaches the output (``patterns.surely_used``: not only as a case a ``where`` may
not pick, as the squares JAX's integer power discards). Quiet for unsigned types (wraparound is usually meant there), and for ops at a source
line that calls ``jax.random`` (its hashing wraps on purpose). A closed-over constant array counts
with its exact min and max.
"""
from __future__ import annotations

import ast
from typing import Iterable

from jaxlint.ir import Location
from jaxlint.model import Finding
from jaxlint.rules.base import ProgramContext, Rule
from jaxlint.rules.jx507_int32_overflow.analysis import Overflow, overflows


class Int32Overflow(Rule):
    code = "JX507"
    name = "int32-overflow"
    summary = ("Integer arithmetic proven from known bounds (iota, literals, loop indices) to leave the "
               "dtype's range: it wraps around silently.")
    severity = "error"

    @classmethod
    def check_program(cls, ctx: ProgramContext) -> Iterable[Finding]:
        program = ctx.program
        found: list[Overflow] = program.memo("JX507 overflows", lambda: overflows(program))
        for overflow in found:
            location = overflow.op.location
            if location is not None and location.path == ctx.path:
                yield ctx.finding(cls, _message(ctx, overflow), location.span)


def _wrapped(value: int, dtype: str) -> int:
    bits = int(dtype[3:])
    value &= (1 << bits) - 1
    return value - (1 << bits) if value >> (bits - 1) else value


def _message(ctx: ProgramContext, overflow: Overflow) -> str:
    op = overflow.op
    location: Location | None = op.location
    node = ctx.index.node_at(location.span, ast.expr) if location is not None else None
    what = f"`{ctx.index.text(node)}`" if node is not None else f"this {_NOUNS.get(op.primitive, op.primitive)}"
    side = "maximum" if overflow.reached > overflow.limit else "minimum"
    relation = ">" if overflow.reached > overflow.limit else "<"
    if overflow.count:
        how = f" (a sum of {overflow.count:,} elements of {overflow.reached // overflow.count:,})"
    else:
        x, y = overflow.operands
        how = f" (from operands {x:,} and {y:,})"
    return (f"{what} reaches {overflow.reached:,}{how} {relation} {overflow.limit:,}, the {overflow.dtype} {side}: "
            f"{overflow.dtype} arithmetic wraps around without an error, and that value comes out as "
            f"{_wrapped(overflow.reached, overflow.dtype):,}. Compute it in a wider type (int64 with "
            "jax_enable_x64, or float) or reorder it so the intermediate stays in range.")


_NOUNS = {"add": "addition", "sub": "subtraction", "mul": "multiplication", "reduce_sum": "sum"}
