"""JX312 tpu-tile-padding: on a TPU target, a buffer of the compiled program whose tiled layout takes
at least 8 times its data and 64 MiB more (arrays of small matrices: each (3, 3) block fills an
(8, 128) tile), read from the layouts XLA chose (jaxlint.ir.padding), reported at the line that
makes it with both sizes and, for a product of small matrices, that product written elementwise,
compiled for the target (jaxlint.ir.elementwise)."""
from __future__ import annotations

import ast
from typing import Iterable

from jaxlint.ir.padding import Padded, Padding, Rewrite
from jaxlint.model import Cost, Edit, Finding, Fix, Span
from jaxlint.rules.base import ProgramContext, Rule, frame_span
from jaxlint.text import size_text


class TpuTilePadding(Rule):
    code = "JX312"
    name = "tpu-tile-padding"
    summary = "A buffer whose TPU tiled layout takes at least 8x its data (arrays of small matrices)."
    severity = "warning"
    fix = "display-only"
    reads_helpers = True  # the padded operation may sit in a helper's file

    @classmethod
    def check_program(cls, ctx: ProgramContext) -> Iterable[Finding]:
        if not ctx.program.target.is_tpu:
            return  # the CPU's layouts are not tiled; nothing is compiled
        for found in ctx.program.compiled("padding"):
            lines: dict[tuple[str, int], list[Padded]] = {}
            for buffer in found.buffers:
                frame = next((f for f in buffer.frames if ctx.reports_in(f.path)), None)
                key = (frame.path, frame.line) if frame is not None else ("", 0)
                lines.setdefault(key, []).append(buffer)
            for (path, line), buffers in lines.items():
                if path and path != ctx.path:
                    continue  # that file's context reports it
                frame = next((f for f in buffers[0].frames if (f.path, f.line) == (path, line)), None)
                span = frame_span(ctx.source, frame.line, frame.column, frame.end_column) if frame is not None \
                    else ctx.fallback_span
                if span is None:
                    continue
                rewrite = dict(found.rewrites).get((path, line))
                product = _product(ctx, span) if rewrite is not None else None
                text = message(found, buffers, rewrite, product is not None, line) + ctx.program.target_note
                note = f"device memory the tiles take beyond the data on {found.target}"
                cost = Cost(basis="compiled", flops=0.0, bytes=float(sum(b.extra for b in buffers)),
                            equations=None, note=note)
                yield ctx.finding(cls, text, span, _fix(ctx, product, rewrite), cost=cost)


def _product(ctx: ProgramContext, span: Span) -> ast.BinOp | None:
    """The ``a @ b`` of the span, when its operands are plain names or attributes (so writing them
    twice reads the same arrays) and it is the line's only product."""
    node = ctx.index.node_at(span, ast.BinOp)
    if node is None:
        line = [n for n in ast.walk(ctx.index.tree) if isinstance(n, ast.BinOp) and isinstance(n.op, ast.MatMult)
                and n.lineno == span.start_line] if ctx.index.tree is not None else []
        node = line[0] if len(line) == 1 else None
    if node is None or not isinstance(node.op, ast.MatMult):
        return None
    if not all(isinstance(side, (ast.Name, ast.Attribute)) for side in (node.left, node.right)):
        return None
    return node


def _fix(ctx: ProgramContext, product: ast.BinOp | None, rewrite: Rewrite | None) -> Fix | None:
    """``a @ b`` -> ``(a[..., :, :, None] * b[..., None, :, :]).sum(-2)``, shown and not applied: on
    the TPU it computes at float32 where the product ran in bfloat16 passes, so values change."""
    if product is None or rewrite is None or not rewrite.same_values:
        return None
    left, right = ctx.index.text(product.left), ctx.index.text(product.right)
    return Fix("display-only", "Write the product of small matrices elementwise",
               (Edit(ctx.index.span(product), f"({left}[..., :, :, None] * {right}[..., None, :, :]).sum(-2)"),))


def message(found: Padding, buffers: list[Padded], rewrite: Rewrite | None, mechanical: bool,
            line: int = 0) -> str:
    """The finding's message: the largest buffer the line makes, the others, what it costs and
    what avoids it."""
    largest = buffers[0]
    made = "is stored" if largest.kind != "argument" else "(an argument) is stored"
    share = largest.stored / found.needed if found.needed else 0.0
    text = (f"on {found.target} the {largest.shape} {_what(largest)} {made} in {largest.tile} tiles: "
            f"{size_text(largest.stored)} for {size_text(largest.data)} of data ({largest.ratio:.0f}x), "
            f"{share:.0%} of the {size_text(found.needed)} the function needs (arguments, outputs and temporaries)")
    if len(buffers) > 1:
        rest = buffers[1:]
        text += (f"; {len(rest)} more buffer{'s' * (len(rest) != 1)} made here {'are' if len(rest) > 1 else 'is'} "
                 f"padded too ({size_text(sum(b.stored for b in rest))} for {size_text(sum(b.data for b in rest))})")
    text += "."
    if rewrite is not None and rewrite.needed is not None:
        how = "written elementwise as below" if mechanical and rewrite.same_values else f"as {rewrite.text}"
        text += f" With this product {how}, it needs {size_text(rewrite.needed)}"
        together = found.together
        others = [n for _, n in found.product_lines if n != line]
        if together is not None and together.needed is not None and others:
            lines = ", ".join(str(n) for n in others)
            text += (f"; with the products of line{'s' * (len(others) > 1)} {lines} written so too, "
                     f"{size_text(together.needed)}")
        text += "."
    elif _gathered(buffers):
        small = _small_axes(largest)
        text += (f" A gather of rows of{small} fills a tile per row; gathering each column on its own "
                 "(`x[:, c][idx]` for each c) avoids it, at a cost in time: on jax-md's neighbour gather "
                 "(bench/tpu_padding_gather.py) a v5e chip needed 30x less memory and ran 5.4x slower. "
                 "Worth it where memory is short.")
    else:
        small = _small_axes(largest)
        text += (f" Keep the small axes{small} out of the two minor positions: store the batch last and write "
                 "the per-matrix algebra elementwise over it (or a closed form for small inverses and solves).")
    return text


def _gathered(buffers: list[Padded]) -> bool:
    """The line's padded buffers are a gather's (and copies of arguments for it), not those of a
    decomposition that gathers inside (an inverse's pivoting)."""
    operations = {b.op_name.rpartition("/")[2] for b in buffers if b.op_name and not b.op_name.startswith("args[")}
    return operations == {"gather"}


def _what(buffer: Padded) -> str:
    operation = buffer.op_name.rpartition("/")[2]
    return f"result of {operation}" if operation and not operation.startswith("args[") else "buffer made here"


def _small_axes(buffer: Padded) -> str:
    dims = [d for d in buffer.shape[buffer.shape.index("[") + 1:-1].split(",") if d]
    small = [d for d in dims[-2:] if d.isdigit() and int(d) < 128]
    return f" ({', '.join(small)})" if small else ""
