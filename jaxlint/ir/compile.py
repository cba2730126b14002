"""The compile step of the memory rules, in the worker: XLA's optimized program for a traced
signature, read into JAX-free facts (jaxlint.ir.memory). Compiling costs far more than tracing,
so only what a rule asks for is compiled, and only when the jaxpr has the shape it looks for: a
top-level jit with donated arguments ("donations"), a scan or while loop ("loops"), a sharding
over more than one device ("rematerializations": the SPMD partitioner's warnings, captured from
the compile, jaxlint.ir.partitioner); JX306 asks
for one differentiated loop (``checkpoint_memory``: the program compiled as traced and with the
loop body checkpointed, jaxlint.ir.remat); JX709 asks, on a TPU target, for the precision of its
products ("precision": jaxlint.ir.precision). A compile that fails (symbolic shapes, an unsupported
primitive) gives no facts, never an error."""
from __future__ import annotations

import math
import os
import time
from collections import OrderedDict
from contextlib import nullcontext
from typing import Any

from jaxlint.chips import Target
from jaxlint.ir import hbm, hlo, memory, padding, partitioner, precision, primitives, remat, sharded, target_devices
from jaxlint.jaxapi import compiling, jaxprs, tracebacks
from jaxlint.jaxapi.shardings import input_shardings, pieces, sharding_of_type

KINDS = ("donations", "loops", "rematerializations", "hbm", "padding", "precision")
# Compiled modules by (jaxpr, donation, compile target), with the partitioner's warnings of their compile: a
# jitted step several targets call compiles once. The jaxpr is kept alive by the entry, so its id
# stays its own.
_CACHE: OrderedDict[tuple[int, tuple[bool, ...], str], tuple[Any, Any, list[str]]] = OrderedDict()
# Temporary bytes of programs rebuilt with a loop body checkpointed, by (program, body).
_REMAT: OrderedDict[tuple[int, int, str], tuple[Any, Any, int | None]] = OrderedDict()
# The fit of programs in the TPU target's HBM (jaxlint.ir.hbm.Hbm), by (jaxpr, target).
_HBM: OrderedDict[tuple[int, str], tuple[Any, list[Any]]] = OrderedDict()
# The optimized HLO of each program JX311 compiled for the TPU target and the bytes it needs, by
# (jaxpr, target): JX312 reads its layouts.
_HLO: OrderedDict[tuple[int, str], tuple[Any, str, int]] = OrderedDict()
_CACHE_SIZE = 32
_JAXLINT_DIR = os.path.join(os.path.dirname(os.path.dirname(os.path.abspath(__file__))), "")
# Seconds spent compiling in this process (the worker reports its share per module: --timings).
SPENT = {"seconds": 0.0}


def compiled_facts(closed: Any, kind: str, target: Target | None = None) -> list[Any]:
    """The facts of ``kind`` (one of KINDS) about ``closed``, a traced ClosedJaxpr, compiled for
    ``target`` (the program's, from when it was built; default: the current one)."""
    with target_devices.using(target):
        return _facts(closed, kind)


def _facts(closed: Any, kind: str) -> list[Any]:
    if kind == "donations":
        return _donations(closed)
    if kind == "loops":
        return _loops(closed)
    if kind == "rematerializations":
        return _rematerializations(closed)
    if kind == "hbm":
        return _hbm(closed)
    if kind == "padding":
        return _padding(closed)
    if kind == "precision":
        return _precision(closed)
    raise ValueError(f"unknown kind of compiled facts: {kind}")


def checkpoint_memory(closed: Any, body: Any, target: Target | None = None) -> memory.Remat | None:
    """``_checkpoint_memory`` compiled for ``target`` (the program's; default: the current one)."""
    with target_devices.using(target):
        return _checkpoint_memory(closed, body)


def _checkpoint_memory(closed: Any, body: Any) -> memory.Remat | None:
    """XLA's temporary memory for ``closed`` as traced and with the forward scan whose body is
    ``body`` (a ClosedJaxpr from the scan's params) checkpointed; None when the program cannot be
    rebuilt that way (no transposed scan reads the loop's residuals in the same jaxpr) or either
    does not compile."""
    key = (id(closed), id(body), target_devices.current().name)
    shardings = placement(closed)  # both compiled as the user's jit places the inputs
    if key not in _REMAT:
        _REMAT[key] = (closed, body, _checkpointed_temp(closed, body, shardings))
        if len(_REMAT) > _CACHE_SIZE:
            _REMAT.popitem(last=False)
    _REMAT.move_to_end(key)
    checkpointed = _REMAT[key][2]
    compiled = _compiled(closed, (), False, shardings)
    if checkpointed is None or compiled is None or compiled[3] is None:
        return None
    return memory.Remat(compiled[3], checkpointed, _partitions(compiled[0]))


