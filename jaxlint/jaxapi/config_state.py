"""JAX's configuration as a module can leave it: a snapshot of every option (global values, this
thread's overrides, the thread's mesh context) and its restoration, x64, and the two logging
flags the run-time watcher turns on (jax_log_compiles, jax_explain_cache_misses)."""
from __future__ import annotations

from typing import Any

import jax
from jax._src import config as _jax_config

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


def log_compiles(on: bool) -> bool:
    """Set ``jax_log_compiles`` globally; returns the value it had."""
    previous = bool(_jax_config.log_compiles.value)
    if previous != on:
        jax.config.update("jax_log_compiles", on)
    return previous


def explain_cache_misses(on: bool) -> bool:
    """Set ``jax_explain_cache_misses`` globally; returns the value it had."""
    previous = bool(_jax_config.explain_cache_misses.value)
    if previous != on:
        jax.config.update("jax_explain_cache_misses", on)
    return previous
