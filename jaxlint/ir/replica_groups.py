"""Which devices a collective of a partitioned HLO module runs over, and which mesh axes those are.

The ids in ``replica_groups`` and ``source_target_pairs`` are logical device ids: positions in the
compiled program's device assignment, which for a ``NamedSharding`` is the mesh's devices in
row-major order. So a group of ids names mesh axes by the coordinates its ids take in the mesh
shape, whatever the physical device ids are. XLA prints groups in three forms:

- explicit: ``{{0,1},{2,3}}`` (``{}``: one group of every device);
- iota: ``[2,4]<=[8]`` or ``[4,2]<=[2,4]T(1,0)``: ``arange(8).reshape(2, 4).transpose(1, 0)``
  reshaped to 4 groups of 2;
- mesh (XLA from JAX 0.9): ``mesh['axis_0'=4,'axis_1'=1,'axis_2'=2] {'axis_0'}``: the ids
  ``arange(8)`` on a mesh of XLA's own axes, one group per value of the axes not listed.
"""
from __future__ import annotations

import itertools
import math
import re

import numpy as np

_IOTA = re.compile(r"^\[(?P<groups>[\d,\s]+)\]<=\[(?P<dims>[\d,\s]+)\](?:T\((?P<perm>[\d,\s]+)\))?$")
_MESH = re.compile(r"^mesh\[(?P<axes>[^\]]*)\]\s*\{(?P<over>[^}]*)\}$")
_MESH_AXIS = re.compile(r"'(?P<name>[^']+)'\s*=\s*(?P<size>\d+)")
_PAIRS = re.compile(r"\{(\d+)\s*,\s*(\d+)\}")


def _numbers(text: str) -> list[int]:
    return [int(n) for n in re.findall(r"\d+", text)]


def device_groups(text: str, devices: int) -> list[list[int]] | None:
    """The groups of logical device ids of a ``replica_groups`` attribute (``devices``: how many
    the program runs on, for the empty form); None for a form this does not read."""
    text = text.strip()
    if text in ("", "{}"):
        return [list(range(devices))]
    if text.startswith("{"):
        groups = [_numbers(inner) for inner in re.findall(r"\{([\d,\s]*)\}", text[1:-1])]
        return groups or None
    match = _IOTA.match(text)
    if match:
        shape, dims = _numbers(match["groups"]), _numbers(match["dims"])
        ids = np.arange(math.prod(dims)).reshape(dims)
        if match["perm"]:
            ids = ids.transpose(_numbers(match["perm"]))
        if len(shape) != 2 or math.prod(shape) != ids.size:
            return None
        return ids.reshape(shape).tolist()
    match = _MESH.match(text)
    if match:
        axes = [(m["name"], int(m["size"])) for m in _MESH_AXIS.finditer(match["axes"])]
        over = set(re.findall(r"'([^']+)'", match["over"]))
        if not axes or not over <= {name for name, _ in axes}:
            return None
        return _groups_over([size for _, size in axes], [i for i, (name, _) in enumerate(axes) if name in over])
    return None


def _groups_over(shape: list[int], varying: list[int]) -> list[list[int]]:
    """Ids ``arange(prod(shape))`` on a mesh of ``shape``: one group per value of the other axes,
    holding the ids that differ only along the ``varying`` axes."""
    ids = np.arange(math.prod(shape)).reshape(shape)
    fixed = [axis for axis in range(len(shape)) if axis not in varying]
    moved = ids.transpose(fixed + list(varying))
    return moved.reshape(-1, math.prod(shape[axis] for axis in varying) if varying else 1).tolist()


def mesh_axes_of_groups(groups: list[list[int]], shape: tuple[int, ...], names: tuple[str, ...]) -> list[str] | None:
    """The mesh axes (names, in mesh order) whose devices the groups are: every group the ids that
    differ along those axes only. None when no set of axes gives these groups."""
    wanted = {frozenset(group) for group in groups}
    size = math.prod(shape)
    if any(i >= size for group in wanted for i in group):
        return None
    axes = [i for i in range(len(shape)) if shape[i] > 1]
    for count in range(0, len(axes) + 1):
        for chosen in itertools.combinations(axes, count):
            made = {frozenset(group) for group in _groups_over(list(shape), list(chosen))}
            if made == wanted:
                return [names[i] for i in chosen]
    return None


def mesh_axes_of_pairs(text: str, shape: tuple[int, ...], names: tuple[str, ...]) -> list[str] | None:
    """The mesh axes along which a collective-permute's ``source_target_pairs`` move data: the axes
    whose coordinate differs between a source and its target (None: ids outside the mesh)."""
    size = math.prod(shape)
    pairs = [(int(a), int(b)) for a, b in _PAIRS.findall(text)]
    if not pairs or any(a >= size or b >= size for a, b in pairs):
        return None
    moved: set[int] = set()
    for source, target in pairs:
        a, b = np.unravel_index(source, shape), np.unravel_index(target, shape)
        moved |= {axis for axis in range(len(shape)) if a[axis] != b[axis]}
    return [names[axis] for axis in sorted(moved)]
