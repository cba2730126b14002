"""JX308 donation-not-aliased: a donated jit argument XLA writes no output into, read from the
compiled module's alias map (jaxlint.ir.memory), not guessed from shapes."""
from __future__ import annotations

import ast
from typing import Iterable

from jaxlint.ir.memory import DonatingJit, Donation, Frame
from jaxlint.model import Cost, Finding, Span
from jaxlint.rules.base import Option, ProgramContext, Rule
from jaxlint.text import char_span, size_text

_DONATE_KEYWORDS = ("donate_argnums", "donate_argnames")

_WHY = {
    "no-output": "no output of its byte size is left for XLA to write into (the compiled module lists "
                 "it as a buffer_donor, not in its input_output_alias map)",
    "dropped": "JAX dropped the donation while lowering (\"Some donated buffers were not usable\"): no "
               "output of its shape and dtype is left for it",
    "unused": "the function never reads it, so jit prunes the argument and the donation does nothing",
}


class DonationNotAliased(Rule):
    code = "JX308"
    name = "donation-not-aliased"
    summary = "A donated jit argument XLA writes no output into: the donation saves no memory."
    severity = "warning"
    fix = None
    reads_helpers = True  # the jit may be defined, or called, in a helper's file
    options = {"min-bytes": Option(int, 0, "bytes a jit's unaliased donated arguments must total to be "
                                   "reported", minimum=0)}

    @classmethod
    def check_program(cls, ctx: ProgramContext) -> Iterable[Finding]:
        for jit in ctx.program.compiled("donations"):
            wasted = [d for d in jit.donations if not d.aliased]
            total = sum(d.nbytes for d in wasted)
            per_device = sum(d.nbytes // d.shards for d in wasted)
            if not wasted or total < ctx.option(cls, "min-bytes"):
                continue
            span = _place(ctx, jit)
            if span is None:
                continue
            # Memory is what each device holds: a sharded argument's share of it.
            cost = Cost(basis="compiled", flops=0.0, bytes=float(per_device), equations=None,
                        note="device memory: the outputs get new buffers beside the donated ones"
                        + (f"; per device, on each of the {jit.devices} devices" if jit.devices > 1 else ""))
            yield ctx.finding(cls, _message(jit, wasted) + ctx.program.target_note, span, cost=cost)


def _place(ctx: ProgramContext, jit: DonatingJit) -> Span | None:
    """Where the finding goes in this context's file, or None when another context reports it: a
    call of the jitted function in the target's own file (the context that always runs, under
    ``pytest --jaxlint`` too), else the jit's decorator or ``jax.jit(...)`` call where the function
    is defined (the target itself, or a helper's file), else the target's name."""
    target_path = ctx.target_path or ctx.path
    call = next((f for f in reversed(jit.call) if f.path == target_path), None)
    if call is not None:
        return _line_span(ctx.source, call) if ctx.path == target_path else None
    if jit.defined is not None and ctx.reports_in(jit.defined.path):
        if jit.defined.path != ctx.path:
            return None
        return _jit_span(ctx, jit) or (ctx.fallback_span if ctx.in_target_file else None)
    return ctx.fallback_span


def _jit_span(ctx: ProgramContext, jit: DonatingJit) -> Span | None:
    tree = ctx.index.tree
    if tree is None or jit.defined is None:
        return None
    line, name = jit.defined.line, jit.function
    for node in ast.walk(tree):
        if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef)) and node.name == name.rpartition(".")[2] \
                and line in (node.lineno, *(d.lineno for d in node.decorator_list)):
            for decorator in node.decorator_list:
                if _donates(decorator):
                    return ctx.index.span(decorator)
    # ``jax.jit(f, donate_argnums=...)``: the call whose first argument is the function (or a lambda
    # on its line).
    for node in ast.walk(tree):
        if isinstance(node, ast.Call) and _donates(node) and node.args:
            first = node.args[0]
            if (isinstance(first, ast.Name) and first.id == name) or \
                    (isinstance(first, ast.Lambda) and name == "<lambda>" and first.lineno == line):
                return ctx.index.span(node)
    return None


def _donates(node: ast.expr) -> bool:
    return isinstance(node, ast.Call) and any(k.arg in _DONATE_KEYWORDS for k in node.keywords)


def _line_span(source: str, frame: Frame) -> Span:
    """The code of one line (no indentation, no line break), in characters."""
    lines = source.splitlines()
    text = lines[frame.line - 1] if 0 < frame.line <= len(lines) else ""
    start = len(text) - len(text.lstrip())
    if frame.column is not None and frame.end_column is not None:
        return char_span(source, Span(frame.line, frame.column, frame.line, frame.end_column))
    return Span(frame.line, start, frame.line, len(text.rstrip()))


def _per_device(donation: Donation) -> str:
    """A sharded argument's share on each device."""
    return f", {size_text(donation.nbytes // donation.shards)} per device" if donation.shards > 1 else ""


def _held(jit: DonatingJit, wasted: list[Donation]) -> str:
    """The bytes a device keeps: on a sharded jit, each device's share."""
    if jit.devices > 1:
        return f"{size_text(sum(d.nbytes // d.shards for d in wasted))} on each of its {jit.devices} devices,"
    return size_text(sum(d.nbytes for d in wasted))


def _message(jit: DonatingJit, wasted: list[Donation]) -> str:
    function = f"`{jit.function}`" if jit.function and jit.function != "<lambda>" else "this jit"
    parts = [f"'{d.name}' ({d.shape}, {size_text(d.nbytes)}{_per_device(d)}): {_WHY.get(d.reason, 'not aliased')}"
             for d in wasted]
    subject = "donated argument" if len(wasted) == 1 else f"{len(wasted)} donated arguments"
    return (f"{subject} of {function} not aliased to any output: {'; '.join(parts)}. The donation saves "
            f"nothing ({_held(jit, wasted)} the caller meant to hand over stays allocated "
            "beside the outputs): return a value XLA can write into the buffer (the same byte size; on JAX "
            "0.4.35 the same shape and dtype), or stop donating it.")
