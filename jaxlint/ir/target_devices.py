"""Where every compile goes: the one owner of the compile target in a process that imports JAX
(the worker, or an in-process driver: ``pytest --jaxlint``, ``jaxlint run``, ``jaxlint.lint``).

On the CPU target nothing changes: inputs stay where JAX puts them. On a TPU target libtpu
describes the target topology's chips as compile-only devices (``jax.experimental.topologies``),
every compiled input is placed on them (an unplaced one on the first chip, a mesh's sharding on
the same mesh shape laid on the slice's chips) and XLA's TPU compiler builds the program a real
chip would run. Nothing opens a chip; JAX's own backend stays the CPU (``JAX_PLATFORMS=cpu``).
"""
from __future__ import annotations

import contextlib
import os
from typing import Any, Callable, Iterator

import jax
import numpy as np

from jaxlint.chips import CPU, Target
from jaxlint.ir import hbm
from jaxlint.jaxapi import jaxprs
from jaxlint.jaxapi.shardings import context_mesh, mesh_setter

# libtpu's start-up asks a metadata server and the environment for the host's own TPU; a
# deviceless compile needs neither, and a TPU VM's chip held by a training job must not stop it.
# Its compiler logs to files under /tmp/tpu_logs unless told otherwise: warnings go to
# descriptor 2 instead, where the SPMD partitioner's "Involuntary full rematerialization" is read
# as on the CPU (ir/partitioner.py), and no log files are left behind.
LIBTPU_ENV = {"TPU_SKIP_MDS_QUERY": "1", "TPU_ACCELERATOR_TYPE": "v5litepod-1",
              "TPU_WORKER_HOSTNAMES": "localhost", "ALLOW_MULTIPLE_LIBTPU_LOAD": "1",
              "TPU_STDERR_LOG_LEVEL": "1", "TPU_LOG_DIR": "disabled"}
_state: dict[str, Any] = {"target": None, "devices": {}, "hbm": {}}
# Why programs of the current job could not be laid on the target (a mesh larger than the
# slice): the compiles that need it give no facts, and the user is told (Result.not_compiled).
_REFUSALS: list[str] = []


class TargetUnavailable(Exception):
    """The target's devices cannot be made here (libtpu refusing a topology), or a program cannot
    be laid on them (a mesh larger than the slice): one line that says which."""


def current() -> Target:
    """The process's target: the last ``use`` (a worker's job, a driver's configuration), else the CPU."""
    return _state["target"] or CPU


def use(target: Target) -> None:
    """Compile for ``target`` from now on (an in-process driver's setting)."""
    _state["target"] = target


@contextlib.contextmanager
def using(target: Target | None) -> Iterator[None]:
    """Compile for ``target`` inside the block (None: the current one): a program compiles for the
    target it was built for, whatever a later driver set."""
    previous = _state["target"]
    if target is not None:
        _state["target"] = target
    try:
        yield
    finally:
        _state["target"] = previous


# What libtpu's compiler aborts the whole process on (a fatal check, SIGABRT), seen with
# libtpu 0.0.42: a conversion to complex128 ("Unsupported CVT X{64|128} expansion from f64[4] to
# c128[4]", diffrax's tests under jax_enable_x64). Such a program is not compiled for a TPU.
_ABORTING_DTYPES = frozenset({"complex128"})


def screen(closed: Any) -> None:
    """TargetUnavailable (and the reason noted) when ``closed`` holds a value of a type the
    target's compiler aborts on; nothing on the CPU."""
    if devices() is None:
        return
    found = _aborting_dtype(closed.jaxpr)
    message = None
    if found is not None:
        message = (f"the program computes in {found}, which the TPU compiler of libtpu does not support "
                   f"(it aborts the process): not compiled for {current().label}")
    elif _explicit_types(closed.jaxpr):
        # Its types name the CPU mesh (f32[8@data,16]) in every equation; laying them on the
        # chips would mean rewriting each type. Said, so the compiled rules' silence is explained.
        message = ("its types carry shardings (a mesh with Explicit axes): such programs are not yet compiled for "
                   "a TPU target, so the rules that read the compiled program (JX306-JX308, JX310, JX311) "
                   "skip them")
    if message is not None:
        if message not in _REFUSALS:
            _REFUSALS.append(message)
        raise TargetUnavailable(message)


def _explicit_types(jaxpr: Any) -> bool:
    for var in [*jaxpr.invars, *jaxpr.outvars]:
        spec = getattr(getattr(getattr(var, "aval", None), "sharding", None), "spec", None)
        if spec is not None and any(axis is not None for axis in spec):
            return True
    return False


def _aborting_dtype(jaxpr: Any) -> str | None:
    from jax.extend.core import ClosedJaxpr, Jaxpr

    for var in [*jaxpr.invars, *jaxpr.constvars, *(v for eqn in jaxpr.eqns for v in eqn.outvars)]:
        name = getattr(getattr(getattr(var, "aval", None), "dtype", None), "name", None)
        if name in _ABORTING_DTYPES:
            return name
    for eqn in jaxpr.eqns:
        for value in eqn.params.values():
            for sub in value if isinstance(value, (tuple, list)) else (value,):
                inner = sub.jaxpr if isinstance(sub, ClosedJaxpr) else sub if isinstance(sub, Jaxpr) else None
                found = _aborting_dtype(inner) if inner is not None else None
                if found is not None:
                    return found
    return None


