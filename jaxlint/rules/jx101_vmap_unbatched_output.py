"""JX101 vmap-unbatched-output: a vmap output that depends on no mapped input, used one row at a time."""
from __future__ import annotations

import math
import re
from dataclasses import dataclass
from typing import Any, Iterable, cast

from jaxlint.fixes.vmap_out_axes import build_fix
from jaxlint.ir import Op, Value, VmapRecord
from jaxlint.ir.patterns import returned
from jaxlint.model import Cost, Finding
from jaxlint.rules.base import ProgramContext, Rule
from jaxlint.text import char_span, offset_of


class VmapUnbatchedOutput(Rule):
    code = "JX101"
    name = "vmap-unbatched-output"
    summary = "A vmap output depends on no mapped input, is broadcast to the batch, and only one row is used."
    severity = "warning"
    fix = "safe"

    @classmethod
    def check_program(cls, ctx: ProgramContext) -> Iterable[Finding]:
        # One finding per vmap call site: its unbatched outputs share one out_axes edit. A site run
        # several times (a Python loop, a helper called twice) reports an output only if every
        # run shows the pattern.
        sites: dict[tuple, dict[str, tuple[VmapRecord, dict[int, list[Value]]]]] = {}
        for output, values in ctx.program.vmap_outputs.items():
            record = ctx.vmap_records.get(output.tag)
            if record is not None and record.path == ctx.path:
                runs = sites.setdefault((record.span, tuple(record.leaf_paths)), {})
                runs.setdefault(output.tag, (record, {}))[1].setdefault(output.leaf, []).extend(values)
        for runs in sites.values():
            finding = _check_site(cls, ctx, list(runs.values()))
            if finding is not None:
                yield finding


@dataclass
class _Unbatched:
    """One output of one vmap run: broadcast by vmap and only ever read one row at a time."""

    leaf: int
    path: str  # pytree path, e.g. "[0]" or "['a']"; "" when the output is a single array
    axis: int  # the batch axis, normalized
    values: list[Value]  # the broadcast value in the IR (several if the trace is inlined twice)
    uses: list[str]  # e.g. ["[0]", "[9]"]


def _check_site(rule: type[Rule], ctx: ProgramContext,
                runs: list[tuple[VmapRecord, dict[int, list[Value]]]]) -> Finding | None:
    per_run = []
    for record, leaves in runs:
        found = {}
        for leaf, values in leaves.items():
            unbatched = _unbatched_output(record, leaf, values, ctx.source, ctx.path)
            if unbatched is not None:
                found[leaf] = unbatched
        per_run.append(found)
    common = sorted(set.intersection(*(set(found) for found in per_run)))
    if not common:
        return None
    record = runs[0][0]
    outputs = [per_run[0][leaf] for leaf in common]
    for found in per_run[1:]:  # merge the uses of other runs into the first run's description
        for output in outputs:
            output.values += found[output.leaf].values
            output.uses += found[output.leaf].uses
    fix = None
    if all(output.axis == 0 for output in outputs):  # ``x[k]`` in the source selects the batch axis
        fix = build_fix(ctx.source, record, common)
    return ctx.finding(rule, _message(outputs), char_span(ctx.source, record.span), fix,
                       cost=_cost_object(outputs))


def _unbatched_output(record: VmapRecord, leaf: int, values: list[Value], source: str,
                      path: str) -> _Unbatched | None:
    axis = record.leaf_axes[leaf]
    if axis is None or leaf >= len(record.unbatched) or not record.unbatched[leaf]:
        return None  # declared unbatched already, or batched (JAX refuses out_axes=None there)
    axis = axis % len(values[0].shape)  # a batched output has at least the batch axis
    uses: list[str] = []
    for value in values:
        producer = value.producer
        # Evidence in the jaxpr as well as JAX's verdict: vmap materialized the output by broadcasting.
        if producer is None or producer.primitive != "broadcast_in_dim" \
                or axis in tuple(producer.params.get("broadcast_dimensions", ())):
            return None
        rows = [_single_row_use(op, value, axis, source, path) for op in value.uses]
        # A returned value (from the function, a loop body, a branch) is used as a whole array.
        if not rows or any(r is None for r in rows) or returned(value):
            return None
        uses += rows
    return _Unbatched(leaf, record.leaf_paths[leaf], axis, list(values), uses)


def _single_row_use(op: Op, value: Value, axis: int, source: str, path: str) -> str | None:
    """'[k]' when ``op`` (with the squeeze after it) selects one element along ``axis``; ``[-1]``
    as the source wrote it, where JAX made it ``[n - 1]``."""
    shape = value.shape
    others_full = lambda sizes: all(  # noqa: E731
        _same(sizes[d], shape[d]) for d in range(len(shape)) if d != axis)
    if op.primitive == "slice":
        start, limit = op.params["start_indices"], op.params["limit_indices"]
        strides = op.params.get("strides") or (1,) * len(shape)
        if not (_same(limit[axis] - start[axis], 1) and strides[axis] == 1
                and all(_same(start[d], 0) for d in range(len(shape)) if d != axis)
                and others_full(limit)):
            return None
        index = f"[{_negative_as_written(op, source, path, start[axis], shape[axis]) or start[axis]}]"
    elif op.primitive == "dynamic_slice":
        sizes = op.params["slice_sizes"]
        if op.inputs[0] is not value or not (_same(sizes[axis], 1) and others_full(sizes)):
            return None
        written = _index_text(op.inputs[1 + axis])
        constant = int(written) if written.lstrip("-").isdigit() else None
        index = f"[{_negative_as_written(op, source, path, constant, shape[axis]) or written}]"
    elif op.primitive == "gather":
        numbers = op.params["dimension_numbers"]
        sizes = op.params["slice_sizes"]
        if op.inputs[0] is not value or tuple(numbers.collapsed_slice_dims) != (axis,) \
                or tuple(numbers.start_index_map) != (axis,) \
                or not (_same(sizes[axis], 1) and others_full(sizes)):
            return None
        return f"[{_index_text(op.inputs[1])}]"  # gather collapses the axis itself: no squeeze follows
    else:
        return None
    squeezes = op.outputs[0].uses
    if not squeezes or returned(op.outputs[0]) or any(
            s.primitive != "squeeze" or tuple(s.params["dimensions"]) != (axis,) for s in squeezes):
        return None
    return index


