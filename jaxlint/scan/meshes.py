"""Mesh shapes a module writes as literals: ``jax.make_mesh((4, 2), ...)``,
``mesh_utils.create_device_mesh((4, 2))``, ``Mesh(np.array(jax.devices()).reshape(4, 2), ...)``.

When the ``devices`` setting is unset, the worker of such a module starts with as many CPU devices
as its largest literal mesh has (the product of its shape), so a mesh built at import works; and
an import that fails on a mesh larger than the worker's devices says so. Calls are matched by
their last name (``make_mesh``, ``create_device_mesh``, ``Mesh``); a shape with any dimension
that is not a whole-number literal is not read.
"""
from __future__ import annotations

import ast
import math
import re
from dataclasses import dataclass

_SHAPE_CALLS = frozenset({"make_mesh", "create_device_mesh"})  # the shape is the first argument
_SHAPE_KEYWORDS = frozenset({"axis_shapes", "mesh_shape"})
_MAY_HAVE_MESH = re.compile(r"\b(?:make_mesh|create_device_mesh|Mesh)\b")


@dataclass(frozen=True)
class MeshLiteral:
    line: int  # of the call that makes the mesh
    shape: tuple[int, ...]
    end_line: int = 0  # the call's last line (0: ``line``)

    @property
    def size(self) -> int:
        """The devices the mesh takes."""
        return math.prod(self.shape)

    def covers(self, line: int) -> bool:
        """Whether ``line`` is one of the call's (an error raised in it points there)."""
        return self.line <= line <= max(self.line, self.end_line)


def literal_meshes(tree: ast.AST) -> list[MeshLiteral]:
    """Every mesh whose shape is written as whole-number literals, in source order."""
    found = []
    for node in ast.walk(tree):
        if isinstance(node, ast.Call):
            shape = _mesh_shape(node)
            if shape is not None:
                found.append(MeshLiteral(node.lineno, shape, node.end_lineno or node.lineno))
    return sorted(found, key=lambda mesh: mesh.line)


def literal_meshes_in(text: str) -> list[MeshLiteral]:
    """``literal_meshes`` of a module's text; none when it cannot have one or does not parse."""
    # The substring tests first: a warm check asks of every module, and a pattern that begins
    # with \b is tried at every position of the text.
    if ("mesh" not in text and "Mesh" not in text) or not _MAY_HAVE_MESH.search(text):
        return []
    try:
        return literal_meshes(ast.parse(text))
    except (SyntaxError, ValueError, RecursionError, MemoryError):
        return []


def largest(meshes: list[MeshLiteral]) -> MeshLiteral | None:
    """The mesh with the most devices (the first of equals); None without one of more than one."""
    best = max(meshes, key=lambda mesh: mesh.size, default=None)
    return best if best is not None and best.size > 1 else None


def _mesh_shape(call: ast.Call) -> tuple[int, ...] | None:
    name = _called_name(call.func)
    if name in _SHAPE_CALLS:
        argument = call.args[0] if call.args else next(
            (k.value for k in call.keywords if k.arg in _SHAPE_KEYWORDS), None)
        return _literal_shape(argument)
    if name == "Mesh":
        devices = call.args[0] if call.args else next((k.value for k in call.keywords if k.arg == "devices"), None)
        # Mesh(<array>.reshape(4, 2), ...): the shape a device array is given
        if isinstance(devices, ast.Call) and isinstance(devices.func, ast.Attribute) and devices.func.attr == "reshape":
            if len(devices.args) == 1:
                return _literal_shape(devices.args[0])
            return _literal_shape(ast.Tuple(elts=list(devices.args)))
    return None


def _called_name(func: ast.expr) -> str | None:
    if isinstance(func, ast.Name):
        return func.id
    if isinstance(func, ast.Attribute):
        return func.attr
    return None


def _literal_shape(node: ast.expr | None) -> tuple[int, ...] | None:
    if isinstance(node, (ast.Tuple, ast.List)) and node.elts:
        dims = [_whole(element) for element in node.elts]
        return None if any(d is None for d in dims) else tuple(dims)  # type: ignore[misc]
    dim = _whole(node)
    return None if dim is None else (dim,)


def _whole(node: ast.expr | None) -> int | None:
    if isinstance(node, ast.Constant) and type(node.value) is int and node.value >= 1:
        return node.value
    return None
