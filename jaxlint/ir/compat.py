"""Every difference between supported JAX versions (0.4.35 and newer) lives here.

Only the worker process imports this module: it imports JAX.
"""
from __future__ import annotations

import collections.abc
import linecache
import math
import os
import re
from typing import Any, Iterator

import jax
import jaxlib
import numpy as np
from jax._src import config as _jax_config
from jax._src import source_info_util

from jaxlint.events import CacheMiss, Difference
from jaxlint.ir import target_devices

try:  # Jaxpr and friends moved to jax.extend.core; jax.core lost them in 0.6.0.
    from jax.extend.core import ClosedJaxpr, Jaxpr, Literal
except ImportError:  # pragma: no cover - very old releases
    from jax.core import ClosedJaxpr, Jaxpr, Literal  # type: ignore[no-redef]

JAX_VERSION: tuple[int, ...] = tuple(int(p) for p in jax.__version__.split(".")[:3] if p.isdigit())


_ITERABLE_LEAVES: dict[type, bool] = {}  # type -> whether iterable_leaf holds for its instances


def iterable_leaf(value: Any) -> bool:
    """Whether ``value`` is a builtin iterator or a dict's values view (a generator, ``map``,
    ``zip``, ``iter(list)``): JAX keeps it as a leaf, and newer releases warn that they do (0.10.2
    does, 0.4.35 does not): "Python iterable type 'generator' is treated as a leaf in PyTree".
    jaxlint flattens the tests' values with ``is_leaf=iterable_leaf``: the same leaves, and no
    warning in the user's test. Not ``warnings.catch_warnings``: entering it clears what each
    module has shown once, so a test's own warning raised on each step would be shown again."""
    kind = type(value)
    known = _ITERABLE_LEAVES.get(kind)
    if known is None:  # builtins only: a project's own iterator may be a registered pytree node
        known = _ITERABLE_LEAVES[kind] = kind.__module__ == "builtins" and \
            issubclass(kind, (collections.abc.Iterator, collections.abc.ValuesView))
    return known


def exclude_from_user_frames() -> None:
    """Make frames in jaxlint's own files invisible to JAX's user-frame lookup."""
    source_info_util.register_exclusion(os.path.join(_PACKAGE_DIR, ""))


def _user_frames(source_info: Any) -> Iterator[Any]:
    """JAX's user frames of an equation, innermost first (may raise on a malformed traceback)."""
    if JAX_VERSION >= (0, 7, 0):
        return source_info_util.user_frames(source_info.traceback)
    return source_info_util.user_frames(source_info)


def _located(frame: Any) -> tuple[str, int, int, int, int]:
    """(file, start_line, start_col, end_line, end_col) of a frame, columns in characters."""
    start_col = getattr(frame, "start_column", 0) or 0
    end_line = getattr(frame, "end_line", None) or frame.start_line
    end_col = getattr(frame, "end_column", None) or start_col
    # Frame columns come from co_positions: UTF-8 bytes. jaxlint's spans count characters.
    return (frame.file_name, frame.start_line, char_column(frame.file_name, frame.start_line, start_col),
            end_line, char_column(frame.file_name, end_line, end_col))


def user_location(source_info: Any) -> tuple[str, int, int, int, int] | None:
    """(file, start_line, start_col, end_line, end_col) of the innermost user frame, or None."""
    if source_info is None:
        return None
    try:
        if JAX_VERSION >= (0, 7, 0):
            frame = source_info_util.user_frame(source_info.traceback)  # cached by JAX
        else:
            frame = source_info_util.user_frame(source_info)
    except Exception:  # a malformed traceback must not stop the analysis
        return None
    return _located(frame) if frame is not None else None


def user_stack(source_info: Any) -> list[tuple[str, int, int, int, int]]:
    """(file, start_line, start_col, end_line, end_col) of every user frame of an equation,
    outermost first (a traced function's call of a helper, then the helper's line); [] when
    unknown. Read only for the few ops a rule asks about: a stack has dozens of frames."""
    if source_info is None:
        return []
    try:
        frames = list(_user_frames(source_info))
    except Exception:  # a malformed traceback must not stop the analysis
        return []
    return [_located(frame) for frame in reversed(frames)]


def user_position_in(source_info: Any, path: str) -> tuple[int, int] | None:
    """(line, character column) of the innermost user frame in the file ``path``, or None: the
    line of the analyzed file that made an equation, even when a helper in another file ran it."""
    if source_info is None:
        return None
    try:
        frame = next((f for f in _user_frames(source_info) if f.file_name == path), None)
    except Exception:  # a malformed traceback must not stop the analysis
        return None
    if frame is None:
        return None
    return frame.start_line, char_column(path, frame.start_line, getattr(frame, "start_column", 0) or 0)


def user_lines_in(source_info: Any, path: str) -> set[int]:
    """Lines of the file ``path`` on an equation's user call stack (the call site in a traced
    function and the helper lines below it); empty when unknown."""
    return user_lines_by_file(source_info, (path,)).get(path, set())


def user_lines_by_file(source_info: Any, paths: Any) -> dict[str, set[int]]:
    """``user_lines_in`` for each of ``paths`` (a collection of files) at once."""
    if source_info is None:
        return {}
    lines: dict[str, set[int]] = {}
    try:
        for frame in _user_frames(source_info):
            if frame.file_name in paths:
                lines.setdefault(frame.file_name, set()).add(frame.start_line)
    except Exception:  # a malformed traceback must not stop the analysis
        return {}
    return lines


def char_column(path: str, line: int, byte_col: int) -> int:
    """Character column of a UTF-8 byte column on a line of a file."""
    from jaxlint.text import char_column as column_in_text

    return column_in_text(linecache.getline(path, line), byte_col)


