"""Whether a traced program fits the TPU target chip's HBM (JX311), in the worker (JAX): compiled for
the target with XLA's dump on, its bytes at the peak (``memory_analysis``, or the RESOURCE_EXHAUSTED
message of a compile that does not fit), the buffers live at the peak (read from the dump, which
XLA writes for a failed compile too: jaxlint.ir.hbm) with their source lines, and what would make
it fit, each compiled where it can be: a smaller batch (the program rebuilt from its jaxpr with
the batch dimension halved), donation, the batch sharded over the chips of a slice."""
from __future__ import annotations

import glob
import math
import os
import re
import tempfile
from typing import Any, Callable

import jax
import numpy as np

from jaxlint.chips import GENERATIONS, Target
from jaxlint.ir import hbm, hlo, partitioner, target_devices
from jaxlint.ir.memory import Frame
from jaxlint.jaxapi import jaxprs, tracebacks

_JAXLINT_DIR = os.path.join(os.path.dirname(os.path.dirname(os.path.abspath(__file__))), "")
_SHAPE_PARAMS = ("shape", "new_sizes", "slice_sizes", "limit_indices", "sizes")
# Calls inlined when a program is rebuilt at another batch size (their jaxprs' shapes are fixed).
_CALLS = {"jit": "jaxpr", "pjit": "jaxpr", "closed_call": "call_jaxpr", "core_call": "call_jaxpr",
          "custom_jvp_call": "call_jaxpr", "custom_vjp_call": "call_jaxpr", "checkpoint": "jaxpr",
          "remat": "jaxpr"}
_HALVINGS = 8
_SLICE_TRIES = 3
_TOP_BUFFERS = 5


# The argument names of each traced program's inputs (``ws[0]``, ``x``), by id: what the worker's
# trace of a plain function knows and its jaxpr does not (it names them ``args[4]``).
_NAMES: dict[int, tuple[Any, list[str]]] = {}


def note_names(closed: Any, function: Any, arguments: Any, dynamic: list[int]) -> None:
    """Keep the names of ``closed``'s inputs: the leaves ``dynamic`` of (args, kwargs) named by the
    parameters of ``function`` they were passed to and their path in the pytree."""
    import inspect
    import weakref

    try:
        parameters = list(inspect.signature(function).parameters)
        paths = [path for path, _ in jax.tree_util.tree_flatten_with_path((arguments.args, arguments.kwargs))[0]]
        names = []
        for index in dynamic:
            path = paths[index]
            head = getattr(path[1], "idx", getattr(path[1], "key", None)) if len(path) > 1 else None
            base = parameters[head] if isinstance(head, int) and head < len(parameters) else str(head)
            names.append(base + jax.tree_util.keystr(tuple(path[2:])))
    except Exception:  # noqa: BLE001 - a callable without a signature: the jaxpr's names stand
        return
    for key in [k for k, (ref, _) in _NAMES.items() if ref() is None]:
        del _NAMES[key]
    _NAMES[id(closed)] = (weakref.ref(closed), names)


def names_of(closed: Any) -> list[str] | None:
    ref, names = _NAMES.get(id(closed), (None, None))
    return names if ref is not None and ref() is closed else None


class _Measured:
    def __init__(self, needed: int | None, failed: bool, live: str = "", text: str = "") -> None:
        self.needed, self.failed, self.live, self.text = needed, failed, live, text


def measure(fun: Callable[..., Any], args: list[Any], donate: tuple[int, ...] = (), dump: bool = False,
            target: Target | None = None, out_shardings: Any = None, in_shardings: Any = None) -> _Measured:
    """``fun`` compiled for ``target`` (the current one) with ``args`` (placed ShapeDtypeStructs):
    the bytes one chip needs, and with ``dump`` the live ranges and optimized HLO XLA wrote."""
    previous = target_devices.current()
    if target is not None:
        target_devices.use(target)
    try:
        options = {} if out_shardings is None else {"out_shardings": out_shardings}
        if in_shardings is not None:  # the user's placement, moved to the target's chips by ``lower``
            options["in_shardings"] = tuple(in_shardings)
        lowered = target_devices.lower(fun, list(args), donate_argnums=donate, **options)
        with tempfile.TemporaryDirectory(prefix="jaxlint-hbm-") as folder:
            options = {"xla_dump_to": folder} if dump else {}
            try:
                with partitioner.captured_stderr(write_back=False):  # libtpu's report of a refusal
                    compiled = lowered.compile(compiler_options=options) if options else lowered.compile()
                result = _Measured(needed_bytes(compiled.memory_analysis()), False)
            except Exception as error:  # noqa: BLE001 - RESOURCE_EXHAUSTED is the answer
                required = hbm.parse_required(str(error))
                if required is None:
                    raise
                result = _Measured(required[0], True)
            if dump:
                result.live, result.text = _dumped(folder)
        return result
    finally:
        target_devices.use(previous)