def devices(target: Target | None = None) -> list[Any] | None:
    """The compile-only devices of ``target`` (the current one), in libtpu's order; None for the CPU."""
    target = target or current()
    if not target.is_tpu:
        return None
    if target.name not in _state["devices"]:
        _state["devices"][target.name] = _topology_devices(target)
    return _state["devices"][target.name]


def _topology_devices(target: Target) -> list[Any]:
    for key, value in LIBTPU_ENV.items():
        os.environ.setdefault(key, value)  # read by libtpu when it loads, once per process
    from jax.experimental import topologies

    options: dict[str, Any] = {}
    if target.chips == 1:
        options["chips_per_host_bounds"] = (1, 1, 1)
    if target.megacore:
        options["chip_config_name"] = "megacore"
    try:
        found = list(topologies.get_topology_desc(target.topology, "tpu", **options).devices)
    except Exception as error:  # noqa: BLE001 - libtpu missing, or a topology it refuses
        message = str(error).strip().splitlines()[0] if str(error).strip() else type(error).__name__
        raise TargetUnavailable(f"cannot compile for {target.name} ({target.label}): {message}") from None
    if len(found) != target.chips:
        raise TargetUnavailable(f"{target.name}: libtpu describes {len(found)} devices for the topology "
                                f"{target.topology}, not {target.chips} chips")
    return found


def take_refusals() -> list[str]:
    """The reasons gathered since the last call (each once), and forget them."""
    found = list(_REFUSALS)
    _REFUSALS.clear()
    return found


def place(struct: Any, sharding: Any = None) -> Any:
    """``struct`` (a ShapeDtypeStruct or an aval) placed for the current target: on the CPU as
    given (``sharding`` or its own); on a TPU its sharding laid on the target's chips, an unplaced
    input on the first chip."""
    sharding = sharding if sharding is not None else getattr(struct, "sharding", None)
    target_devices = devices()
    if target_devices is None:
        if sharding is None:
            return jax.ShapeDtypeStruct(struct.shape, struct.dtype)
        return jax.ShapeDtypeStruct(struct.shape, struct.dtype, sharding=sharding)
    return jax.ShapeDtypeStruct(struct.shape, struct.dtype, sharding=on_target(sharding))


def on_target(sharding: Any) -> Any:
    """A sharding of the CPU's devices (or an abstract mesh's) moved to the target's chips: the
    same mesh shape and axes over the slice's first chips; anything else on the first chip."""
    target_devices = devices()
    if target_devices is None:
        return sharding
    if isinstance(sharding, jax.sharding.NamedSharding):
        # No memory kind: the CPU's default one (0.4.35: "unpinned_host") is none a TPU's.
        return jax.sharding.NamedSharding(laid_on_chips(sharding.mesh, target_devices), sharding.spec)
    if sharding is not None and len(getattr(sharding, "device_set", ())) > 1:
        raise TargetUnavailable(f"a {type(sharding).__name__} over {len(sharding.device_set)} devices cannot be "
                                f"laid on {current().label}")
    return jax.sharding.SingleDeviceSharding(target_devices[0])


def laid_on_chips(mesh: Any, chips: list[Any]) -> Any:
    """``mesh`` (its shape and axis names) over the first ``mesh.size`` of ``chips``."""
    size = int(np.prod(mesh.axis_sizes)) if hasattr(mesh, "axis_sizes") else mesh.size
    if size > len(chips):
        shape = ", ".join(f"{name}={n}" for name, n in zip(mesh.axis_names, mesh.axis_sizes))
        message = (f"its mesh ({shape}) has {size} devices and {current().label} has {len(chips)} "
                   f"chip{'s' if len(chips) != 1 else ''}: give a slice of at least {size} chips "
                   f"(`target = \"tpu-{current().generation}:AxB\"`)")
        if message not in _REFUSALS:
            _REFUSALS.append(message)
        raise TargetUnavailable(message)
    laid = np.array(chips[:size], dtype=object).reshape(tuple(mesh.axis_sizes))
    types = getattr(mesh, "axis_types", None)
    return jax.sharding.Mesh(laid, mesh.axis_names, **({} if types is None else {"axis_types": types}))


def place_tree(tree: Any) -> Any:
    """Every ShapeDtypeStruct leaf of ``tree`` placed for the current target."""
    if devices() is None:
        return tree
    return jax.tree_util.tree_map(lambda leaf: place(leaf) if isinstance(leaf, jax.ShapeDtypeStruct) else leaf,
                                  tree)