def name_stack_entries(source_info: Any) -> list[tuple[str, str]]:
    """The name stack as (kind, name) pairs, kind "transform" or "scope", outermost first.

    On old releases the string form of a bare transform can be empty, so read the elements.
    """
    stack = getattr(getattr(source_info, "name_stack", None), "stack", ())
    entries = []
    for element in stack:
        kind = "transform" if type(element).__name__ == "Transform" else "scope"
        entries.append((kind, str(getattr(element, "name", element))))
    return entries


def subjaxprs(params: dict[str, Any]) -> Iterator[tuple[str, Any]]:
    """(param name, Jaxpr or ClosedJaxpr) for every sub-jaxpr in an equation's params."""
    for key, value in params.items():
        items = value if isinstance(value, (tuple, list)) else (value,)
        for index, item in enumerate(items):
            if isinstance(item, (ClosedJaxpr, Jaxpr)):
                name = key if len(items) == 1 and not isinstance(value, (tuple, list)) else f"{key}[{index}]"
                yield name, item


def open_jaxpr(jaxpr: Any) -> tuple[Any, list[Any]]:
    """(open Jaxpr, consts) for a Jaxpr or ClosedJaxpr."""
    if isinstance(jaxpr, ClosedJaxpr):
        return jaxpr.jaxpr, list(jaxpr.consts)
    return jaxpr, []


def is_literal(atom: Any) -> bool:
    return isinstance(atom, Literal)


def eval_shape(fun: Any, *args: Any, **kwargs: Any) -> Any:
    return jax.eval_shape(fun, *args, **kwargs)


def shape_dtype_struct(value: Any) -> Any:
    """Abstract stand-in (ShapeDtypeStruct) for an array, tracer or abstract value; keeps weak
    types, and a sharding over more than one device (``sharding``): the function is traced as the
    program its caller runs, and the compile step places the argument so."""
    aval = getattr(value, "aval", None)
    shape, dtype = value.shape, value.dtype
    weak = bool(getattr(aval, "weak_type", False)) or bool(getattr(value, "weak_type", False))
    placed = sharding(value)
    if placed is not None:
        return jax.ShapeDtypeStruct(shape, dtype, weak_type=weak, sharding=placed)
    if weak:
        return jax.ShapeDtypeStruct(shape, dtype, weak_type=True)
    return jax.ShapeDtypeStruct(shape, dtype)


def sharding(value: Any) -> Any:
    """The sharding that places ``value`` on several devices, or None: a concrete array's or a
    ShapeDtypeStruct's (every version); a tracer's type's, where the mesh's axes are Explicit
    (newer JAX: the type says ``f32[8@data,16]``; an Auto or 0.4.35 type says nothing). A single
    device's sharding is None: it changes nothing about the program."""
    if is_tracer(value):
        return sharding_of_type(getattr(value, "aval", None))
    try:
        placed = getattr(value, "sharding", None)
    except Exception:  # an array whose sharding cannot be read (deleted, abstract)
        return None
    return placed if mesh_devices(placed) > 1 else None


def argument_paths(closed_jaxpr: Any) -> tuple[list[str] | None, list[str | None] | None]:
    """(the argument path of each input, ``state[0]``; the result path of each output, ``[0][1]``,
    ``""`` for a single output, None for one not known) of a traced jitted function, from JAX's
    debug info; None where nothing is known. The names are the jit equation's (the outer trace
    binds jaxlint's wrapper, whose names are not the user's), read only when its operands are the
    trace's inputs in order. Result paths start with ``result`` from JAX 0.5 and not before; before
    0.5 the outer trace may have no debug info, and the jit's own leaves out the outputs that are
    its inputs passed through (those stay None: they are the inputs themselves)."""
    jaxpr, _ = open_jaxpr(closed_jaxpr)
    call = next((e for e in jaxpr.eqns if e.primitive.name in ("jit", "pjit") and e.params.get("jaxpr") is not None),
                None)
    inner = open_jaxpr(call.params["jaxpr"])[0] if call is not None else None
    inputs = None
    if call is not None and list(call.invars) == list(jaxpr.invars):
        names = getattr(getattr(inner, "debug_info", None), "arg_names", None)
        if names is not None and len(names) == len(jaxpr.invars):
            inputs = [str(n) for n in names]
    outputs: list[str | None] | None = None
    results = getattr(getattr(jaxpr, "debug_info", None), "result_paths", None)
    if results is not None and len(results) == len(jaxpr.outvars):
        outputs = [_result_path(p) for p in results]
    elif call is not None:
        results = getattr(getattr(inner, "debug_info", None), "result_paths", None)
        if results is not None and len(results) == len(call.outvars):
            by_var = {id(v): _result_path(p) for v, p in zip(call.outvars, results)}
            outputs = [by_var.get(id(v)) for v in jaxpr.outvars]
    return inputs, outputs


def _result_path(path: Any) -> str:
    text = str(path)
    return text[len("result"):] if text.startswith("result") else text


def array_types() -> tuple[type, ...]:
    return (jax.Array, np.ndarray, np.generic, jax.ShapeDtypeStruct)


def pieces(sharding: Any) -> int:
    """How many pieces a NamedSharding splits an array into (the product of the mesh axes its
    spec names; 1 for anything else: replicated, unspecified, one device)."""
    if not isinstance(sharding, jax.sharding.NamedSharding):
        return 1
    sizes = dict(sharding.mesh.shape)
    named = [a for entry in sharding.spec if entry is not None
             for a in ((entry,) if isinstance(entry, str) else entry)]
    return math.prod(sizes.get(a, 1) for a in named)


def input_shardings(eqn: Any) -> list[Any]:
    """The sharding of each input of a jit equation where its ``in_shardings`` entry names one
    (a jit's in_shardings, every version); None for the rest (an Explicit type places its value
    itself: ``sharding_of_type``)."""
    given = list(eqn.params.get("in_shardings", ()) or ())
    return [entry if isinstance(entry, jax.sharding.NamedSharding) else None
            for entry in given[:len(eqn.invars)]] + [None] * (len(eqn.invars) - len(given))


