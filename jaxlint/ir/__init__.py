"""The IR rules read: a jaxpr with source locations, call-like equations inlined, control flow
kept as regions. Plain Python, importable without JAX, so rules are typed against it; the worker
builds it from a traced ClosedJaxpr (jaxlint.ir.build). ``aval`` and ``params`` hold JAX objects.

Every op knows the user's file:line:col (innermost user frame; when a library jit hides it, the
enclosing call's) and its transform stack.
"""
from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any, Iterator

from jaxlint.model import Span

# Scope names jaxlint's own instrumentation puts on identity markers (jaxlint.worker.instrument).
MARKER_PREFIX = "jaxlint_mark_"


@dataclass(frozen=True)
class Location:
    path: str
    span: Span


class Value:
    """One SSA value: a jaxpr variable, literal or constant, after inlining."""

    __slots__ = ("aval", "producer", "uses", "literal", "const", "region_input")

    def __init__(self, aval: Any, literal: Any = None, const: bool = False) -> None:
        self.aval = aval
        self.producer: Op | None = None
        self.uses: list[Op] = []
        self.literal = literal  # the Python/NumPy value of a jaxpr Literal, else None
        self.const = const  # a closed-over constant
        self.region_input: Region | None = None

    @property
    def shape(self) -> tuple:
        return tuple(getattr(self.aval, "shape", ()))

    @property
    def dtype(self) -> Any:
        return getattr(self.aval, "dtype", None)

    def __repr__(self) -> str:
        return f"Value({self.aval})"


@dataclass(eq=False)
class Op:
    primitive: str
    params: dict[str, Any]
    inputs: list[Value]
    outputs: list[Value]
    location: Location | None
    transforms: tuple[str, ...]  # outermost first, e.g. ("jvp", "vmap")
    scopes: tuple[str, ...]
    under_jit: bool
    region: Region | None = None  # the region this op belongs to
    regions: list[Region] = field(default_factory=list)  # bodies of control flow ops

    def __repr__(self) -> str:
        return f"Op({self.primitive} @ {self.location})"


@dataclass(eq=False)
class Region:
    name: str
    inputs: list[Value]
    outputs: list[Value] = field(default_factory=list)
    ops: list[Op] = field(default_factory=list)
    parent: Op | None = None


@dataclass(eq=False)
class Program:
    top: Region
    markers: dict[str, list[Value]] = field(default_factory=dict)

    def walk(self) -> Iterator[Op]:
        """Every op, nested regions included, in program order."""
        stack = [iter(self.top.ops)]
        while stack:
            op = next(stack[-1], None)
            if op is None:
                stack.pop()
                continue
            yield op
            for region in reversed(op.regions):
                stack.append(iter(region.ops))
