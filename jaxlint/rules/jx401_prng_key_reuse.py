"""JX401 prng-key-reuse: one PRNG key consumed twice, or a loop-invariant key consumed in a loop.

Modelled on JAX's key-reuse checker (``jax.experimental.key_reuse._core``): a table keyed by
primitive (the ``key`` rows of jaxlint.ir.primitives) says which operands an op consumes ("sinks")
and which of its outputs are its operands' keys ("forward"); a primitive it does not list consumes
its key-typed operands (the generic fallback). Differences, for precision and for legacy keys
(each row that differs names JAX's treatment in its ``jax`` field; rules/JX401.md says why):

- Identity. Every key value is resolved to a *root* value and the positions it covers in that
  root (an index array over the root's key shape), back through views: ``random_wrap`` /
  ``random_unwrap`` (so raw ``uint32`` legacy ``PRNGKey`` data, which every ``jax.random`` call
  re-wraps, is one key however often it is wrapped; JAX makes a new key at each wrap), static
  ``slice``, ``squeeze``, ``reshape``, ``transpose``, copies, ``device_put`` and
  ``optimization_barrier``. Anything else (``split``, ``fold_in``, a dynamic index) gives a new
  root; so do ``broadcast_in_dim``, ``dynamic_slice`` and ``gather``, which JAX forwards: a draw
  from a broadcast or gathered key and one from the key itself are not compared.
- Reads that JAX counts as uses. Only a draw or a split consumes a key here. JAX's checker also
  consumes the sliced positions at a ``slice``, the operands of ``transpose``,
  ``optimization_barrier``, ``select_n`` (``jnp.where``), ``concatenate`` (two or more) and
  ``debug_print``, and the key inserted by ``dynamic_update_slice`` or ``scatter``
  (``keys.at[i].set(key)``). Their outputs are new roots here (the views above excepted), so a
  key stored into an array and also drawn from directly is not reported.
- Loops. A consumer in a ``scan``/``while`` body whose key is loop-invariant (computed from loop
  constants only, or carried unchanged) draws the same numbers every iteration. A key folded in
  with the index, taken from ``xs`` or split in the carry is not invariant. Draws inside a ``cond``
  in the body are not judged (the branch may run on one iteration only).
- Recomputation under ``jax.checkpoint`` (scope ``rematted_computation``) repeats a draw on
  purpose: ignored, as JAX does.
- Place. A reuse is reported where the two draws' call stacks part: at the second of two calls
  that passed one key to a helper (naming the first), or at the draw itself when one function
  draws twice; a loop-invariant draw, at the loop body's line that leads to it. A helper in
  another project file that draws twice is reported in that file; one in an installed package,
  at the project's call into it. Two draws through the very same frames were repeated by a
  Python loop (unrolled in the trace): the source of each frame (``ctx.index_of``) shows which
  call the loop runs, so a helper given the same key on every iteration is reported at the
  caller's call in the loop, naming the helper's draw.
"""
from __future__ import annotations

import ast
import os
from typing import Any, Callable, Iterable

from jaxlint.ir import Location, Op, Region, Value, loop_body
from jaxlint.ir.primitives import LOOPS, traits
from jaxlint.model import Finding, Span
from jaxlint.rules.base import ProgramContext, Rule

# What each primitive does with a key (which operands it consumes, which outputs are its operands'
# keys) is its ``key`` row in jaxlint.ir.primitives, JAX's signatures with the differences above.
REMAT_SCOPE = "rematted_computation"


def is_key(value: Value) -> bool:
    return "key<" in str(value.dtype)


class PrngKeyReuse(Rule):
    code = "JX401"
    name = "prng-key-reuse"
    summary = ("The same PRNG key is consumed twice, or a loop-invariant key is consumed in a loop "
               "body: the draws repeat the same numbers.")
    severity = "error"
    reads_helpers = False  # places each finding itself, in whichever project file it belongs

    @classmethod
    def check_program(cls, ctx: ProgramContext) -> Iterable[Finding]:
        walker = _Walker(ctx)
        walker.region(ctx.program.top, {})
        for loop in ctx.program.walk():
            walker.loop(loop)
        return [cls.finding(path, span, message, target=ctx.target.qualname)
                for path, span, message in walker.findings.values()]