def sharding_of_type(aval: Any) -> Any:
    """The NamedSharding an Explicit type carries (``f32[8@data,16]``), else None."""
    placed = getattr(aval, "sharding", None)
    spec = getattr(placed, "spec", None)
    return placed if spec is not None and any(axis is not None for axis in spec) else None


def placed(array: Any, spec: Any) -> Any:
    """``array`` placed with the sharding of the ShapeDtypeStruct ``spec`` (as is without one): the
    fixer runs a function on values sharded as it was traced. A tracer's type holds its mesh's
    axes only (an AbstractMesh): the first devices are laid out in that shape."""
    sharding = getattr(spec, "sharding", None)
    if not isinstance(sharding, jax.sharding.Sharding):
        return array
    mesh = getattr(sharding, "mesh", None)
    if isinstance(sharding, jax.sharding.NamedSharding) and not isinstance(mesh, jax.sharding.Mesh):
        sharding = jax.sharding.NamedSharding(_on_devices(mesh), sharding.spec)
    return jax.device_put(array, sharding)


def _on_devices(mesh: Any) -> Any:
    """An AbstractMesh laid out on the first devices in its shape (a program over it compiles).
    0.4.35's meshes have no axis types (every axis is Auto)."""
    devices = np.array(jax.devices()[:mesh.size]).reshape(mesh.axis_sizes)
    types = getattr(mesh, "axis_types", None)
    return jax.sharding.Mesh(devices, mesh.axis_names, **({} if types is None else {"axis_types": types}))


def is_mesh(value: Any) -> bool:
    """A device mesh (``Mesh``, from ``jax.make_mesh`` too) or an ``AbstractMesh`` (0.4.35 has both)."""
    return isinstance(value, (jax.sharding.Mesh, jax.sharding.AbstractMesh))


def sharded_struct(struct: Any, mesh: Any, shards: tuple[tuple[str, ...], ...]) -> Any:
    """``struct`` split over ``mesh``: per dimension, the mesh axes it is split over (a hint's
    ``f32[512@data, 512]``). On Explicit axes (newer JAX) the traced types carry the sharding; on
    Auto axes (0.4.35: all) the compile step places the argument so. An AbstractMesh is laid out on
    the first devices, as ``placed`` does."""
    if not isinstance(mesh, jax.sharding.Mesh):
        mesh = _on_devices(mesh)
    spec = jax.sharding.PartitionSpec(*(None if not axes else axes[0] if len(axes) == 1 else tuple(axes)
                                        for axes in shards))
    return jax.ShapeDtypeStruct(struct.shape, struct.dtype, sharding=jax.sharding.NamedSharding(mesh, spec))


def shards_of(sharding: Any) -> tuple[tuple[str, ...], ...] | None:
    """Per dimension, the mesh axes a NamedSharding splits it over (``sharded_struct``'s inverse);
    None for another kind of sharding or a spec entry that names no axes (``P.UNCONSTRAINED``)."""
    if not isinstance(sharding, jax.sharding.NamedSharding):
        return None
    shards = []
    for entry in sharding.spec:
        if entry is None or isinstance(entry, str):
            shards.append(() if entry is None else (entry,))
        elif isinstance(entry, (tuple, list)) and all(isinstance(axis, str) for axis in entry):
            shards.append(tuple(entry))
        else:
            return None
    return tuple(shards)


def is_tracer(value: Any) -> bool:
    return isinstance(value, jax.core.Tracer)


def compiled_costs(compiled: Any) -> dict[str, Any]:
    """FLOPs and bytes from ``Compiled.cost_analysis()`` (a one-element list before 0.4.38, a
    dict after, possibly None) and buffer sizes from ``memory_analysis()``. Note: XLA counts a
    loop body once, whatever its trip count."""
    analysis = compiled.cost_analysis()
    if isinstance(analysis, (list, tuple)):
        analysis = analysis[0] if analysis else None
    analysis = analysis or {}
    memory = compiled.memory_analysis()
    field = lambda name: getattr(memory, name, None) if memory is not None else None  # noqa: E731
    return {"flops": analysis.get("flops"), "bytes": analysis.get("bytes accessed"),
            "transcendentals": analysis.get("transcendentals"),
            "temp_bytes": field("temp_size_in_bytes"), "argument_bytes": field("argument_size_in_bytes"),
            "output_bytes": field("output_size_in_bytes"), "alias_bytes": field("alias_size_in_bytes")}


def compiled_devices(compiled: Any) -> int:
    """The devices a compiled program runs on (its inputs' shardings span them; 1 without inputs):
    above 1, its cost and memory figures are one device's share of a partitioned program."""
    try:
        shardings = jax.tree_util.tree_leaves(compiled.input_shardings)
        return max((len(s.device_set) for s in shardings), default=1)
    except Exception:  # noqa: BLE001 - a compiled object that cannot say
        return 1


# Before 0.7, the equations of a cached jaxpr of one of JAX's own jitted helpers (the inner jits of
# jax.random.normal, jnp.piecewise) keep the traceback of the call that first traced them, possibly
# in another function; from 0.7 their tracebacks stop at the jit (no user frame).
STALE_LIBRARY_TRACEBACKS = JAX_VERSION < (0, 7, 0)
_PACKAGE_DIR = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))  # jaxlint/
_JAX_DIR = os.path.join(os.path.dirname(os.path.abspath(jax.__file__)), "")


def user_frames(source_info: Any) -> list[tuple[str, str, int]]:
    """(file, function, line) of each user frame of an equation's traceback, innermost first."""
    frames = getattr(getattr(source_info, "traceback", None), "frames", None) or []
    return [(f.file_name, f.function_name, f.line_num) for f in frames
            if source_info_util.is_user_filename(f.file_name)]


def is_library_jaxpr(jaxpr: Any) -> bool:
    """The jaxpr of a function defined inside JAX (``debug_info.func_src_info`` is "name at file:line")."""
    text = getattr(getattr(jaxpr, "debug_info", None), "func_src_info", None)
    if not isinstance(text, str) or " at " not in text:
        return False
    file = text.rpartition(" at ")[2].rpartition(":")[0]
    return os.path.abspath(file).startswith(_JAX_DIR)


