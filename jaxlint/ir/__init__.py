"""The IR rules read: a jaxpr with source locations, call-like equations inlined, control flow
kept as regions. Plain Python, importable without JAX, so rules are typed against it; the worker
builds it from a traced ClosedJaxpr (jaxlint.ir.build). ``aval`` and ``params`` hold JAX objects.

Every op knows the user's file:line:col (innermost user frame; when a library jit hides it, the
enclosing call's) and its transform stack; ``Program.call_stack`` gives the user frames that
led to it (a traced function's call of a helper in another file, then the helper's line).
"""
from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any, Callable, Iterator

from jaxlint.chips import CPU, Target
from jaxlint.ir.primitives import SHARDING_OPS
from jaxlint.model import Span

# Scope names jaxlint's own instrumentation puts on identity markers (jaxlint.worker.instrument).
MARKER_PREFIX = "jaxlint_mark_"


@dataclass(frozen=True)
class Location:
    path: str
    span: Span


class Value:
    """One SSA value: a jaxpr variable, literal or constant, after inlining."""

    __slots__ = ("aval", "producer", "uses", "literal", "const", "array", "region_input", "placement")

    def __init__(self, aval: Any, literal: Any = None, const: bool = False) -> None:
        self.aval = aval
        self.producer: Op | None = None
        self.uses: list[Op] = []
        self.literal = literal  # the Python/NumPy value of a jaxpr Literal, else None
        self.const = const  # a closed-over constant
        # A closed-over constant's array (None: not known). Not a copy: the traced ClosedJaxpr
        # holds the same object.
        self.array: Any = None
        self.region_input: Region | None = None
        # The NamedSharding a jit's in_shardings gives this value (an Auto mesh's types say none).
        self.placement: Any = None

    @property
    def shape(self) -> tuple:
        return tuple(getattr(self.aval, "shape", ()))

    @property
    def dtype(self) -> Any:
        return getattr(self.aval, "dtype", None)

    @property
    def weak(self) -> bool:
        """Weakly typed: a Python scalar's type, which takes the dtype of what it meets."""
        return bool(getattr(self.aval, "weak_type", False))

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
    # JAX's source info behind ``location`` (opaque here): Program.call_stack reads it on demand.
    source_info: Any = field(default=None, repr=False)
    # Inlined from the body of a custom_jvp/custom_vjp function: its gradient is the user's rule.
    custom_derivative: bool = False
    # JAX's source infos of the call (jit, custom_jvp, ...) and control-flow equations this op sits
    # in, outermost first: where each was called, when the op's own traceback stops inside a body
    # JAX traced once and reused (a custom_jvp function's body has no caller frames).
    enclosing: tuple[Any, ...] = field(default=(), repr=False)

    def under(self, transform: str) -> bool:
        """Whether ``transform`` (``"vmap"``, ``"jvp"``, ...) applies to this op."""
        return any(t.startswith(transform) for t in self.transforms)

    def __repr__(self) -> str:
        return f"Op({self.primitive} @ {self.location})"


@dataclass(eq=False)
class Region:
    name: str
    inputs: list[Value]
    outputs: list[Value] = field(default_factory=list)
    ops: list[Op] = field(default_factory=list)
    parent: Op | None = None


def loop_body(loop: Op) -> tuple[Region, int, int] | None:
    """A scan's or while's body, how many of its inputs are loop constants, and where those sit
    among the loop's operands (a while's cond constants come first); None for any other op."""
    names = {r.name: r for r in loop.regions}
    if loop.primitive == "scan" and "jaxpr" in names:
        return names["jaxpr"], int(loop.params["num_consts"]), 0
    if loop.primitive == "while" and "body_jaxpr" in names:
        return names["body_jaxpr"], int(loop.params["body_nconsts"]), int(loop.params["cond_nconsts"])
    return None


def aval_text(value: Value) -> str:
    """A value's type as jaxprs print it: ``f32[200,64,256]``; with the mesh axes a dimension is
    sharded over where its type (Explicit axes) or a jit's in_shardings say: ``f32[512@data,512]``."""
    dtype = getattr(value.dtype, "name", str(value.dtype))
    short = {"float32": "f32", "float64": "f64", "float16": "f16", "bfloat16": "bf16",
             "int32": "i32", "int64": "i64", "complex64": "c64"}.get(dtype, dtype)
    axes = sharded_axes(value)
    dims = [f"{d}@{_axes_text(a)}" if a else str(d) for d, a in zip(value.shape, axes)]
    return f"{short}[{','.join(dims)}]"


def sharded_axes(value: Value) -> tuple[tuple[str, ...], ...]:
    """Per dimension, the mesh axes the value is sharded over (``_sharding``; empty: not sharded,
    and for every dimension of a value nothing places)."""
    spec = getattr(_sharding(value), "spec", None) or ()
    axes = [() if a is None else (a,) if isinstance(a, str) else tuple(a) for a in spec]
    return tuple(axes[:len(value.shape)]) + ((),) * (len(value.shape) - len(axes))