class _Walker:
    def __init__(self, ctx: ProgramContext) -> None:
        self.ctx = ctx
        self.outer: dict[Value, Value] = {}  # region input -> the outer value it is on entry
        self.cache: dict[Value, tuple[Value, Any]] = {}  # value -> resolve(value)
        self.findings: dict[int, tuple[str, Span, str]] = {}  # id(op) -> (path, span, message)

    # -- identity ---------------------------------------------------------------------------
    def resolve(self, value: Value) -> tuple[Value, Any]:
        """(root value, index array over the root's key positions) of a key or key-data value."""
        if value not in self.cache:
            self.cache[value] = self._resolve(value)
        return self.cache[value]

    def _resolve(self, value: Value) -> tuple[Value, Any]:
        import numpy as np

        shape = _key_shape(value)
        if shape is None:
            return value, None
        if value in self.outer:
            return self.resolve(self.outer[value])
        op = value.producer
        if op is None:
            return value, np.arange(int(np.prod(shape, dtype=int))).reshape(shape)
        fresh = (value, np.arange(int(np.prod(shape, dtype=int))).reshape(shape))
        forward = traits(op.primitive).key.forward
        if forward == "each" and len(op.inputs) == len(op.outputs):
            root, idx = self.resolve(op.inputs[op.outputs.index(value)])
            return (root, idx) if idx is not None else fresh
        if forward not in ("same", "view") or len(op.outputs) != 1:
            return fresh
        source = op.inputs[0]
        root, idx = self.resolve(source)
        if idx is None:
            return fresh
        raw = not is_key(source)  # raw uint32 key data: the last axis is the key's words
        try:
            idx = idx if forward == "same" else VIEWS[op.primitive](op.params, idx, source.shape, raw)
        except (ValueError, TypeError, KeyError):
            return fresh
        if idx is None or tuple(idx.shape) != tuple(shape):
            return fresh
        return root, idx

    # -- straight-line reuse ----------------------------------------------------------------
    def region(self, region: Region, consumed: dict[Value, Any]) -> None:
        """Walk ``region`` in program order; ``consumed`` maps root -> the first consumer of each of
        its key positions (an object array, None where not consumed yet). Per position, not per
        root: the two halves of one split are one root, and a reuse of one half must name the
        draw from that half, not the first draw from the other."""
        import numpy as np

        for op in region.ops:
            if op.primitive == "cond":
                merged: dict[Value, Any] = {}
                for branch in op.regions:
                    self.outer.update(zip(branch.inputs, op.inputs[1:]))
                    state = dict(consumed)
                    self.region(branch, state)
                    for root, firsts in state.items():
                        old = merged.get(root)
                        # A position either branch consumed is consumed; name the first branch's draw.
                        merged[root] = firsts if old is None else np.where(np.equal(old, None), firsts, old)
                consumed.update(merged)
                continue
            if op.primitive in LOOPS:
                self._enter_loop(op, consumed)
                continue
            if REMAT_SCOPE in op.scopes:
                continue
            for i in _consumed_operands(op):
                root, idx = self.resolve(op.inputs[i])
                if idx is None:
                    continue
                firsts = consumed.get(root)
                if firsts is None:
                    firsts = np.full(root_size(root), None, dtype=object)
                flat = idx.reshape(-1)
                earlier = [first for first in firsts[flat] if first is not None]
                if earlier:
                    self._report_reuse(op, earlier[0])
                else:
                    firsts = firsts.copy()
                    firsts[flat] = op
                    consumed[root] = firsts

    def _enter_loop(self, loop: Op, consumed: dict[Value, Any]) -> None:
        """Loop constants are the outer values; a body draw from a key used before is a reuse."""
        found = loop_body(loop)
        if found is None:
            return
        body, nconsts, offset = found
        self.outer.update(zip(body.inputs[:nconsts], loop.inputs[offset:offset + nconsts]))
        self.region(body, consumed)

    def _report_reuse(self, op: Op, first: Op) -> None:
        ctx = self.ctx
        stack, earlier = _frames(ctx, op), _frames(ctx, first)
        if stack == earlier and not ctx.program.stale_library_tracebacks:
            # The same frames twice: a Python loop ran them again; report where it repeats them.
            depth, call = _looping_frame(ctx, stack)
            if call is not None and depth == len(stack) - 1:
                self.findings.setdefault(id(op), (stack[-1].path, stack[-1].span, (
                    f"PRNG key reused: this draw ({_draw(op)}) consumes the same key on every iteration "
                    "of the loop around it, without a jax.random.split or fold_in in between, so every "
                    "iteration draws the same (or correlated) random bits. Split the key in the loop (or "
                    "fold in the iteration index) and give each draw its own subkey.")))
                return
            if call is not None:
                helper = _callee(call)
                self.findings.setdefault(id(op), (stack[depth].path, stack[depth].span, (
                    f"PRNG key reused: this call passes the same key to {helper}() on every iteration of "
                    f"the loop; {helper} draws from it ({_draw(op)}) at {_at(stack[-1])}, so every iteration "
                    "draws the same (or correlated) random bits. Split the key in the loop (or fold in "
                    "the iteration index) and pass each call its own subkey. If the same bits are "
                    "meant, pass jax.random.clone(key).")))
                return
        here, there = _place(ctx, earlier, stack)
        if here is None or (ctx.program.stale_library_tracebacks and stack == earlier):
            here = None  # unknown, or likely a stale location (see _frames)
            path, span, where = ctx.path, ctx.fallback_span, ""
        else:
            path, span, where = here.path, here.span, _line_of(there, here)
        if span is None:
            return
        if here is None or here == stack[-1] or not earlier:
            message = (f"PRNG key reused: this draw ({_draw(op)}) consumes a key that a draw "
                       f"({_draw(first)}){where} already consumed, without a jax.random.split or fold_in "
                       "in between, so the two draws are the same (or correlated) random bits. Split "
                       "the key and give each draw its own subkey. If the same bits are meant, draw from "
                       "jax.random.clone(key).")
        else:  # two calls into helpers that draw from the key they were passed
            message = (f"PRNG key reused: this call draws from a key (a {_draw(op)} at {_at(stack[-1])}) that "
                       f"the call{where} already drew from (a {_draw(first)} at {_at(earlier[-1])}), "
                       "without a jax.random.split or fold_in in between, so both calls get the same (or "
                       "correlated) random bits. Split the key and pass each call its own subkey. If the "
                       "same bits are meant, pass jax.random.clone(key) to one of them.")
        self.findings.setdefault(id(op), (path, span, message))

    # -- loop-invariant keys ----------------------------------------------------------------
    def loop(self, loop: Op) -> None:
        found = loop_body(loop)
        length = loop.params.get("length")
        # A symbolic length (a shape-polymorphic trace) may exceed 1: the body may run again.
        if found is None or (loop.primitive == "scan" and isinstance(length, int) and length <= 1):
            return
        body, nconsts, _ = found
        ncarry = int(loop.params["num_carry"]) if loop.primitive == "scan" else len(body.outputs)
        # A carry is invariant when the body returns it unchanged, or returns a value computed from
        # invariant values only (grown from the constants until nothing changes).
        invariant: set[Value] = set(body.inputs[:nconsts])
        carries: set[int] = set()
        while True:
            _propagate(body, invariant)
            more = {k for k in range(ncarry) if k not in carries and (
                body.outputs[k] is body.inputs[nconsts + k] or _inv(body.outputs[k], invariant))}
            if not more:
                break
            carries |= more
            invariant.update(body.inputs[nconsts + k] for k in more)
        tainted: set[Value] = set()
        for op in body.ops:
            if op.regions or REMAT_SCOPE in op.scopes:
                continue
            if any(v in tainted for v in op.inputs):
                tainted.update(op.outputs)
                continue
            keys = [op.inputs[i] for i in _consumed_operands(op)]
            if keys and any(_inv(k, invariant) for k in keys):
                tainted.update(op.outputs)
                self._report_loop(loop, op)

    def _report_loop(self, loop: Op, op: Op) -> None:
        ctx = self.ctx
        here, _ = _place(ctx, ctx.program.call_stack(loop), _frames(ctx, op))
        span = here.span if here is not None else ctx.fallback_span
        if span is None:
            return
        kind = "scan" if loop.primitive == "scan" else "while_loop"
        runs = (f"each of its {loop.params['length']} iterations" if kind == "scan"
                else "every iteration")
        self.findings[id(op)] = (here.path if here is not None else ctx.path, span, (
            f"PRNG key is loop-invariant in this {kind} body: this draw ({_draw(op)}) consumes "
            "the same key "
            f"in {runs}, so every iteration draws the same numbers. Fold in the iteration index "
            "(jax.random.fold_in(key, i)), pass per-iteration keys as xs "
            "(jax.random.split(key, n)), or carry the key and split it each iteration."))


