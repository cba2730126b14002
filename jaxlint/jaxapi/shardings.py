"""Shardings and meshes: a value's sharding, its pieces and devices, placing an array or a
ShapeDtypeStruct on a mesh, and a sharding's HLO and PartitionSpec text."""
from __future__ import annotations

import math
from typing import Any

import jax
import numpy as np

from jaxlint.jaxapi.tracers import is_tracer


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


def context_mesh() -> Any:
    """The mesh a module set for the thread with ``jax.sharding.set_mesh`` (JAX >= 0.6), else None."""
    get_mesh = getattr(jax.sharding, "get_mesh", None)
    return get_mesh() if get_mesh is not None else None


def mesh_setter() -> Any:
    """``jax.sharding.set_mesh`` (a context manager, JAX >= 0.6), or None before it."""
    return getattr(jax.sharding, "set_mesh", None)