# JAX's configuration: ``jax.config.values`` reads through this thread's context-manager
# overrides, so the global values and the overrides are read from the option holders
# (``State.get_global``/``get_local`` from 0.5; ``State._value`` and a threading.local before).

_THREAD_LOCAL = getattr(_jax_config, "_thread_local_state", None)  # before 0.5
_UNSET = getattr(getattr(_jax_config, "config_ext", None), "unset", getattr(_jax_config, "unset", None))


def _option_holders() -> dict[str, Any]:
    return dict(getattr(_jax_config.config, "_value_holders", {}))


def _global_value(holder: Any) -> Any:
    if hasattr(holder, "get_global"):
        return holder.get_global()
    if hasattr(holder, "_value"):
        return holder._value
    return holder.value  # a Flag: no context manager, no thread-local value


def _local_values() -> dict[str, Any]:
    """This thread's overrides (a ``with jax.enable_x64(True):`` a module entered and never left)."""
    if _THREAD_LOCAL is not None:
        return dict(_THREAD_LOCAL.__dict__)
    return {name: value for name, holder in _option_holders().items() if hasattr(holder, "get_local")
            for value in [holder.get_local()] if value is not _UNSET}


def _set_local(holder: Any, name: str, value: Any) -> None:
    """Set (or, with ``_UNSET``, drop) this thread's override of one option."""
    if _THREAD_LOCAL is not None:
        if value is _UNSET:
            _THREAD_LOCAL.__dict__.pop(name, None)
        else:
            setattr(_THREAD_LOCAL, name, value)
    else:
        holder.set_local(value)
    hook = getattr(holder, "_update_thread_local_hook", None)
    if hook is not None:
        hook(None if value is _UNSET else value)


def _same(a: Any, b: Any) -> bool:
    try:
        return a is b or (type(a) is type(b) and bool(a == b))
    except Exception:  # an option value whose == raises: treat as changed
        return False


# The states ``jax.sharding.set_mesh`` sets for the thread (JAX >= 0.6), which are not options: a
# module that calls it at import would otherwise leave its mesh to the modules analyzed after it.
_MESH_STATES = tuple(state for name in ("abstract_mesh_context_manager", "device_context")
                     for state in [getattr(_jax_config, name, None)] if hasattr(state, "swap_local"))

ConfigSnapshot = tuple[dict[str, Any], dict[str, Any], tuple[Any, ...]]


def config_snapshot() -> ConfigSnapshot:
    """(global value of every JAX option, this thread's overrides, the thread's mesh context), for
    ``restore_config``."""
    meshes = tuple(state.get_local() for state in _MESH_STATES)
    return {name: _global_value(h) for name, h in _option_holders().items()}, _local_values(), meshes


def restore_config(snapshot: ConfigSnapshot) -> bool:
    """Put back every option changed since ``snapshot`` (through ``jax.config.update``, so JAX's
    hooks run) and the mesh context; returns whether any was. Options registered since are left as
    they are, and so are those that cannot change any more (``jax_num_cpu_devices`` once the
    backends started)."""
    saved_globals, saved_locals, saved_meshes = snapshot
    holders = _option_holders()
    changed = False
    for state, value in zip(_MESH_STATES, saved_meshes):
        if state.get_local() is not value:
            changed = True
            state.set_local(value)
    local_values = _local_values()
    for name in set(local_values) | set(saved_locals):
        value = saved_locals.get(name, _UNSET)
        if name in holders and not _same(local_values.get(name, _UNSET), value):
            changed = True
            try:
                _set_local(holders[name], name, value)
            except Exception:  # JAX refuses the value now: keep the module's
                pass
    for name, value in saved_globals.items():
        holder = holders.get(name)
        if holder is None or _same(_global_value(holder), value):
            continue
        changed = True
        try:
            jax.config.update(name, value)
        except Exception:  # fixed once the backends started: keep the module's
            pass
    return changed


def enable_x64(on: bool) -> Any:
    """Context manager setting jax_enable_x64 for this thread: ``jax.enable_x64`` on newer JAX,
    ``jax.experimental.enable_x64`` on 0.4.x."""
    if hasattr(jax, "enable_x64"):
        return jax.enable_x64(on)
    from jax import experimental

    return experimental.enable_x64(on)


def is_staged(value: Any) -> bool:
    """A tracer of a jit-like trace (jit, scan or cond bodies, make_jaxpr), directly or under a
    vmap or JVP tracer: the function holding it runs as compiled code. By class name: the class
    is private and moved between versions (a BatchTracer's ``val``, a JVPTracer's ``primal``)."""
    for _ in range(8):
        if not is_tracer(value):
            return False
        if type(value).__name__ == "DynamicJaxprTracer":
            return True
        value = getattr(value, "val", getattr(value, "primal", None))
    return False


def is_differentiated(value: Any) -> bool:
    """A JVP or linearize tracer (``jax.grad``, ``jvp``, ``vjp``), directly or under other
    tracers: the function holding it is being differentiated. By class name, as ``is_staged``."""
    for _ in range(8):
        if not is_tracer(value):
            return False
        if type(value).__name__ in ("JVPTracer", "LinearizeTracer"):
            return True
        value = getattr(value, "val", getattr(value, "primal", None))
    return False


def random_keys(dtype: Any, shape: tuple[int, ...], seed: int) -> Any:
    """Typed PRNG keys of ``dtype`` (``key<fry>``), ``shape``, all distinct, from ``seed``. The
    key type's implementation is private (``KeyTy._impl``) from JAX 0.4.35 to 0.10."""
    count = 1
    for size in shape:
        count *= size
    root = jax.random.key(seed, impl=dtype._impl.name)
    return jax.random.split(root, count).reshape(shape)