def root_size(root: Value) -> int:
    import numpy as np

    shape = _key_shape(root)
    return int(np.prod(shape, dtype=int)) if shape is not None else 0


def _key_shape(value: Value) -> tuple[int, ...] | None:
    """Key positions of a key array, or of raw uint32 key data (last axis = words)."""
    shape = value.shape
    if not all(isinstance(d, int) for d in shape):
        return None  # symbolic: not tracked
    if is_key(value):
        return tuple(shape)
    if str(value.dtype) == "uint32" and len(shape) >= 1:
        return tuple(shape[:-1])
    return None


# The views (``forward="view"`` rows of the table), each mapping the index array of its operand's
# key positions to its output's, given the params, the operand's shape and whether it is raw
# uint32 key data (the last axis is the key's words); None when the view does not keep whole
# keys. Like the dynamic signatures of JAX's checker (its ``_slice_signature``), they read params.
def _slice_view(params: dict, idx: Any, shape: tuple, raw: bool) -> Any:
    strides = params.get("strides") or (1,) * len(shape)
    cuts = list(zip(params["start_indices"], params["limit_indices"], strides))
    if raw and cuts[-1] != (0, shape[-1], 1):
        return None  # a word of the key, not a key
    return idx[tuple(slice(*c) for c in (cuts[:-1] if raw else cuts))]


