"""Plain data shared by both processes and passed between pipeline stages (as JSON between
processes): spans, targets, findings and their fixes, and the Job and Result of a worker."""
from __future__ import annotations

from dataclasses import asdict, dataclass, field
from typing import Any, Iterable, Literal

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
    # "jit-decorated", "jit-bound", "contains-transform", "hinted" (a plain function with a hint),
    # "inferred" (a plain JAX function traced only with inferred arguments), "annotated" (jaxtyping
    # array annotations), "example" (an examples-file registration), "recorded" (a plain JAX
    # function with a signature `jaxlint record` saved), "closure" (a JAX function a module-level
    # factory returns: the worker calls the factory to get it, worker/closures.py)
    kind: str
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


@dataclass(frozen=True)
class Finding:
    """One problem at one place. Frozen: a rule gives everything, its cost included, when it makes
    the finding (``Rule.finding``); a later stage that changes one (the fixer's verdict, a path
    resolved, a demoted fix) makes a new one with ``dataclasses.replace`` and puts it where the old
    one was."""

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
    arguments: str | None = None  # "inferred": seen only with arguments jaxlint guessed
    # Found by a watched session (engine/store.py), not this run: "test run", and the first test
    # that reached the traced function.
    origin: str | None = None
    test: str | None = None

    @property
    def place(self) -> tuple[str, int, int, str]:
        """Where it is reported: one finding per place (the first seen) is shown, whatever the
        signature or target that produced it (their messages differ only by sizes)."""
        return (self.path, self.span.start_line, self.span.start_col, self.code)

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


def one_per_place(findings: Iterable[Finding]) -> list[Finding]:
    """The first finding at each place (``Finding.place``), in order; one seen with real arguments
    (a caller's trace, a test's) stands over one seen only with inferred ones, whose message and
    fix rest on a guess. The one writing of this rule: settle applies it to what a user sees (the
    worker and the plugin keep every signature's finding for it), the rule runner to one rule's
    pass, the test-run store to what an entry holds, the fixer to the findings it carries."""
    unique: dict[tuple, Finding] = {}
    for finding in findings:
        first = unique.setdefault(finding.place, finding)
        if first.arguments == "inferred" and finding.arguments != "inferred":
            unique[finding.place] = finding
    return list(unique.values())


@dataclass(frozen=True)
class Option:
    """A rule option users set in ``[tool.jaxlint.rules.<CODE>]``, e.g. ``min-equations = 200``."""

    type: type  # int, float, bool or str; an int is accepted where a float is expected
    default: Any
    description: str  # one line, shown by --show-settings and in errors
    minimum: float | None = None  # numbers only


# ---------------------------------------------------------------------------------------------
# Across the process boundary: one Job per module goes to a worker, one Result comes back.


@dataclass
class Settings:
    """What the worker and the rules need of the configuration (``Config.settings()``)."""

    root: str = ""  # the configuration's folder ("" outside a ``jaxlint check`` run)
    examples: list[str] = field(default_factory=list)  # examples files, absolute
    signatures: str = ""  # the signatures file `jaxlint record` writes, absolute
    rule_options: dict[str, dict[str, Any]] = field(default_factory=dict)  # code -> option -> value
    infer_arguments: bool = True  # `infer-arguments`: guess signatures when no source knows one
    devices: int | None = None  # `devices`: the worker's CPU devices (None: from literal mesh shapes)
    target: str = "cpu"  # `target`: the chip every compile is for (jaxlint.chips; ir/target_devices.py)


@dataclass
class Job:
    """Analyze one module in a worker: import it, run the source rules, trace the targets."""

    path: str  # absolute
    module: str  # its dotted name from ``root``
    root: str  # the project folder: its modules are forgotten after the analysis
    source: str  # the text analyzed (``override`` when set)
    targets: list[Target]
    codes: list[str]  # the selected rules
    settings: Settings = field(default_factory=Settings)
    override: str | None = None  # a fixed source to import instead of the file's (fix verification)
    compile_costs: bool = False  # --cost compiled: compile each traced target, report XLA's figures
    # A job kind other than check: "module:function" the worker imports and calls after tracing,
    # with (job, traced) -> JSON-able data for Result.kind_data (jaxlint explain registers its own).
    kind: str | None = None
    kind_options: dict[str, Any] = field(default_factory=dict)
    # Fix verification: run these targets on generated inputs after tracing (worker/values.py).
    run_values: list[str] = field(default_factory=list)
    # ... and these of them once more on wide inputs (a numerics fix is verified there).
    wide_values: list[str] = field(default_factory=list)
    # How the module is imported (engine/imports.py): None for a file that is neither a test
    # module nor a conftest, whose ``root`` alone goes in front of sys.path.
    sys_path: list[str] | None = None  # put in front of sys.path, in this order
    sys_path_appended: list[str] = field(default_factory=list)
    packages_from_files: bool = False  # pytest's importlib mode: parents imported by path
    # The CPU devices the worker starts with (``devices``, else the module's largest literal mesh);
    # None: JAX's default. Workers of different counts are never shared (engine/pool.py).
    devices: int | None = None
    # The first lines of the functions a current test-run entry linted: with real arguments, so a
    # nested one among them is not built from its code with guessed ones (worker/nested_code.py).
    settled: list[int] = field(default_factory=list)
    # Targets an earlier run of this job ran away in (its worker timed out or died there, engine/jobs.py):
    # qualname -> [skip kind, why]; the worker skips them, so that the module's other functions are analyzed.
    runaway: dict[str, list[str]] = field(default_factory=dict)
    # The file's lines where a trace with guessed arguments of such a target was stuck: a later guess
    # that calls the function holding one is stopped there (worker/guards.py).
    runaway_lines: list[int] = field(default_factory=list)

    def to_json(self) -> dict[str, Any]:
        return asdict(self)

    @classmethod
    def from_json(cls, data: dict[str, Any]) -> Job:
        data = dict(data)
        data["targets"] = [Target.from_json(t) for t in data["targets"]]
        data["settings"] = Settings(**data["settings"])
        return cls(**data)