def side_effects(closed: Any) -> list[str]:
    """The effects of a traced program other than debug printing (``jax.debug.print`` and
    ``jax.debug.callback`` only show values): callbacks into Python code, which may do anything."""
    return sorted({type(effect).__name__ for effect in closed.effects if "Debug" not in type(effect).__name__})


def symbols(dim: Any) -> list[str]:
    """The names of the symbols a symbolic dimension is made of, sorted (none for an int)."""
    return sorted(getattr(dim, "_get_vars", lambda: set())())


def concrete_shape(shape: tuple[Any, ...], size: int = 4,
                   sizes: dict[str, int] | None = None) -> tuple[int, ...] | None:
    """``shape`` with every symbolic dimension (``jax.export``'s ``b``, ``2*b``, ``floordiv(b, 2)``)
    evaluated at ``size`` for each symbol, one size for all so that dimensions the function needs
    equal are, or at ``sizes[symbol]`` where given; None when a dimension cannot be evaluated that way."""
    concrete = []
    names = {"floordiv": lambda a, b: a // b, "mod": lambda a, b: a % b, "max": max, "min": min,
             "non_negative": lambda a: max(a, 0)}
    for dim in shape:
        if isinstance(dim, int):
            concrete.append(dim)
            continue
        values = {s: (sizes or {}).get(s, size) for s in symbols(dim)}
        try:
            value = eval(str(dim), {"__builtins__": {}}, {**names, **values})
        except Exception:  # an expression form this does not know
            return None
        if not isinstance(value, int) or value < 0:
            return None
        concrete.append(value)
    return tuple(concrete)


# Run-time events (drivers/runtime.py). With ``jax_explain_cache_misses`` on, each miss of
# jit's tracing cache is explained in a WARNING record of the logger of the module that explains
# it: jax._src.pjit up to 0.4.x, jax._src.interpreters.partial_eval in newer releases. The text
# differs too ("seen f32[8,4], but now given f32[7,4]" then, "now f32[7,4] and before f32[8,4]"
# now); both forms are read, whatever the version.
CACHE_MISS_LOGGERS = ("jax._src.pjit", "jax._src.interpreters.partial_eval")
CACHE_MISS_PREFIX = "TRACING CACHE MISS at "
# Records the flag raises from DEBUG to WARNING besides (when a persistent compilation cache is on).
EXPLAIN_ONLY_LOGGERS = ("jax._src.compiler", "jax._src.compilation_cache")
EXPLAIN_ONLY_PREFIXES = ("PERSISTENT COMPILATION CACHE MISS", "Not writing persistent cache entry")
_NEW_TYPE = re.compile(r"^\* at (?P<where>.+?), now (?P<now>.+?) and before (?P<before>.+?)(?:https?://\S+)?$")
_OLD_TYPE = re.compile(r"^\* at (?P<where>.+?), seen (?P<before>.+?), but now given (?P<now>.+?)$")
_NEW_TREE = re.compile(r"^\* at input path (?P<where>.+?), now (?P<now>.+?) and before (?P<before>.+?), so .*$")
_OLD_TREE = re.compile(r"^\* at (?P<where>.+?), seen (?P<before>.+?) but now given (?P<now>.+?),\s+so .*$")
_CONTEXT = re.compile(r"^\* (?P<where>\S+) differs: now (?P<now>.+?) and before (?P<before>.+?)$")
_STATIC = re.compile(r"Static\(val=(?P<value>.*)\)$")
_FUNCTION = re.compile(r"^(?:for )?(?P<name>\S+?)(?: id=\d+)?(?: defined at (?P<defined>.+))?$")


# With ``jax_log_compiles`` on, each compile is logged too, the only word of a compile that no
# tracing-cache miss explains (an argument placed with another sharding on an Auto mesh: the trace
# is the same, the lowering is not): "Compiling jit(step) with global shapes and types (...).
# Argument mapping: (NamedSharding(mesh=..., spec=P('data', None), ...), UnspecifiedValue)." (0.4.x:
# "Compiling step ... [...]", PartitionSpec). The flag raises these loggers' records to WARNING.
COMPILE_LOGGER = "jax._src.interpreters.pxla"
LOG_COMPILES_ONLY = {COMPILE_LOGGER: ("Compiling ",), "jax._src.dispatch": ("Finished ",),
                     "jax._src.compiler": ("Persistent compilation cache hit",)}
_COMPILING = re.compile(r"^Compiling (?:jit\((?P<jit>[^()\s]+)\)|(?P<name>\S+)) with global shapes and types "
                        r".*\. Argument mapping: \((?P<mapping>.*)\)\.$", re.S)
_SPEC = re.compile(r"spec=(?:PartitionSpec|P)\((?P<axes>.*?)\)(?:, memory_kind=|\)$)")


def log_compiles(on: bool) -> bool:
    """Set ``jax_log_compiles`` globally; returns the value it had."""
    previous = bool(_jax_config.log_compiles.value)
    if previous != on:
        jax.config.update("jax_log_compiles", on)
    return previous


def parse_compile(message: str) -> tuple[str, tuple[str, ...]] | None:
    """(function name, each input's sharding: ``P('data', None)``, or the text JAX printed) of a
    compile ``jax_log_compiles`` logged; None for another record."""
    found = _COMPILING.match(message)
    if found is None:
        return None
    items, depth, start, text = [], 0, 0, found.group("mapping")
    for index, char in enumerate(text + ","):
        depth += {"(": 1, "[": 1, "{": 1, ")": -1, "]": -1, "}": -1}.get(char, 0)
        if char == "," and depth == 0:
            items.append(text[start:index].strip())
            start = index + 1
    shardings = []
    for item in filter(None, items):
        spec = _SPEC.search(item)
        shardings.append(f"P({spec.group('axes')})" if spec else item)
    return found.group("jit") or found.group("name"), tuple(shardings)


def explain_cache_misses(on: bool) -> bool:
    """Set ``jax_explain_cache_misses`` globally; returns the value it had."""
    previous = bool(_jax_config.explain_cache_misses.value)
    if previous != on:
        jax.config.update("jax_explain_cache_misses", on)
    return previous