def _squeeze_view(params: dict, idx: Any, shape: tuple, raw: bool) -> Any:
    import numpy as np

    dims = tuple(int(d) % len(shape) for d in params["dimensions"])
    if raw and len(shape) - 1 in dims:
        return None
    return np.squeeze(idx, dims) if dims else idx


def _reshape_view(params: dict, idx: Any, shape: tuple, raw: bool) -> Any:
    if params.get("dimensions") is not None:
        return None
    new = tuple(params["new_sizes"])
    if raw:
        if not new or new[-1] != shape[-1]:
            return None
        new = new[:-1]
    return idx.reshape(new)


def _transpose_view(params: dict, idx: Any, shape: tuple, raw: bool) -> Any:
    perm = tuple(params["permutation"])
    if raw:
        if perm[-1] != len(shape) - 1:
            return None
        perm = perm[:-1]
    return idx.transpose(perm)


VIEWS: dict[str, Callable[[dict, Any, tuple, bool], Any]] = {
    "slice": _slice_view, "squeeze": _squeeze_view, "reshape": _reshape_view, "transpose": _transpose_view}


def _consumed_operands(op: Op) -> tuple[int, ...]:
    sinks = traits(op.primitive).key.sinks
    if sinks is not None:
        return sinks
    if op.regions:  # JX401 walks into the regions
        return ()
    return tuple(i for i, v in enumerate(op.inputs) if is_key(v))  # generic fallback


