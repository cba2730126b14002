"""What a run showed, as plain data: the events JAX reports while the project's code runs under
``pytest --jaxlint`` or ``jaxlint run`` (drivers/runtime.py watches them), which the
run-time rules read (``Rule.check_run``). JAX-free: ``jaxapi/logs.py`` turns each JAX version's
log text into these, and the rules never see JAX.
"""
from __future__ import annotations

from dataclasses import dataclass, field
from typing import Literal

from jaxlint.model import Span

# What JAX's explanation of a tracing-cache miss names: an argument whose type (shape, dtype,
# weak type) changed, a static argument's value, another change of the arguments' pytree, of the
# tracing context (a config or context manager), or nothing it could explain; "sharding": a
# compile with no tracing-cache miss whose logged argument mapping (``jax_log_compiles``) differs
# from the function's last compile (an input placed with another sharding on an Auto mesh).
DifferenceKind = Literal["type", "static", "tree", "context", "unexplained", "sharding"]


@dataclass(frozen=True)
class Difference:
    """One item of JAX's explanation: at ``where`` (an argument, ``x`` or ``params['w']``, or an
    input path), ``before`` and ``now`` as JAX printed them (``f32[8,4]``, ``f32[]{weak_type=True}``,
    a static value), ``text`` the explanation's own line."""

    kind: DifferenceKind
    where: str = ""
    before: str = ""
    now: str = ""
    text: str = ""


@dataclass(frozen=True)
class CacheMiss:
    """One miss of jit's tracing cache at the top level (a trace that is compiled), as
    ``jax_explain_cache_misses`` explains it. ``unseen``: JAX had not seen the function object
    before (its first compile, or a new object); otherwise ``differences`` say what changed
    against the closest earlier call."""

    function: str  # its name, as JAX prints it
    defined_at: str  # "path:line" of its definition ("" when JAX does not say)
    unseen: bool
    differences: tuple[Difference, ...] = ()


@dataclass(frozen=True)
class CallPlace:
    """Where the project's code made a call: the innermost frame in a project file (columns in
    characters, as every Span), the name of its function, and which run of that function it was
    (``invocation``: equal for the calls one run of it made, a loop in it; a later run gets
    another number)."""

    path: str
    span: Span
    function: str = ""
    invocation: int = 0


@dataclass
class Compile:
    """A cache miss and the place of the call that caused it (None: no project frame on the
    stack, e.g. a test that calls the jitted function itself)."""

    miss: CacheMiss
    place: CallPlace | None


@dataclass(frozen=True)
class LoopSite:
    """A ``for`` or ``while`` statement of a project file, as the watched import compiled it:
    its lines (``start_line`` the header's), the first line of the function holding it (its code
    object's ``co_firstlineno``; 1 at a module's top level) and the dotted names of the callables
    its body calls (``step``, ``self.update``)."""

    path: str
    start_line: int
    end_line: int
    function_line: int
    callees: tuple[str, ...] = ()


@dataclass
class LoopRuns:
    """What one scope saw of one loop: its iterations (all its runs added up) and the names of
    the jitted functions its body calls, found in the frame that ran it (empty: none found)."""

    site: LoopSite
    iterations: int = 0
    jitted: tuple[str, ...] = ()


@dataclass
class HostSyncs:
    """The conversions of device arrays to Python values made at one place (the innermost
    project frame) within one loop: on how many of its iterations (several in one iteration, a
    ``jax.device_get`` of a list, count once), and how many of each kind (``float``, ``.item()``)."""

    place: CallPlace
    loop: int  # the key of the loop in ``RunEvents.loops``
    count: int = 0
    kinds: dict[str, int] = field(default_factory=dict)
    last_iteration: int = -1  # the loop's iteration count at the last one counted


@dataclass
class RunEvents:
    """The events of one scope of the run: one test (its node id), the tests' collection, or a
    whole program under ``jaxlint run``. Events of different scopes are never added up."""

    scope: str
    compiles: list[Compile] = field(default_factory=list)
    loops: dict[int, LoopRuns] = field(default_factory=dict)
    syncs: list[HostSyncs] = field(default_factory=list)