def shards(value: Value) -> int:
    """The pieces the value's sharding splits it into over the mesh (1: whole on every device, or
    nothing says): each device holds 1/shards of it."""
    sizes = dict(getattr(getattr(_sharding(value), "mesh", None), "shape", None) or {})
    count = 1
    for axes in sharded_axes(value):
        for axis in axes:
            count *= int(sizes.get(axis, 1))
    return count


def _sharding(value: Value) -> Any:
    """The sharding that lays the value out: its type's (Explicit axes), else the one a jit's
    in_shardings gives it (``Value.placement``)."""
    typed = getattr(value.aval, "sharding", None)
    if any(axis is not None for axis in getattr(typed, "spec", None) or ()):
        return typed
    return value.placement


def is_sharded(program: Program) -> bool:
    """Whether the program is laid out over a mesh as far as its jaxpr says: a sharding constraint
    or reshard, a type sharded over Explicit axes, or an input a jit's in_shardings shards."""
    return any(v for v in program.top.inputs if shards(v) > 1) or any(
        op.primitive in SHARDING_OPS or any(shards(v) > 1 for v in (*op.inputs, *op.outputs))
        for op in program.walk())


def _axes_text(axes: tuple[str, ...]) -> str:
    return axes[0] if len(axes) == 1 else f"({','.join(axes)})"


def innermost_loop_over(loops: list[Op], line: int) -> Op | None:
    """The innermost of ``loops`` whose body holds an op made on ``line``."""
    found = None
    for op in loops:
        if any(inner.location is not None and inner.location.span.start_line == line
               for region in op.regions for inner in ops_in(region)):
            found = op  # program order: a nested loop comes after the loop around it
    return found


def ops_in(region: Region) -> Iterator[Op]:
    """The ops of ``region`` and of the regions inside it, in program order."""
    for op in region.ops:
        yield op
        for inner in op.regions:
            yield from ops_in(inner)


@dataclass(frozen=True)
class RegionLinks:
    """How values cross into and out of one region of a control-flow op: the operand feeding each
    region input (None: none does), and, for each region output, the op outputs and region inputs
    it becomes (a loop's carry comes back as the next step's input). ``decides``: the region's
    outputs decide which values flow (a while's predicate) rather than being values themselves."""

    operands: list[int | None]
    results: list[tuple[list[int], list[int]]]
    decides: bool = False


def region_links(op: Op, region: Region) -> RegionLinks | None:
    """The links of ``region`` (a body of ``op``): scan, while and cond by their params, any other
    op whose region has the op's arity one to one; None when they are not known."""
    n_in, n_out = len(region.inputs), len(region.outputs)
    if op.primitive == "scan":
        consts, carry = int(op.params["num_consts"]), int(op.params["num_carry"])
        return RegionLinks(list(range(n_in)), [([k], [consts + k] if k < carry else []) for k in range(n_out)])
    if op.primitive == "while":
        cond_n, body_n = int(op.params["cond_nconsts"]), int(op.params["body_nconsts"])
        carry = len(op.inputs) - cond_n - body_n
        if region.name == "cond_jaxpr":
            operands = list(range(cond_n)) + list(range(cond_n + body_n, len(op.inputs)))
            return RegionLinks(operands, [([], []) for _ in range(n_out)], decides=True)
        return RegionLinks(list(range(cond_n, len(op.inputs))),
                           [([k], [body_n + k] if k < carry else []) for k in range(n_out)])
    if op.primitive == "cond":
        return RegionLinks(list(range(1, len(op.inputs))), [([k], []) for k in range(n_out)])
    if n_in == len(op.inputs) and n_out == len(op.outputs):
        return RegionLinks(list(range(n_in)), [([k], []) for k in range(n_out)])
    return None


@dataclass(frozen=True)
class VmapLeaf:
    """One output leaf of one recorded ``jax.vmap`` application (a VmapRecord's ``tag``)."""

    tag: str
    leaf: int

    @property
    def scope(self) -> str:
        """The named scope of the identity marker jaxlint.worker.instrument puts on the leaf."""
        return f"{self.tag}_{self.leaf}"

    @classmethod
    def from_scope(cls, scope: str) -> VmapLeaf:
        tag, _, leaf = scope.rpartition("_")
        return cls(tag, int(leaf))


@dataclass(frozen=True)
class Truncation:
    """A 64-bit dtype the traced code asked for while x64 was off, which JAX replaced by its 32-bit
    counterpart (JAX's "Explicitly requested dtype ... will be truncated" warning, caught while
    tracing by jaxlint.ir.truncations)."""

    requested: str  # "float64", "int64", "uint64", "complex128"
    result: str  # what JAX made of it: "float32", "int32", "uint32", "complex64"
    api: str  # the jnp function that was asked ("zeros", "astype"), "" when JAX does not say
    # The frames outside JAX and jaxlint that were running, innermost first (character columns).
    frames: tuple[Location, ...]


