"""Plain data passed between pipeline stages (and between processes, as JSON)."""
from __future__ import annotations

from dataclasses import asdict, dataclass, field
from typing import Any, Literal

Severity = Literal["error", "warning", "info"]
Applicability = Literal["safe", "unsafe", "display-only"]


@dataclass(frozen=True)
class Span:
    """A source range: 1-based lines, 0-based columns, end column exclusive (libcst's convention)."""

    start_line: int
    start_col: int
    end_line: int
    end_col: int

    def contains(self, other: Span) -> bool:
        return (self.start_line, self.start_col) <= (other.start_line, other.start_col) and (
            other.end_line,
            other.end_col,
        ) <= (self.end_line, self.end_col)

    def to_json(self) -> list[int]:
        return [self.start_line, self.start_col, self.end_line, self.end_col]

    @classmethod
    def from_json(cls, data: list[int]) -> Span:
        return cls(*data)


@dataclass(frozen=True)
class TransformCall:
    """A call of a JAX transform or control-flow primitive inside a target's body.

    For ``jax.vmap(f)(x)`` there is one TransformCall: ``span`` covers the application
    ``jax.vmap(f)(x)`` and ``transform_span`` the inner ``jax.vmap(f)``.
    """

    kind: str  # "vmap", "scan", "fori_loop", "while_loop", "cond", "jit"
    qualified_name: str  # e.g. "jax.vmap", "jax.lax.scan"
    span: Span
    transform_span: Span


@dataclass
class Target:
    """A function jaxlint traces."""

    name: str  # the function's own name
    qualname: str  # dotted path inside the module, e.g. "Model.apply" or "outer.<locals>.inner"
    kind: str  # "jit-decorated", "jit-bound", "contains-transform"
    span: Span  # the def statement (or, for "jit-bound", the assignment)
    name_span: Span  # the function's (or bound) name, where findings about the whole target point
    first_line: int  # first line of the def including decorators; a hint comment sits above it
    params: list[str] = field(default_factory=list)
    # For "jit-bound": qualname and bound_name are the module-level name of the jitted object.
    bound_name: str | None = None
    static_argnums: tuple[int, ...] = ()
    static_argnames: tuple[str, ...] = ()
    hint: str | None = None  # text after "# jaxlint: args", if a hint comment is present
    hint_span: Span | None = None
    calls: list[TransformCall] = field(default_factory=list)

    def to_json(self) -> dict[str, Any]:
        return asdict(self)

    @classmethod
    def from_json(cls, data: dict[str, Any]) -> Target:
        data = dict(data)
        for key in ("span", "name_span", "hint_span"):
            if data.get(key) is not None:
                data[key] = Span(**data[key])
        data["calls"] = [
            TransformCall(
                kind=c["kind"],
                qualified_name=c["qualified_name"],
                span=Span(**c["span"]),
                transform_span=Span(**c["transform_span"]),
            )
            for c in data.get("calls", [])
        ]
        data["static_argnums"] = tuple(data.get("static_argnums", ()))
        data["static_argnames"] = tuple(data.get("static_argnames", ()))
        return cls(**data)


@dataclass(frozen=True)
class Edit:
    span: Span
    content: str


@dataclass(frozen=True)
class Fix:
    applicability: Applicability
    message: str
    edits: tuple[Edit, ...]


@dataclass(frozen=True)
class Cost:
    """What a performance finding wastes, per call of the traced function.

    ``basis`` says how it was obtained: "shapes" (estimated from the jaxpr's shapes and trip
    counts) or "compiled" (measured by compiling both versions with XLA's cost analysis).
    Unknown quantities are None.
    """

    basis: str
    flops: float | None = None
    bytes: float | None = None
    equations: int | None = None
    compile_seconds: float | None = None
    note: str = ""


@dataclass
class Finding:
    code: str
    name: str
    message: str
    severity: Severity
    path: str  # absolute path
    span: Span
    fix: Fix | None = None
    target: str | None = None  # qualname of the traced target the finding came from
    # Set by the fixer when a fix failed verification, with the reason.
    fix_rejected: str | None = None
    cost: Cost | None = None  # performance findings: the waste, per call

    def key(self) -> tuple:
        return (self.path, self.span.start_line, self.span.start_col, self.code, self.message)

    def to_json(self) -> dict[str, Any]:
        return asdict(self)

    @classmethod
    def from_json(cls, data: dict[str, Any]) -> Finding:
        data = dict(data)
        data["span"] = Span(**data["span"])
        if data.get("cost") is not None:
            data["cost"] = Cost(**data["cost"])
        if data.get("fix") is not None:
            fix = data["fix"]
            data["fix"] = Fix(
                applicability=fix["applicability"],
                message=fix["message"],
                edits=tuple(Edit(span=Span(**e["span"]), content=e["content"]) for e in fix["edits"]),
            )
        return cls(**data)