def _checkpointed_temp(closed: Any, body: Any, shardings: tuple[Any, ...] | None) -> int | None:
    started = time.perf_counter()
    try:
        target_devices.screen(closed)
        rebuilt = remat.checkpointed(closed, body)
        return None if rebuilt is None else compiling.temp_bytes(rebuilt, [v.aval for v in closed.jaxpr.invars],
                                                              shardings)
    except Exception:  # a program the rebuild or XLA does not take: no comparison
        return None
    finally:
        SPENT["seconds"] += time.perf_counter() - started


def _compiled(closed: Any, donated: tuple[bool, ...], keep_unused: bool,
              shardings: list[Any] | None = None) -> tuple[str, list[int], list[str], int | None] | None:
    """The compile of ``closed`` with its inputs placed by ``shardings`` (None: ``placement``)."""
    key = (id(closed), donated, target_devices.current().name)
    if key in _CACHE:
        _CACHE.move_to_end(key)
        return _CACHE[key][1]
    started = time.perf_counter()
    placed = tuple(shardings) if shardings is not None else placement(closed)
    # Only a sharded program is partitioned: the others compile with descriptor 2 left alone.
    with partitioner.captured_stderr() if placed is not None or sharded.is_partitioned(closed) \
            else nullcontext([]) as warnings:
        try:
            result = compiling.compile_jaxpr(closed, donated, keep_unused, placed)
        except Exception:  # symbolic shapes, effects or primitives that do not compile here
            result = None
        if result is None and placed is not None:  # shardings this process cannot place (an abstract mesh)
            try:
                result = compiling.compile_jaxpr(closed, donated, keep_unused)
            except Exception:
                result = None
    SPENT["seconds"] += time.perf_counter() - started
    _CACHE[key] = (closed, result, warnings)
    if len(_CACHE) > _CACHE_SIZE:
        _CACHE.popitem(last=False)
    return result


def _donations(closed: Any) -> list[memory.DonatingJit]:
    jaxpr, _ = jaxprs.open_jaxpr(closed)
    found = []
    for eqn in jaxpr.eqns:
        donated = tuple(bool(d) for d in eqn.params.get("donated_invars", ()) or ())
        inner = eqn.params.get("jaxpr")
        if not any(donated) or inner is None or not hasattr(inner, "consts"):
            continue  # donation only means something on a jit the program calls, not a nested one
        # Placed as the jit's in_shardings place them (Explicit types place themselves): the
        # partitioned program the user runs, whose sizes are per device.
        shardings = input_shardings(eqn)
        compiled = _compiled(inner, donated, bool(eqn.params.get("keep_unused", False)),
                             shardings if any(s is not None for s in shardings) else None)
        if compiled is None:
            continue
        text, kept, warnings, _ = compiled
        if not kept or _entry_parameters(text) != len(kept):
            continue  # parameters that are not the kept arguments (a tuple, effect tokens): no map
        aliased, donors = memory.alias_parameters(text)
        names = tracebacks.arg_names(inner.jaxpr) or []
        donations = []
        for index, flag in enumerate(donated):
            if not flag:
                continue
            aval = inner.jaxpr.invars[index].aval
            shape = f"{getattr(aval.dtype, 'name', aval.dtype)}[{','.join(str(d) for d in aval.shape)}]"
            try:
                nbytes = math.prod(int(d) for d in aval.shape) * aval.dtype.itemsize
            except (TypeError, AttributeError):
                continue  # a symbolic dimension or an opaque dtype (a PRNG key)
            name = names[index] if index < len(names) and names[index] else f"argument {index}"
            if index not in kept:
                donations.append(memory.Donation(index, name, shape, nbytes, False, "unused",
                                                 pieces(shardings[index] or sharding_of_type(aval))))
                continue
            parameter = kept.index(index)
            reason = "" if parameter in aliased else "no-output" if parameter in donors else "dropped"
            donations.append(memory.Donation(index, name, shape, nbytes, parameter in aliased, reason,
                                             pieces(shardings[index] or sharding_of_type(aval))))
        source = tracebacks.function_source(inner.jaxpr)
        defined = memory.Frame(source[1], source[2]) if source is not None else None
        call = tuple(memory.Frame(path, line) for path, line, *_ in tracebacks.user_stack(eqn.source_info))
        found.append(memory.DonatingJit(source[0] if source else "", defined, call, tuple(donations),
                                        tuple(warnings), _partitions(text)))
    return found