def under_jit() -> bool:
    """Whether a jit is being traced here: a miss of an inner jit is traced into the outer
    function's program, not compiled on its own."""
    from jax._src import core

    return core.unsafe_am_i_under_a_jit()


def is_jax_file(path: str) -> bool:
    return os.path.abspath(path).startswith(_JAX_DIR)


def parse_cache_miss(message: str) -> CacheMiss | None:
    """The tracing-cache miss ``message`` explains (None: not one, or a function defined inside
    JAX, which 0.4.x explains too)."""
    if not message.startswith(CACHE_MISS_PREFIX):
        return None
    lines = [line.strip() for line in message.splitlines()[1:]]
    unseen = "never seen function:" in lines
    head = lines[lines.index("never seen function:") + 1] if unseen else next(
        (line for line in lines if line.startswith("for ")), "")
    found = _FUNCTION.match(head)
    if found is None:
        return None
    defined = found.group("defined") or ""
    if defined and is_jax_file(defined.rpartition(":")[0]):
        return None
    differences = () if unseen else tuple(_differences(lines))
    return CacheMiss(found.group("name"), defined, unseen, differences)


def _differences(lines: list[str]) -> list[Difference]:
    found = list(_each_difference(lines))
    if any(d.kind == "context" and d.where for d in found):  # the heading, then one line per option
        found = [d for d in found if d.kind != "context" or d.where]
    return found


def _each_difference(lines: list[str]) -> Iterator[Difference]:
    explained = False
    for line in lines:
        tree = _NEW_TREE.match(line) or _OLD_TREE.match(line)
        kind = "tree"
        if tree is None:
            tree, kind = _NEW_TYPE.match(line) or _OLD_TYPE.match(line), "type"
        if tree is None:
            tree, kind = _CONTEXT.match(line), "context"
        if tree is not None:
            explained = True
            before, now = tree.group("before"), tree.group("now")
            static_before, static_now = _STATIC.search(before), _STATIC.search(now)
            if kind == "tree" and static_before and static_now:
                kind, before, now = "static", static_before.group("value"), static_now.group("value")
            yield Difference(kind, tree.group("where"), before, now, line)
        elif line.lower().startswith(("never seen passing", "tracing context doesn't match")):
            explained = True
            yield Difference("tree" if line.startswith("never") else "context", text=line)
    if not explained:
        yield Difference("unexplained", text=next((line for line in lines if "unavailable" in line), ""))


# JAX's warning when x64 is off and a 64-bit dtype is asked for. The requested dtype is a name
# ("float64") on newer JAX, a class's repr ("<class 'jax.numpy.float64'>") on 0.4.x; "requested
# in zeros" is absent where JAX does not know the function (scalar types called directly).
_TRUNCATION = re.compile(r"Explicitly requested dtype (?P<requested>.*?)\s+(?:requested in (?P<api>\w+) )?"
                         r"\s*is not available, and will be truncated to dtype (?P<result>\w+)")
_DTYPE_NAME = re.compile(r"(?:u?int|float|complex)\d+")
TRUNCATION_MESSAGE = "Explicitly requested dtype"  # its start: the warnings filter's pattern


def truncation(message: str) -> tuple[str, str, str] | None:
    """(requested dtype, the dtype JAX uses instead, the jnp function asked or "") of JAX's
    truncation warning, or None for any other message."""
    found = _TRUNCATION.search(message)
    if found is None:
        return None
    requested = _DTYPE_NAME.findall(found["requested"])
    return (requested[-1] if requested else found["requested"]), found["result"], found["api"] or ""


def is_user_file(path: str) -> bool:
    """Whether JAX counts ``path`` as user code (not JAX's own, nor an excluded library's)."""
    return bool(source_info_util.is_user_filename(path)) and not path.startswith(_PACKAGE_DIR)


# --- compiling a jaxpr for the memory rules (jaxlint.ir.compile) ---------------------------------

DONATION_WARNING = "Some donated buffers were not usable"


def compile_jaxpr(closed: Any, donated: tuple[bool, ...] = (), keep_unused: bool = False,
                  in_shardings: tuple[Any, ...] | None = None) -> tuple[str, list[int], list[str], int | None]:
    """(optimized HLO text, the argument indices the executable kept, the donation warnings JAX
    gave, XLA's temporary memory in bytes or None) of a ClosedJaxpr compiled the way ``jax.jit``
    compiles it, with ``donated`` (one flag per input) donated. JAX >= 0.5 leaves aliasing to XLA
    (by buffer size, ``buffer_donor`` for the rest); 0.4.35 matches donations to outputs itself,
    by shape and dtype, and warns for the rest. ``in_shardings``: one sharding (or None: left to
    XLA) per input, the shardings the traced arguments carried or the user's jit gives them: the
    partitioned program, whose HLO shapes and sizes are per device."""
    import warnings

    avals = [v.aval for v in closed.jaxpr.invars]
    args = [jax.ShapeDtypeStruct(a.shape, a.dtype) for a in avals]
    donate = tuple(i for i, d in enumerate(donated) if d)
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        placed = {"in_shardings": in_shardings} if in_shardings is not None else {}
        lowered = target_devices.lower_jaxpr(closed, args, donate_argnums=donate, keep_unused=keep_unused,
                                             **placed)
        compiled = lowered.compile()
    compile_args = getattr(getattr(lowered, "_lowering", None), "compile_args", {}) or {}
    kept = compile_args.get("kept_var_idx")
    kept_list = sorted(kept) if kept is not None else list(range(len(avals)))
    if compile_args.get("tuple_args"):
        kept_list = []  # one tuple parameter: the alias map's numbers are not argument numbers
    found = [str(w.message).split("\n")[0] for w in caught if DONATION_WARNING in str(w.message)]
    temp = getattr(compiled.memory_analysis(), "temp_size_in_bytes", None)
    return compiled.as_text(), kept_list, found, int(temp) if temp is not None else None