@dataclass(eq=False)
class Program:
    top: Region
    # The values of each marked vmap output leaf (several when the trace inlines the call twice).
    vmap_outputs: dict[VmapLeaf, list[Value]] = field(default_factory=dict)
    # JAX < 0.7: equations of a cached library jit keep the traceback of the first call that
    # traced it, so a location there may be another call's (build.py falls back where it can).
    stale_library_tracebacks: bool = False
    # Source info -> user frames (file, line, col, end line, end col), outermost first (the worker's
    # jaxlint.jaxapi.tracebacks.user_stack): set by the builder, so this module needs no JAX.
    read_stack: Callable[[Any], list[tuple[str, int, int, int, int]]] | None = None
    # The 64-bit dtype requests JAX truncated while this program was traced (none with x64 on).
    truncations: list[Truncation] = field(default_factory=list)
    # Compiles the program and reads the facts of one kind ("donations", "loops": jaxlint.ir.memory)
    # from XLA's optimized module: set by the builder, so this module needs no JAX. Read through
    # ``compiled``, which compiles on a rule's first request only.
    compile: Callable[[str], list[Any]] | None = None
    # Compiles the program as traced and with one forward scan's body checkpointed (its body, a
    # ClosedJaxpr of its params): a jaxlint.ir.memory.Remat or None. Set by the builder; read
    # through ``checkpoint_memory``.
    checkpoint: Callable[[Any], Any] | None = None
    # The chip ``compile`` and ``checkpoint`` compile for (``target``): its label goes in the
    # messages of rules that quote compiled figures ("on TPU v5e").
    target: Target = CPU
    # For a jitted function: the argument path of each top input (``state[0]``) and the result
    # path of each top output (``[0][1]``; ``""`` for a single output); None when unknown.
    input_paths: list[str] | None = None
    output_paths: list[str | None] | None = None
    _stacks: dict[int, tuple[Location, ...]] = field(default_factory=dict, repr=False)
    _memo: dict[str, Any] = field(default_factory=dict, repr=False)

    def memo(self, key: str, compute: Callable[[], Any]) -> Any:
        """A fact a rule derives from the whole program, computed once however many files (so
        rule contexts) the program spans, as ``SourceIndex.memo`` is for a file."""
        if key not in self._memo:
            self._memo[key] = compute()
        return self._memo[key]

    @property
    def target_note(self) -> str:
        """The sentence a message quoting compiled figures ends with on a TPU target ("" on the
        CPU, whose messages stay as they were)."""
        return f" Compiled for {self.target.label}." if self.target.is_tpu else ""

    def compiled(self, kind: str) -> list[Any]:
        """The compiled program's facts of ``kind`` (jaxlint.ir.memory), compiled once per program;
        [] when it does not compile or nothing compiles it (no JAX here)."""
        return self.memo(f"compiled.{kind}", lambda: self.compile(kind) if self.compile is not None else [])

    def checkpoint_memory(self, loop: Op) -> Any:
        """XLA's temporary memory for the program as traced and with the body of ``loop``, a forward
        scan of a gradient, checkpointed (jaxlint.ir.memory.Remat), compiled once per loop; None
        when the program cannot be rebuilt that way or does not compile."""
        return self.memo(f"checkpoint.{id(loop)}",
                         lambda: self.checkpoint(loop.params["jaxpr"]) if self.checkpoint is not None else None)

    def call_stack(self, op: Op) -> tuple[Location, ...]:
        """The user frames that made ``op``, outermost first; the last is ``op.location`` (when
        the equation has no user frame of its own: the enclosing call's frames)."""
        return self.stack_of(op.source_info) or ((op.location,) if op.location is not None else ())

    def stack_of(self, source_info: Any) -> tuple[Location, ...]:
        """The user frames of one equation's source info (``Op.source_info``, ``Op.enclosing``),
        outermost first; () when unknown."""
        if source_info is None or self.read_stack is None:
            return ()
        if id(source_info) not in self._stacks:
            # The source info is kept alive by the ops that hold it, so its id stays its own.
            frames = self.read_stack(source_info)
            self._stacks[id(source_info)] = tuple(Location(path, Span(*where)) for path, *where in frames)
        return self._stacks[id(source_info)]

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


@dataclass
class VmapRecord:
    """One ``jax.vmap(f)(...)`` application seen while tracing (jaxlint.worker.instrument records it):
    what JX101 and its fix read about the vmap call."""

    tag: str
    path: str
    span: Span  # byte columns (co_positions); rules convert with jaxlint.text.char_span
    fun: Any
    in_axes: Any
    out_axes: Any
    options: dict
    args: tuple  # abstract arguments the vmapped function was applied to
    kwargs: dict
    out_treedef: Any
    leaf_paths: list[str]
    leaf_axes: list[Any]  # out axis of each output leaf (None = unbatched already)
    unbatched: list[bool | None] = field(default_factory=list)  # JAX's verdict per leaf

    def marker(self, leaf: int) -> str:
        return VmapLeaf(self.tag, leaf).scope
