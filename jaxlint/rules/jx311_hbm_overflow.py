"""JX311 hbm-overflow: on a TPU target, a function whose compiled program does not fit the chip's
HBM (XLA's RESOURCE_EXHAUSTED, or arguments + outputs + temporaries - aliased above what the
compiler allows one chip), reported at the function with the buffers live at the peak and what
would make it fit, each compiled where jaxlint can (jaxlint.ir.compile, jaxlint.ir.fit)."""
from __future__ import annotations

import ast
from typing import Iterable

from jaxlint.ir.hbm import Buffer, Hbm, Remedy, gib
from jaxlint.model import Cost, Finding, Span
from jaxlint.rules.base import ProgramContext, Rule


class HbmOverflow(Rule):
    code = "JX311"
    name = "hbm-overflow"
    summary = "A function whose compiled program does not fit the TPU target chip's HBM."
    severity = "error"
    fix = None
    reads_helpers = True  # the jitted function may be defined in a helper's file

    @classmethod
    def check_program(cls, ctx: ProgramContext) -> Iterable[Finding]:
        if not ctx.program.target.is_tpu:
            return  # the CPU has no fixed memory to overflow; nothing more is compiled
        for fit in ctx.program.compiled("hbm"):
            if not fit.overflows:
                continue  # at 90% or more, ``jaxlint explain`` says so: not a finding
            span = _place(ctx, fit)
            if span is None:
                continue
            cost = Cost(basis="compiled", flops=0.0, bytes=float(fit.needed - fit.available),
                        equations=None, note=f"device memory above what one {fit.target} chip has")
            yield ctx.finding(cls, message(fit, ctx.path), span, cost=cost)


def _place(ctx: ProgramContext, fit: Hbm) -> Span | None:
    """The ``def`` line of the jitted function in this file, else the target's name."""
    defined = fit.defined
    if defined is not None and ctx.reports_in(defined.path):
        if defined.path != ctx.path:
            return None
        tree = ctx.index.tree
        for node in ast.walk(tree) if tree is not None else ():
            if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef)) and \
                    defined.line in (node.lineno, *(d.lineno for d in node.decorator_list)):
                line = node.lineno
                text = ctx.source.splitlines()[line - 1]
                return Span(line, len(text) - len(text.lstrip()), line, len(text.rstrip()))
    return ctx.fallback_span


def _where(buffer: Buffer, path: str) -> str:
    if buffer.kind == "argument":
        return f"argument '{buffer.argument}'" if buffer.argument else "an argument"
    frame = next((f for f in buffer.frames if f.path == path), buffer.frames[0] if buffer.frames else None)
    place = "" if frame is None else f" made at line {frame.line}" if frame.path == path else \
        f" made at {frame.path}:{frame.line}"
    return f"{'an output' if buffer.kind == 'output' else 'a temporary'}{place}"


def _remedy(remedy: Remedy) -> str:
    if remedy.verified and remedy.needed is not None:
        per = " per chip" if remedy.kind == "shard" else ""
        return f"{remedy.text} (compiled: {gib(remedy.needed)}{per})"
    return f"{remedy.text} (not checked by compiling)"


def message(fit: Hbm, path: str) -> str:
    """The finding's message (also what ``explain`` would say of a function near the limit)."""
    function = f"`{fit.function}`" if fit.function and fit.function != "<lambda>" else "this function"
    refused = " (XLA refuses to compile it: RESOURCE_EXHAUSTED)" if fit.failed else ""
    where = f"on each chip of a {fit.target}" if fit.placed else f"on {fit.target}"
    sharded = ", as the module shards it," if fit.placed else ""
    text = (f"{function}{sharded} needs {gib(fit.needed)} of HBM {where}, which has {gib(fit.available)} "
            f"per chip{refused}.")
    if fit.buffers:
        shares = " (each chip's share)" if fit.placed else ""
        text += f" Largest buffers live at the peak{shares}: " + "; ".join(
            f"{b.shape} ({gib(b.nbytes)}, {_where(b, path)})" for b in fit.buffers) + "."
    verified = [r for r in fit.remedies if r.verified]
    unchecked = [r for r in fit.remedies if not r.verified]
    if verified:
        text += " It fits with " + "; or ".join(_remedy(r) for r in verified) + "."
    elif fit.placed:
        text += (" jaxlint compiles a program the module shards only as it is sharded: a smaller batch, a larger "
                 "slice (--target), or the parameters sharded as well would lower each chip's share.")
    else:
        text += (" No smaller batch, donation or sharding over a slice that jaxlint compiled fits: shard the "
                 "parameters as well (over a mesh axis of their own).")
    if unchecked:
        text += " Also worth trying: " + "; ".join(_remedy(r) for r in unchecked) + "."
    return text