def needed_bytes(analysis: Any) -> int | None:
    """Arguments + outputs + temporaries - aliased, from ``Compiled.memory_analysis()``."""
    if analysis is None:
        return None
    sizes = [getattr(analysis, f"{k}_size_in_bytes", 0) or 0 for k in ("argument", "output", "temp", "alias")]
    return int(sizes[0] + sizes[1] + sizes[2] - sizes[3])


def _dumped(folder: str) -> tuple[str, str]:
    """(live ranges, optimized HLO) of the module XLA dumped last."""
    ranges = sorted(glob.glob(os.path.join(folder, "*after_optimizations-live-range.txt")))
    if not ranges:
        return "", ""
    live = max(ranges, key=os.path.getmtime)
    text_path = live.replace("-live-range.txt", ".txt")
    return _read(live), _read(text_path)


def _read(path: str) -> str:
    if not os.path.exists(path):
        return ""
    with open(path, encoding="utf-8", errors="replace") as handle:  # closed: a warnings-as-errors suite
        return handle.read()


def buffers(measured: _Measured, names: list[str] | None = None) -> tuple[hbm.Buffer, ...]:
    """The largest buffers live at the peak, with the user lines of the instructions that made them
    (an argument by its name among ``names``, the program's argument names)."""
    live = hbm.peak_live(measured.live)
    try:
        module = hlo.parse(measured.text) if measured.text else None
    except ValueError:
        module = None
    instructions = module.instructions() if module is not None else {}
    entry = module.computations[module.entry] if module is not None else None
    root = entry.root if entry is not None else None
    outputs = set(root.operands) | {root.name} if root is not None else set()
    found = []
    for name, nbytes in sorted(live, key=lambda item: -item[1])[:_TOP_BUFFERS]:
        instruction = instructions.get(name)
        shape = hlo.plain_shape(instruction.shape) if instruction is not None else ""
        kind = "temporary"
        argument = ""
        if instruction is not None and instruction.opcode == "parameter":
            kind, argument = "argument", _argument_name(instruction.metadata.get("op_name", ""), names)
        elif name in outputs:
            kind = "output"
        frames = tuple(Frame(f.file, f.line, f.column, f.end_column) for f in
                       (module.frames_of(instruction.metadata) if instruction is not None and module else [])
                       if f.line > 0 and not f.file.startswith(_JAXLINT_DIR))
        op_name = instruction.metadata.get("op_name", "") if instruction is not None else ""
        found.append(hbm.Buffer(name, shape, nbytes, kind, frames, argument, op_name))
    return tuple(found)


def _argument_name(op_name: str, names: list[str] | None) -> str:
    """``args[4]`` (jaxpr_as_fun's parameter) as the program's own argument name."""
    match = re.fullmatch(r"args\[(\d+)\]", op_name)
    if match is not None and names and int(match.group(1)) < len(names) and names[int(match.group(1))]:
        return names[int(match.group(1))]
    return op_name


def structs(closed: Any) -> list[Any]:
    return [jax.ShapeDtypeStruct(v.aval.shape, v.aval.dtype) for v in closed.jaxpr.invars]


def batch_dimension(closed: Any) -> tuple[int, list[int]] | None:
    """(the batch size, the inputs whose leading dimension it is): among the inputs no output has
    the shape of, the leading dimension no output leads with (a loss reduces its batch), the one
    held by the most bytes; else the largest leading dimension; None when every input is updated."""
    inputs = [tuple(v.aval.shape) for v in closed.jaxpr.invars]
    shapes = {tuple(getattr(v.aval, "shape", ())) for v in closed.jaxpr.outvars}
    outputs = {shape[0] for shape in shapes if shape}
    leads: dict[int, int] = {}
    for shape, var in zip(inputs, closed.jaxpr.invars):
        # An input with an output of its shape is a state the step updates (parameters, their
        # gradients): its leading dimension is not a batch.
        if shape and isinstance(shape[0], int) and shape[0] > 1 and shape not in shapes:
            leads[shape[0]] = leads.get(shape[0], 0) + math.prod(shape) * var.aval.dtype.itemsize
    if not leads:
        return None
    free = {d: b for d, b in leads.items() if d not in outputs}
    size = max(free, key=free.get) if free else max(leads)
    return size, [i for i, shape in enumerate(inputs) if shape and shape[0] == size and shape not in shapes]