def _partitions(text: str) -> int:
    """The devices the compiled program is partitioned over (1: not sharded)."""
    try:
        return hlo.parse(text).partitions
    except ValueError:
        return 1


def _entry_parameters(text: str) -> int | None:
    try:
        module = hlo.parse(text)
    except ValueError:
        return None
    return sum(1 for i in module.computations[module.entry].instructions if i.opcode == "parameter")


def placement(closed: Any) -> tuple[Any, ...] | None:
    """How the program's inputs are placed: the shardings its traced arguments carried, else those
    of the top-level jit that reads them (a jit's in_shardings on an Auto mesh); None: neither."""
    found = sharded.input_shardings(closed)
    return found if found is not None else _top_shardings(closed)


def _top_shardings(closed: Any) -> tuple[Any, ...] | None:
    """Each input's sharding as the first top-level jit that reads it places it (a jitted target
    traces to one jit equation, whose in_shardings are the user's); None when none says any."""
    jaxpr, _ = jaxprs.open_jaxpr(closed)
    position = {id(var): index for index, var in enumerate(jaxpr.invars)}
    found: list[Any] = [None] * len(jaxpr.invars)
    for eqn in jaxpr.eqns:
        if "in_shardings" not in eqn.params:
            continue
        for var, sharding in zip(eqn.invars, input_shardings(eqn)):
            index = position.get(id(var))
            if index is not None and found[index] is None:
                found[index] = sharding
    return tuple(found) if any(s is not None for s in found) else None


def _has_loop(jaxpr: Any) -> bool:
    for eqn in jaxpr.eqns:
        if eqn.primitive.name in primitives.LOOPS:
            return True
        if any(_has_loop(jaxprs.open_jaxpr(sub)[0]) for _, sub in jaxprs.subjaxprs(eqn.params)):
            return True
    return False


def _loops(closed: Any) -> list[memory.LoopCopies]:
    if not _has_loop(jaxprs.open_jaxpr(closed)[0]):
        return []
    compiled = _compiled(closed, (), False)
    if compiled is None:
        return []
    try:
        return memory.loop_copies(compiled[0])
    except ValueError:  # not the HLO text this parser knows
        return []


def _rematerializations(closed: Any) -> list[partitioner.Rematerialization]:
    if not sharded.is_partitioned(closed):
        return []
    compiled = _compiled(closed, (), False)
    lines = _CACHE.get((id(closed), (), target_devices.current().name), (None, None, []))[2]
    return sharded.rematerializations(closed, lines, compiled[0] if compiled is not None else None)


def _hbm(closed: Any) -> list[hbm.Hbm]:
    """The program's fit in the TPU target chip's HBM (nothing on the CPU): compiled with XLA's
    dump on, and when it does not fit, what would make it fit, each compiled (jaxlint.ir.fit)."""
    target = target_devices.current()
    if not target.is_tpu:
        return []
    key = (id(closed), target.name)
    if key not in _HBM:
        started = time.perf_counter()
        try:
            found = _fit(closed, target)
        except Exception:  # a program that does not compile for other reasons: no facts
            found = []
        SPENT["seconds"] += time.perf_counter() - started
        _HBM[key] = (closed, found)
        if len(_HBM) > _CACHE_SIZE:
            _HBM.popitem(last=False)
    _HBM.move_to_end(key)
    return _HBM[key][1]


def _precision(closed: Any) -> list[precision.Product]:
    """The products of the program compiled for a TPU target, with the precision XLA runs each at
    (nothing on the CPU, whose float32 products are float32: nothing is compiled there)."""
    if not target_devices.current().is_tpu:
        return []
    compiled = _compiled(closed, (), False)
    return precision.products(compiled[0]) if compiled is not None else []