_NEGATIVE_INDEX = re.compile(r"\[\s*(-\s*\d+)\s*\]")


def _negative_as_written(op: Op, source: str, path: str, start: Any, size: Any) -> str | None:
    """The negative index (``-1``) the source wrote at ``op``, when it is ``start`` counted from
    the end of an axis of ``size``; None otherwise."""
    location = op.location
    if location is None or location.path != path or not isinstance(start, int) or not isinstance(size, int):
        return None
    span = location.span
    try:
        text = source[offset_of(source, span.start_line, span.start_col):offset_of(source, span.end_line, span.end_col)]
    except (ValueError, IndexError):
        return None
    # Before JAX 0.5 a location is a whole line (no columns): any ``[-k]`` on it that is this row.
    written = {m.replace(" ", "") for m in _NEGATIVE_INDEX.findall(text)}
    fitting = [w for w in written if int(w) + size == start]
    return fitting[0] if len(fitting) == 1 else None


def _index_text(index: Value) -> str:
    """The index as the source likely wrote it: a constant, a symbolic size, or ``i`` (traced)."""
    for _ in range(4):  # through the few ops JAX wraps a static index in
        if index.literal is not None:
            try:  # a Python int, NumPy scalar or (JAX >= 0.7) TypedInt
                return str(int(index.literal))
            except (TypeError, ValueError):
                return "i"
        producer = index.producer
        if producer is None:
            break
        if producer.primitive == "select_n":  # negative-index normalization: case 0 is the index as written
            index = producer.inputs[1]
        elif producer.primitive in ("broadcast_in_dim", "convert_element_type", "reshape"):
            index = producer.inputs[0]
        elif producer.primitive == "dim_as_value":
            return str(producer.params["dim"])
        else:
            break
    return "i"


def _same(a: Any, b: Any) -> bool:
    try:
        return bool(a == b)
    except Exception:  # symbolic dimensions that cannot be compared
        return False


def _message(outputs: list[_Unbatched]) -> str:
    first = outputs[0]
    batch = first.values[0].shape[first.axis]
    described = [f"{'output ' + o.path if o.path else 'output'} (used as {', '.join(sorted(set(o.uses)))})"
                 for o in outputs]
    if len(outputs) == 1:
        subject = f"vmap {described[0]} depends on no mapped input, yet vmap broadcasts it"
        declare = "declare it unbatched with out_axes=None"
    else:
        subject = (f"vmap {', '.join(described[:-1])} and {described[-1]} depend on no mapped input, "
                   "yet vmap broadcasts each")
        declare = "declare them unbatched with out_axes=None"
    return (f"{subject} to the batch ({batch} copies) and every use selects one row; {declare}. "
            + _cost(outputs))


def _cost(outputs: list[_Unbatched]) -> str:
    broadcasts = [v for o in outputs for v in o.values]
    eager = [v for v in broadcasts if not cast(Op, v.producer).under_jit]
    # Under jit XLA deletes broadcast -> slice -> squeeze; a broadcast made outside any jit, or
    # read outside the jit that made it, is written to memory in full.
    leaves_jit = [v for v in broadcasts if cast(Op, v.producer).under_jit and any(not op.under_jit for op in v.uses)]
    if not eager and not leaves_jit:
        return ("Cost: none in compiled code, under jax.jit XLA deletes the broadcast and the "
                "selection; this is a clarity fix.")
    where = ("outside jax.jit each call materializes the broadcast" if eager
             else "the broadcast leaves the jax.jit that makes it, so each call materializes it")
    return f"Cost: {where}: {_size(eager or leaves_jit, outputs)} written where one row is read."


def _cost_object(outputs: list[_Unbatched]) -> Cost:
    """Bytes written by materialized broadcasts per call; zero when XLA deletes them all."""
    from jaxlint.ir import costs

    broadcasts = [v for o in outputs for v in o.values]
    materialized = [v for v in broadcasts if not cast(Op, v.producer).under_jit
                    or any(not op.under_jit for op in v.uses)]
    if not materialized:
        return Cost(basis="shapes", flops=0.0, bytes=0.0,
                    note="under jax.jit XLA deletes broadcast -> slice -> squeeze")
    sizes = [costs.nbytes(v) for v in materialized]
    total = None if any(b is None for b in sizes) else float(sum(sizes))
    return Cost(basis="shapes", flops=0.0, bytes=total,
                note="the broadcast is written to memory in full (bytes unknown for symbolic sizes)"
                if total is None else "the broadcast is written to memory in full")


def _size(values: list[Value], outputs: list[_Unbatched]) -> str:
    axis_of = {id(v): o.axis for o in outputs for v in o.values}
    try:
        elements = sum(int(math.prod(v.shape)) for v in values)
        size = sum(int(math.prod(v.shape)) * v.dtype.itemsize for v in values)
        return f"{elements} elements ({size} bytes)"
    except Exception:  # symbolic sizes
        value = values[0]
        axis = axis_of[id(value)]
        row = [str(d) for i, d in enumerate(value.shape) if i != axis]
        return f"{value.shape[axis]} copies of {' x '.join(row) + ' elements' if row else 'a scalar'}"