def bind_equation(eqn: Any, inputs: list[Any]) -> list[Any]:
    """The outputs of one jaxpr equation applied to ``inputs`` (values or tracers), as JAX's
    ``eval_jaxpr`` applies it: ``get_bind_params`` returned (subfuns, params) up to 0.4.x and
    returns the params alone in newer releases."""
    found = eqn.primitive.get_bind_params(eqn.params)
    subfuns, params = found if isinstance(found, tuple) else ((), found)
    out = eqn.primitive.bind(*subfuns, *inputs, **params)
    return list(out) if eqn.primitive.multiple_results else [out]


def eval_closed(closed: Any, inputs: list[Any]) -> list[Any]:
    """The outputs of a ClosedJaxpr applied to ``inputs``."""
    try:
        from jax.extend.core import jaxpr_as_fun
    except ImportError:  # 0.4.35
        from jax.core import jaxpr_as_fun  # type: ignore[no-redef,attr-defined]
    return list(jaxpr_as_fun(closed)(*inputs))


def temp_bytes(fun: Any, avals: list[Any], shardings: tuple[Any, ...] | None = None) -> int | None:
    """XLA's temporary memory (``memory_analysis().temp_size_in_bytes``) of ``fun`` jitted and
    compiled for arguments of ``avals`` placed with ``shardings`` (as compile_jaxpr places them);
    None when the backend does not say."""
    args = [jax.ShapeDtypeStruct(a.shape, a.dtype) if s is None else jax.ShapeDtypeStruct(a.shape, a.dtype, sharding=s)
            for a, s in zip(avals, shardings or [None] * len(avals))]
    size = getattr(target_devices.lower(fun, args).compile().memory_analysis(), "temp_size_in_bytes", None)
    return int(size) if size is not None else None


def arg_names(jaxpr: Any) -> list[str] | None:
    """The names of a jit's flattened arguments (``state['w']``), from its debug info; None when
    JAX does not say."""
    info = getattr(jaxpr, "debug_info", None)
    names = getattr(info, "arg_names", None)
    return list(names) if names is not None else None


def function_source(jaxpr: Any) -> tuple[str, str, int] | None:
    """(name, file, line) of the function a jit traced (``debug_info.func_src_info``)."""
    text = getattr(getattr(jaxpr, "debug_info", None), "func_src_info", None)
    if not isinstance(text, str) or " at " not in text:
        return None
    name, _, where = text.rpartition(" at ")
    file, _, line = where.rpartition(":")
    return (name, file, int(line)) if line.isdigit() else None


# --- host syncs (JX309) ---------------------------------------------------------------------------
# The methods of a device array that hand its value to Python, and what the message calls each.
# ``ArrayImpl`` (``jax._src.array``, a C++ type with these Python methods set on it, in 0.4.35 and
# 0.10.2 alike) takes new ones with ``setattr`` and gives the originals back the same way.
# ``np.asarray``/``np.array`` read a CPU array through the buffer protocol, which no Python method
# sees; on an accelerator they call ``__array__``.
ARRAY_CONVERSIONS = {"__float__": "float", "__int__": "int", "__bool__": "bool", "__index__": "index",
                     "__complex__": "complex", "__format__": "format", "__str__": "str", "__repr__": "repr",
                     "item": ".item()", "tolist": ".tolist()", "__array__": "np.asarray"}
# Folders of the libraries that convert an array on the caller's behalf (``jax.device_get``,
# ``jnp.zeros(n)``): a conversion made in them is placed at the project's frame that called them.
_NUMPY_DIR = os.path.join(os.path.dirname(os.path.abspath(np.__file__)), "")
_JAXLIB_DIR = os.path.join(os.path.dirname(os.path.abspath(jaxlib.__file__)), "")


# The functions of ``jax.device_get`` (``jax._src.api``), through which a conversion is the batched
# read JX309 recommends: a whole list of values fetched at once, every k steps.
BATCHED_READS = frozenset({"device_get", "_device_get"})


def device_array_class() -> type:
    from jax._src.array import ArrayImpl

    return ArrayImpl


def is_conversion_machinery(path: str) -> bool:
    """A file of JAX, jaxlib or NumPy."""
    return path.startswith((_JAX_DIR, _JAXLIB_DIR, _NUMPY_DIR))


def is_jitted(value: Any) -> bool:
    """A function ``jax.jit`` made (``PjitFunction``, in jaxlib in every supported version)."""
    return type(value).__name__ == "PjitFunction" and type(value).__module__.startswith("jaxlib")


def hlo_sharding_text(sharding: Any, ndim: int) -> str | None:
    """The HLO sharding a jax.sharding.Sharding gives a value of ``ndim`` dimensions, as XLA prints
    it (``{devices=[2,1,4]<=[4,2]T(1,0)}``); None for anything else or when JAX cannot say. The
    method is private in every supported release (0.4.35 .. 0.10.2) and prints alike."""
    if not isinstance(sharding, jax.sharding.Sharding):
        return None
    try:
        return str(sharding._to_xla_hlo_sharding(ndim))
    except Exception:  # a sharding that has no HLO form for this rank
        return None


def partition_spec_text(sharding: Any) -> str | None:
    """A NamedSharding's PartitionSpec as ``P('y', None, ('x', 'y'))`` (0.4.35 prints
    ``PartitionSpec(...)``, 0.10 ``P(...)``), or None for another kind of sharding."""
    spec = getattr(sharding, "spec", None)
    if spec is None or not isinstance(sharding, jax.sharding.Sharding):
        return None
    return f"P({', '.join(repr(tuple(e)) if isinstance(e, (tuple, list)) else repr(e) for e in spec)})"


def mesh_devices(sharding: Any) -> int:
    """How many devices a sharding spans (1 when it is not a jax.sharding.Sharding)."""
    if not isinstance(sharding, jax.sharding.Sharding):
        return 1
    try:
        return len(sharding.device_set)
    except Exception:  # an abstract mesh (Explicit-axis types) has no devices: its axis sizes
        shape = getattr(getattr(sharding, "mesh", None), "shape", None) or {}
        return math.prod(shape.values()) if shape else 1