def run_inlined(jaxpr: Any, consts: list[Any], args: list[Any],
                bind: Callable[[Any, list[Any]], list[Any]]) -> list[Any]:
    """``jaxpr``'s equations run on ``args``, jits and custom derivatives inlined (their equations
    run the same way), every other equation through ``bind(eqn, inputs)``."""
    env: dict[Any, Any] = dict(zip(jaxpr.constvars, consts))
    env.update(zip(jaxpr.invars, args))
    read = lambda atom: atom.val if jaxprs.is_literal(atom) else env[atom]  # noqa: E731
    for eqn in jaxpr.eqns:
        inputs = [read(a) for a in eqn.invars]
        name = eqn.primitive.name
        if name in _CALLS and eqn.params.get(_CALLS[name]) is not None:
            inner, inner_consts = jaxprs.open_jaxpr(eqn.params[_CALLS[name]])
            outs = run_inlined(inner, inner_consts, inputs, bind)
        else:
            outs = bind(eqn, inputs)
        env.update(zip(eqn.outvars, outs))
    return [read(a) for a in jaxpr.outvars]


def rebatched(closed: Any, old: int, new: int) -> Callable[..., Any]:
    """A function that runs ``closed``'s equations with ``old`` replaced by ``new`` in their shape
    parameters (jits and custom derivatives inlined); a loop or branch raises NotImplementedError."""
    def swap(value: Any) -> Any:
        if isinstance(value, tuple) and value and all(isinstance(v, int) for v in value):
            return tuple(new if v == old else v for v in value)
        return value

    def bind(eqn: Any, inputs: list[Any]) -> list[Any]:
        if any(True for _ in jaxprs.subjaxprs(eqn.params)):
            raise NotImplementedError(eqn.primitive.name)
        params = {k: swap(v) if k in _SHAPE_PARAMS else v for k, v in eqn.params.items()}
        found = eqn.primitive.get_bind_params(params)
        subfuns, bound = found if isinstance(found, tuple) else ((), found)
        out = eqn.primitive.bind(*subfuns, *inputs, **bound)
        return list(out) if eqn.primitive.multiple_results else [out]

    jaxpr, consts = jaxprs.open_jaxpr(closed)
    return lambda *args: run_inlined(jaxpr, consts, list(args), bind)


def fun_of(closed: Any) -> Callable[..., Any]:
    """``closed`` as a function, its meshes laid on the current target's chips (retargeted when
    it is called: a slice remedy calls it under the slice's target)."""
    return lambda *args: jaxprs.as_function(target_devices.retarget(closed))(*args)