def _propagate(region: Region, invariant: set[Value]) -> None:
    """Add the outputs of top-level ops whose operands are all invariant (not nested loops/conds)."""
    for op in region.ops:
        if not op.regions and all(_inv(v, invariant) for v in op.inputs):
            invariant.update(op.outputs)


def _inv(value: Value, invariant: set[Value]) -> bool:
    return value.literal is not None or value.const or value in invariant


def _draw(op: Op) -> str:
    return {"random_bits": "random_bits", "random_split": "split",
            "random_gamma": "random_gamma"}.get(op.primitive, op.primitive)


def _frames(ctx: ProgramContext, op: Op) -> tuple[Location, ...]:
    """The user frames that made the draw ``op``, outermost first (() when unknown).

    Before JAX 0.7 the equations of a cached library jaxpr (``jax.random.normal``'s inner jit)
    keep the traceback of the first call site that traced it, possibly in another function: there
    the legacy-key ``random_wrap`` that the user's call emits just before is trusted instead, and
    a location in the target's file outside the traced function is dropped.
    """
    if ctx.program.stale_library_tracebacks:
        wrap = op.inputs[0].producer if op.inputs else None
        if wrap is not None and wrap.primitive == "random_wrap" and wrap.location is not None:
            return ctx.program.call_stack(wrap)
        where = op.location
        if where is not None and where.path == (ctx.target_path or ctx.path) \
                and not ctx.target.span.contains(where.span):
            return ()
    return ctx.program.call_stack(op)


def _place(ctx: ProgramContext, reference: tuple[Location, ...],
           stack: tuple[Location, ...]) -> tuple[Location | None, Location | None]:
    """(where to report a draw made through ``stack``, the frame of ``reference`` at the same depth).

    ``reference`` is the earlier draw's stack (or the loop's): the frames the two share are the
    callers both went through; the first frame where they part is the call (or the draw) that
    the function passing the key wrote. A frame in an installed package moves out to the
    project's call into it. (None, None) when no frame is in a file this program reports in.
    """
    depth = 0
    while depth < min(len(stack), len(reference)) and _same(stack[depth], reference[depth]):
        depth += 1
    depth = min(depth, len(stack) - 1)  # the same stack (one line drawing in a Python loop): the draw
    while depth >= 0 and not ctx.reports_in(stack[depth].path):
        depth -= 1
    if depth < 0:
        return None, None
    return stack[depth], reference[depth] if depth < len(reference) else None


def _looping_frame(ctx: ProgramContext, stack: tuple[Location, ...]) -> tuple[int, ast.Call | None]:
    """(depth, call) of the innermost frame of ``stack`` whose call (or, last, draw) a Python loop
    in a project file runs on every iteration; (-1, None) when no frame's source shows one."""
    for depth in range(len(stack) - 1, -1, -1):
        frame = stack[depth]
        index = ctx.index_of(frame.path) if ctx.reports_in(frame.path) else None
        node = index.node_at(frame.span, ast.Call) if index is not None else None
        if node is not None and index.loops_around(node)[0]:
            return depth, node
    return -1, None


def _callee(call: ast.Call) -> str:
    text = ast.unparse(call.func)
    return text if len(text) <= 40 else text[:37] + "..."


def _same(a: Location, b: Location) -> bool:
    return a.path == b.path and (a.span.start_line, a.span.start_col) == (b.span.start_line, b.span.start_col)


def _line_of(there: Location | None, here: Location) -> str:
    if there is None:
        return ""
    if there.path != here.path:
        return f" at {_at(there)}"
    return f" at line {there.span.start_line}"


def _at(where: Location) -> str:
    return f"{os.path.basename(where.path)}:{where.span.start_line}"