# --- a jax.jit's placement, read while the jit traces its function (jaxlint.drivers.placement) ---

# The JAX frame that traces a jit's function, holding the jit's PjitInfo as ``ji`` and what it was
# called with: ``_trace_for_jit`` (0.10: ``args``/``kwargs`` with the static arguments,
# ``donate_argnums`` counting them), ``_infer_params_impl`` (0.4.35: ``dyn_args``/``dyn_kwargs``
# without them; ``args`` is deleted). Both hold ``in_shardings_flat`` and ``donated_invars``, one
# entry per leaf of the dynamic arguments, before the function is traced.
_JIT_TRACING = frozenset({"_trace_for_jit", "_infer_params_impl"})
STATIC = object()  # stands for a static argument of a jit in JitPlacement.args and .kwargs


class JitPlacement:
    """What a ``jax.jit`` keeps of the placement of the call it is tracing. ``args``/``kwargs``:
    what it called the function with, each leaf of a dynamic argument an int (its position among
    the jit's flattened inputs), a static argument ``STATIC``. Per flattened input: ``in_shardings``
    (the jit's, else the sharding of a committed array over several devices, else None) and
    ``donated``. ``out_shardings``: the jit's, a prefix of the function's result (None: none given)."""

    def __init__(self, function: Any, args: tuple[Any, ...], kwargs: dict[str, Any], in_shardings: tuple[Any, ...],
                 donated: tuple[bool, ...], out_shardings: Any) -> None:
        self.function, self.args, self.kwargs = function, args, kwargs
        self.in_shardings, self.donated, self.out_shardings = in_shardings, donated, out_shardings


def jit_placement(frame: Any) -> JitPlacement | None:
    """The placement of the ``jax.jit`` whose trace called ``frame``'s function directly (only JAX's
    frames between them); None when a jit does not trace it that way (a helper it calls, a scan or
    vmap body, an eager call) or JAX keeps what it was given where this version cannot find it."""
    caller = frame.f_back
    while caller is not None and caller.f_code.co_filename.startswith(_JAX_DIR):
        if caller.f_code.co_name in _JIT_TRACING and "ji" in caller.f_locals:
            try:
                return _placement(caller.f_locals, frame.f_code)
            except Exception:  # noqa: BLE001 - private state of another shape: traced without it
                return None
        caller = caller.f_back
    return None


def _placement(local: dict[str, Any], code: Any) -> JitPlacement | None:
    import functools

    from jax._src.sharding_impls import UnspecifiedValue

    info, function = local["ji"], local["fun"]
    target = function
    while isinstance(target, functools.partial):
        target = target.func
    if getattr(target, "__code__", None) is not code:
        return None  # jit traces a wrapper that calls this function: its arguments may differ
    static = tuple(info.static_argnums)
    if "dyn_args" in local:  # 0.4.35
        dynamic, dyn_kwargs = tuple(local["dyn_args"]), dict(local["dyn_kwargs"])
        if any(i < 0 for i in static):
            return None
        marked_args, marked_kwargs, leaves = _marked(dynamic, dyn_kwargs)
        args: list[Any] = list(marked_args)
        for position in sorted(static):
            args.insert(position, STATIC)
    else:  # 0.10: every argument, the static ones in place
        every = tuple(local["args"])
        static = tuple(i % len(every) for i in static) if every else ()
        dynamic = tuple(a for i, a in enumerate(every) if i not in static)
        dyn_kwargs = {k: v for k, v in local["kwargs"].items() if k not in info.static_argnames}
        marked_args, marked_kwargs, leaves = _marked(dynamic, dyn_kwargs)
        marked = iter(marked_args)
        args = [STATIC if i in static else next(marked) for i in range(len(every))]
    kwargs = dict(marked_kwargs)
    kwargs.update({k: STATIC for k in local["kwargs"] if k in info.static_argnames})
    given, donated = tuple(local["in_shardings_flat"]), tuple(bool(d) for d in local["donated_invars"])
    if len(given) != len(leaves) or len(donated) != len(leaves):
        return None
    # Only shardings over several devices, which a jit outside the test's mesh context can take (a
    # PartitionSpec needs the context): None lets the jit choose, as the user's None does.
    in_shardings = tuple(s if isinstance(s, jax.sharding.Sharding) and mesh_devices(s) > 1
                         else None if is_tracer(leaf) else sharding(leaf)
                         for s, leaf in zip(given, leaves))
    outs = info.out_shardings_leaves
    placed_outs = all(s is None or isinstance(s, (jax.sharding.Sharding, UnspecifiedValue)) for s in outs) \
        and any(isinstance(s, jax.sharding.Sharding) and mesh_devices(s) > 1 for s in outs)
    out_shardings = info.out_shardings_treedef.unflatten(outs) if placed_outs else None
    return JitPlacement(function, tuple(args), kwargs, in_shardings, donated, out_shardings)


def _marked(args: tuple[Any, ...], kwargs: dict[str, Any]) -> tuple[Any, dict[str, Any], list[Any]]:
    """``args`` and ``kwargs`` with each leaf replaced by its position among the jit's flattened
    inputs (JAX flattens ``(args, kwargs)``), and the leaves."""
    leaves, treedef = jax.tree_util.tree_flatten((args, kwargs), is_leaf=iterable_leaf)
    marked_args, marked_kwargs = jax.tree_util.tree_unflatten(treedef, list(range(len(leaves))))
    return marked_args, marked_kwargs, leaves


def broadcast_prefix(prefix: Any, full: Any) -> list[Any]:
    """Each leaf of ``prefix`` repeated over the leaves of ``full`` it covers (a None of ``prefix``
    is a leaf): how jit spreads ``out_shardings`` over a result."""
    from jax._src.tree_util import broadcast_prefix as broadcast

    return broadcast(prefix, full, is_leaf=lambda x: x is None)