def smaller_batch(closed: Any, available: int, donate: tuple[int, ...],
                  paths: list[str] | None = None) -> hbm.Remedy | None:
    """The largest batch, halving, that compiles within ``available``."""
    found = batch_dimension(closed)
    if found is None:
        return None
    size, which = found
    sizes = []
    while len(sizes) < _HALVINGS and (sizes[-1] if sizes else size) % 2 == 0:
        sizes.append((sizes[-1] if sizes else size) // 2)

    def fits(new: int) -> int | None:
        args = [jax.ShapeDtypeStruct((new, *s.shape[1:]) if i in which else s.shape, s.dtype)
                for i, s in enumerate(structs(closed))]
        measured = measure(rebatched(closed, size, new), args, donate)
        ok = measured.needed is not None and not measured.failed and measured.needed <= available
        return measured.needed if ok else None

    try:
        # Largest first: a compile that does not fit fails early (XLA checks the memory before it
        # generates code), so only the answer is compiled in full.
        for new in sizes:
            needed = fits(new)
            if needed is not None:
                return hbm.Remedy("batch", f"a batch of {new} instead of {size} ({_names(closed, which, paths)})",
                                  True, needed)
    except NotImplementedError:  # a loop or a branch: the program is not rebuilt at another batch
        return hbm.Remedy("batch", f"a smaller batch than {size} ({_names(closed, which, paths)})", False)
    except Exception:  # noqa: BLE001 - a dimension that is not the batch after all: nothing to say
        return None
    return None


def donation(closed: Any, available: int, donate: tuple[int, ...],
             paths: list[str] | None = None) -> hbm.Remedy | None:
    """The inputs an output of the same byte size could be written into, donated."""
    sizes = [math.prod(v.aval.shape) * v.aval.dtype.itemsize for v in closed.jaxpr.invars]
    wanted = [math.prod(v.aval.shape) * v.aval.dtype.itemsize for v in closed.jaxpr.outvars]
    chosen = []
    for index, size in enumerate(sizes):
        if index not in donate and size in wanted:
            wanted.remove(size)
            chosen.append(index)
    if not chosen:
        return None
    text = f"donating {_names(closed, chosen, paths)} (donate_argnums), which the outputs can be written into"
    try:
        measured = measure(fun_of(closed), structs(closed), tuple(sorted({*donate, *chosen})))
    except Exception:  # noqa: BLE001
        return hbm.Remedy("donate", text, False)
    if measured.needed is None or measured.failed or measured.needed > available:
        return None  # compiled: donating does not make it fit
    return hbm.Remedy("donate", text, True, measured.needed)


def sharded(closed: Any, target: Target, needed: int, available: int, donate: tuple[int, ...],
            paths: list[str] | None = None) -> hbm.Remedy | None:
    """The smallest slice of the target's generation whose chips hold the program with the batch
    dimension sharded over them (and, where that is not enough, every input's leading dimension)."""
    found = batch_dimension(closed)
    size, which = found if found is not None else (0, [])
    generation = GENERATIONS[target.generation]
    tried = 0
    for shape in hbm.slices(generation.dimensions, max(2, math.ceil(needed / available))):
        chips = math.prod(shape)
        if size and size % chips:
            continue
        slice_target = Target(f"tpu-{target.generation}:{'x'.join(map(str, shape))}", target.generation, shape)
        tried += 1
        if tried > _SLICE_TRIES:
            break
        try:
            devices = target_devices.devices(slice_target)
        except Exception:  # noqa: BLE001 - a topology libtpu does not describe
            continue
        mesh = jax.sharding.Mesh(np.array(devices).reshape(chips), ("batch",))
        for everything in ((False, True) if which else (True,)):
            args = []
            for index, struct in enumerate(structs(closed)):
                split = struct.shape and (index in which or (everything and struct.shape[0] % chips == 0))
                spec = jax.sharding.PartitionSpec("batch") if split else jax.sharding.PartitionSpec()
                args.append(jax.ShapeDtypeStruct(struct.shape, struct.dtype,
                                                 sharding=jax.sharding.NamedSharding(mesh, spec)))
            outs = [jax.sharding.NamedSharding(mesh, jax.sharding.PartitionSpec("batch") if everything and
                                               getattr(v.aval, "shape", ()) and v.aval.shape[0] % chips == 0
                                               else jax.sharding.PartitionSpec())
                    for v in closed.jaxpr.outvars]
            try:
                measured = measure(lambda *xs: tuple(fun_of(closed)(*xs)), args, donate, target=slice_target,
                                   out_shardings=tuple(outs) if everything else None)
            except Exception:  # noqa: BLE001
                break
            if measured.needed is not None and not measured.failed and measured.needed <= available:
                what = (f"the batch dimension ({size}) of {_names(closed, which, paths)}" if not everything
                        else f"the batch dimension ({size}) and the other arguments' leading dimensions" if which
                        else "the arguments' leading dimensions")
                return hbm.Remedy("shard", f"sharding {what} over the chips of a {slice_target.label} "
                                  f"(--target {slice_target.name})", True, measured.needed)
    return None


def _names(closed: Any, indices: list[int], paths: list[str] | None = None) -> str:
    names = paths or tracebacks.arg_names(closed.jaxpr) or []
    shown = [f"'{names[i]}'" if i < len(names) and names[i] else f"argument {i}" for i in indices]
    return ", ".join(shown[:4]) + (f" and {len(shown) - 4} more" if len(shown) > 4 else "")