def _fit(closed: Any, target: Any) -> list[hbm.Hbm]:
    from jaxlint.ir import fit

    program, donated = _the_jit(closed)
    available = target_devices.available_hbm(target)
    if available is None:
        return []
    donate = tuple(i for i, d in enumerate(donated) if d)
    # A program the user placed over several devices is compiled as placed (the same mesh laid on
    # the target slice's chips): its figures are each chip's, and no other placement is tried.
    placed = _replicated_rest(placement(closed)) if sharded.is_partitioned(closed) else None
    measured = fit.measure(fit.fun_of(program), fit.structs(program), donate, dump=True, in_shardings=placed)
    if measured.text and not measured.failed and measured.needed is not None:
        _remember(_HLO, (id(closed), target.name), (closed, measured.text, measured.needed))  # for JX312
    if measured.needed is None:
        return []
    remedies: list[hbm.Remedy] = []
    # The user's argument names: the traced inputs' paths (``ws[0]``), which are the jit's inputs.
    paths = fit.names_of(closed) or jaxprs.argument_paths(closed)[0] or tracebacks.arg_names(program.jaxpr)
    if placed is None and (measured.failed or measured.needed > available):
        for found in (fit.smaller_batch(program, available, donate, paths),
                      fit.donation(program, available, donate, paths),
                      fit.sharded(program, target, measured.needed, available, donate, paths)):
            if found is not None:
                remedies.append(found)
    peak = fit.buffers(measured, paths)
    if (measured.failed or measured.needed > available) and \
            any(b.kind == "temporary" and b.differentiated for b in peak):
        # The program is already transformed (a gradient): checkpointing needs the user's function.
        remedies.append(hbm.Remedy("remat", "jax.checkpoint on the layers whose temporaries are live at the peak "
                                   "(recomputed in the backward pass instead of kept)", False))
    source = tracebacks.function_source(program.jaxpr)
    return [hbm.Hbm(target.label, available, measured.needed, measured.failed,
                    peak,
                    tuple(remedies), source[0] if source else "",
                    memory.Frame(source[1], source[2]) if source else None, placed is not None)]


def _padding(closed: Any) -> list[padding.Padding]:
    """The buffers of the program compiled for the TPU target whose tiles take far more than their
    data (nothing on the CPU, whose layouts are not tiled), and for each line whose products they
    are, those products written elementwise, compiled (jaxlint.ir.elementwise)."""
    target = target_devices.current()
    if not target.is_tpu:
        return []
    # The program JX311 compiled for the chip (the user's jit, as placed and donated), when it did:
    # one TPU compile per program serves both rules.
    key = (id(closed), target.name)
    text, needed, temporaries = (*_HLO[key][1:], 0) if key in _HLO else (None, None, 0)
    if text is None:
        compiled = _compiled(closed, (), False)
        if compiled is None:
            return []
        text, temporaries = compiled[0], compiled[3] or 0
    try:
        module = hlo.parse(text)
    except ValueError:
        return []
    if needed is None:
        needed = padding.program_bytes(module, temporaries)
    found = padding.padded(module, padding.RATIO, padding.EXTRA, skip=_JAXLINT_DIR)
    if not found:
        return []
    from jaxlint.ir import elementwise

    rewrites = []
    # A sharded program's figures are each chip's; the rewrite is compiled unplaced, so it is not tried.
    lines = [] if sharded.is_partitioned(closed) else sorted(
        {(b.frames[0].path, b.frames[0].line) for b in found
         if b.frames and b.op_name.endswith("dot_general")})[:padding.REWRITTEN_LINES]
    started = time.perf_counter()
    for line in lines:
        rewrite = elementwise.measured(closed, frozenset([line]))
        if rewrite is not None:
            rewrites.append((line, rewrite))
    together = elementwise.measured(closed, frozenset(lines)) if len(lines) > 1 else None
    SPENT["seconds"] += time.perf_counter() - started
    return [padding.Padding(target.label, needed, tuple(found), tuple(rewrites), together, tuple(lines))]


def _remember(cache: OrderedDict, key: Any, value: Any) -> None:
    cache[key] = value
    cache.move_to_end(key)
    if len(cache) > _CACHE_SIZE:
        cache.popitem(last=False)


def _the_jit(closed: Any) -> tuple[Any, tuple[bool, ...]]:
    """The program the user's jit compiles: a trace that is one jit call of its inputs is that
    jit's program with its donations; anything else, the trace itself."""
    jaxpr, _ = jaxprs.open_jaxpr(closed)
    if len(jaxpr.eqns) == 1:
        eqn = jaxpr.eqns[0]
        inner = eqn.params.get("jaxpr")
        if inner is not None and hasattr(inner, "consts") and list(eqn.invars) == list(jaxpr.invars):
            return inner, tuple(bool(d) for d in eqn.params.get("donated_invars", ()) or ())
    return closed, ()


def _replicated_rest(shardings: tuple[Any, ...] | None) -> tuple[Any, ...] | None:
    """The user's input shardings, an unplaced input replicated over the same mesh; None: none."""
    if shardings is None:
        return None
    import jax

    mesh = next((s.mesh for s in shardings if isinstance(s, jax.sharding.NamedSharding)), None)
    if mesh is None:
        return None
    return tuple(s if s is not None else jax.sharding.NamedSharding(mesh, jax.sharding.PartitionSpec())
                 for s in shardings)