def lower(fun: Callable[..., Any], args: list[Any], **jit_options: Any) -> Any:
    """``jax.jit(fun, **jit_options).lower(*args)`` for the current target: args placed, and a
    program without inputs placed by its outputs. ``in_shardings`` (CPU placements) are moved too."""
    if devices() is None:
        return jax.jit(fun, **jit_options).lower(*args)
    shardings = jit_options.pop("in_shardings", None)
    if shardings is not None:
        args = [place(a, s) for a, s in zip(args, shardings)]
    else:
        args = [place(a) if isinstance(a, jax.ShapeDtypeStruct) else a for a in args]
    if not jax.tree_util.tree_leaves(args):
        jit_options["out_shardings"] = jax.sharding.SingleDeviceSharding(devices()[0])
    with _context_mesh_on_chips():
        return jax.jit(fun, **jit_options).lower(*args)


@contextlib.contextmanager
def _context_mesh_on_chips() -> Iterator[None]:
    """The mesh a module set for the thread (``jax.sharding.set_mesh``, JAX >= 0.6), laid on the
    target's chips while a program lowers: jit checks its inputs against the context's devices."""
    mesh, set_mesh = context_mesh(), mesh_setter()
    if set_mesh is None or not isinstance(mesh, jax.sharding.Mesh) or not mesh.axis_names:
        yield
        return
    with set_mesh(laid_on_chips(mesh, devices())):
        yield


def available_hbm(target: Target | None = None) -> int | None:
    """Bytes of HBM the target's compiler lets one chip's program use (15.75 GiB on a v5e), read
    from the compiler's own refusal of a program far too large; None for the CPU."""
    target = target or current()
    if not target.is_tpu:
        return None
    if target.name not in _state["hbm"]:
        _state["hbm"][target.name] = _probe_hbm(target)
    return _state["hbm"][target.name]


def _probe_hbm(target: Target) -> int | None:
    chip = jax.sharding.SingleDeviceSharding(devices(target)[0])
    huge = jax.ShapeDtypeStruct((2 ** 18, 2 ** 18), np.float32, sharding=chip)  # 256 GiB of temporaries
    from jaxlint.ir.partitioner import captured_stderr

    try:
        with captured_stderr(write_back=False):  # libtpu's report of the refusal, 30 lines
            jax.jit(lambda x: (x @ x) @ x, out_shardings=chip).lower(huge).compile()
    except Exception as error:  # noqa: BLE001 - the refusal is the answer
        return parse_available(str(error))
    return None


def parse_available(message: str) -> int | None:
    """The bytes of HBM XLA's RESOURCE_EXHAUSTED message says the chip has."""
    found = hbm.parse_required(message)
    return found[1] if found is not None else None


def retarget(closed: Any) -> Any:
    """``closed`` (a ClosedJaxpr) with every sharding and mesh its equations name (a nested jit's
    in/out shardings, a sharding constraint, a shard_map's mesh) moved to the target's chips, so
    that it compiles there; itself on the CPU target."""
    if devices() is None:
        return closed
    from jax.extend.core import ClosedJaxpr

    screen(closed)
    return ClosedJaxpr(_retarget_jaxpr(closed.jaxpr), closed.consts)


def _retarget_jaxpr(jaxpr: Any) -> Any:
    eqns = [eqn.replace(params={name: _retarget_value(value) for name, value in eqn.params.items()})
            for eqn in jaxpr.eqns]
    return jaxpr.replace(eqns=eqns)


def _retarget_value(value: Any) -> Any:
    from jax.extend.core import ClosedJaxpr, Jaxpr

    if isinstance(value, ClosedJaxpr):
        return ClosedJaxpr(_retarget_jaxpr(value.jaxpr), value.consts)
    if isinstance(value, Jaxpr):
        return _retarget_jaxpr(value)
    if isinstance(value, (tuple, list)):
        items = [_retarget_value(v) for v in value]
        if all(new is old for new, old in zip(items, value)):
            return value  # most params: left as they are (named tuples such as conv's dimension numbers)
        return type(value)(*items) if hasattr(value, "_fields") else type(value)(items)
    if isinstance(value, jax.sharding.Mesh):
        return laid_on_chips(value, devices())
    if isinstance(value, jax.sharding.NamedSharding) and isinstance(value.mesh, jax.sharding.Mesh):
        return on_target(value)
    if isinstance(value, jax.sharding.SingleDeviceSharding):
        return on_target(value)
    return value


def lower_jaxpr(closed: Any, args: list[Any], **jit_options: Any) -> Any:
    """``lower`` of a ClosedJaxpr, retargeted first."""
    return lower(jaxprs.as_function(retarget(closed)), args, **jit_options)


def lower_function(fun: Callable[..., Any], args: list[Any]) -> Any:
    """``fun`` jitted and lowered for the current target. On a TPU it is traced first and its
    jaxpr retargeted: the meshes its body names (a sharding constraint, a nested jit's
    shardings) are the CPU's until then."""
    if devices() is None:
        return jax.jit(fun).lower(*args)
    return lower_jaxpr(jax.make_jaxpr(fun)(*args), list(args))