# Why a target was not traced.
SkipKind = Literal["no-arguments", "invalid-hint", "trace-error", "not-traceable", "not-found",
                   "import-failed", "dependency-missing", "timeout", "crash", "factory-failed",
                   "nested-not-built", "runaway"]


@dataclass
class Skipped:
    target: str  # qualname
    kind: SkipKind
    reason: str
    line: int  # of the target's name


@dataclass
class Traced:
    target: str  # qualname
    source: str  # the argument source of the first signature (hint, examples, recorded, ...)
    signature: str  # the first signature, e.g. "x=f32[3]"
    signatures: list[str]
    notes: list[str] = field(default_factory=list)
    failed_signatures: int = 0  # signatures that raised: their code paths went unchecked (JX800)
    lines: list[int] = field(default_factory=list)  # suppression comments' lines that made equations
    # Per signature, the positions of its weakly typed inputs (a Python scalar's type), which the
    # signature's text does not show: the fixer compares them (a cast of a start value changes them).
    weak_inputs: list[list[int]] = field(default_factory=list)


# Result.ran's names when every function of a file counts as run: the worker traced something,
# and a trace runs code unrecorded (only comments, blank lines and positions may then change).
RAN_ALL = "*"


@dataclass
class Result:
    """What the worker found in one module."""

    path: str
    findings: list[Finding] = field(default_factory=list)
    traced: list[Traced] = field(default_factory=list)
    skipped: list[Skipped] = field(default_factory=list)
    outputs: dict[str, list[list[str]]] = field(default_factory=dict)  # qualname -> per signature avals
    timings: dict[str, float] = field(default_factory=dict)
    compiled: dict[str, list[Any]] = field(default_factory=dict)  # --cost compiled: XLA's figures
    kind_data: Any = None  # what the job kind's hook returned (Job.kind)
    # First lines of the module's JAX functions (scan/functions.py) whose operations the rules read.
    linted: list[int] = field(default_factory=list)
    # The same for the project's other files whose helpers the module's targets called (path -> lines).
    linted_elsewhere: dict[str, list[int]] = field(default_factory=dict)
    internal_error: str | None = None  # jaxlint's own traceback, when the analysis itself failed
    # Targets whose jaxpr has effects beyond debug printing (callbacks into Python): a fix in them
    # cannot be checked by running them.
    effectful: list[str] = field(default_factory=list)
    # Job.run_values: qualname -> per traced signature, per seed, the outputs (worker/values.py).
    values: dict[str, list[list[Any]]] = field(default_factory=dict)
    # Files besides the module the analysis read (the project's modules it imported, the examples
    # files that registered its functions): path -> sha256, for the result cache (engine/cache.py).
    inputs: dict[str, str] = field(default_factory=dict)
    # Of those files, the functions that ran (qualified names), when the analysis traced nothing
    # and so knows every one: an edit of any other function's body leaves the result as it is
    # (engine/ran_code.py). [RAN_ALL] when every function counts as run.
    ran: dict[str, list[str]] = field(default_factory=dict)
    # Why the module was not imported when a package outside the project is missing where jaxlint
    # runs ("optional dependency missing: sklearn"): a coverage entry, not a JX901 finding.
    missing_dependency: str | None = None
    # Why some programs were not compiled for the target (a mesh larger than its slice): their
    # compiled figures are missing, which the summary says (ir/target_devices.take_refusals).
    not_compiled: list[str] = field(default_factory=list)
    # Findings left out: their bad point lies among the fields of an instance jaxlint built, alone
    # (analysis/instance_points.py); --show-untraced lists them.
    left_out: list[Finding] = field(default_factory=list)
    # A guess ran past its time limit (worker/guards.guess_limit): what was linted depends on the
    # machine's load, so the result cache never keeps it (engine/cache.py).
    load_dependent: bool = False

    def to_json(self) -> dict[str, Any]:
        return asdict(self)

    @classmethod
    def from_json(cls, data: dict[str, Any]) -> Result:
        data = dict(data)
        data["findings"] = [Finding.from_json(f) for f in data.get("findings", [])]
        data["left_out"] = [Finding.from_json(f) for f in data.get("left_out", [])]
        data["traced"] = [Traced(**t) for t in data.get("traced", [])]
        data["skipped"] = [Skipped(**s) for s in data.get("skipped", [])]
        return cls(**data)
