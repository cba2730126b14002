"""What a rule is: metadata next to its checks (Fixit's shape, ruff's fields), and the contexts
the checks receive. A rule gets everything through its context and imports nothing from the
cli, config, engine or worker packages:

- ``check_source(ctx: SourceContext)`` runs once per file, whether or not anything in it traced
  (in the worker after the module's import when the file has targets, else in the parent);
- ``check_program(ctx: ProgramContext)`` runs once per traced signature of each target, over the
  IR (jaxlint.ir) of its jaxpr: with ``ctx.path`` the target's file, then once more for each other
  project file whose helpers added operations to the jaxpr (``ctx.path`` that file), so a problem
  inside a helper is reported where the user can fix it. Rules that read the target's own source
  (its decorator, its transform calls) declare ``reads_helpers = False``;
- ``check_run(ctx: RunContext)`` runs once per scope of a run under ``pytest --jaxlint`` or
  ``jaxlint run`` (a test, or the whole program) over the events JAX reported while it ran
  (jaxlint.events: the compiles, with the project's call that caused each).
"""
from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any, Callable, ClassVar, Iterable, Iterator, Mapping, Protocol, Sequence

from jaxlint.events import RunEvents
from jaxlint.ir import Op, Program, Value, VmapRecord
from jaxlint.model import Applicability, Cost, Finding, Fix, Option, Settings, Severity, Span, Target
from jaxlint.scan.index import SourceIndex
from jaxlint.text import char_span

# ``Retracer.trace`` override that makes a parameter a traced weakly typed f32[] input.
TRACED_SCALAR = "<traced f32[] (weak)>"


@dataclass
class Retraced:
    """A variant of a target's trace: its IR, and the IR input each traced override became."""

    program: Program
    inputs: dict[str, int]  # parameter -> index in program.top.inputs


class RetraceError(Exception):
    """The variant could not be traced; ``tracing_error``: JAX refused a tracer (the parameter
    decides Python control flow or a shape), as opposed to anything else going wrong."""

    def __init__(self, message: str, tracing_error: bool = False) -> None:
        super().__init__(message)
        self.tracing_error = tracing_error


class Retracer(Protocol):
    """Traces variants of the file's jitted functions, with the arguments jaxlint knows for them
    (hint comment, else recorded signatures). Only in the worker, with the module imported."""

    def argument(self, target: Target, param: str) -> Any:
        """The known value of ``param`` (None when no arguments are known); raises RetraceError."""

    def trace(self, target: Target, overrides: Mapping[str, Any]) -> Retraced:
        """The Python function behind ``target`` traced with ``overrides`` replacing known arguments
        (``TRACED_SCALAR`` makes one a traced input); raises RetraceError."""

    def recorded(self, target: Target) -> list[dict[str, str]]:
        """The signatures ``jaxlint record`` saved for ``target`` (parameter -> hint text), if any."""


@dataclass
class SourceContext:
    """What a rule sees of one file."""

    path: str
    source: str
    index: SourceIndex
    settings: Settings = field(default_factory=Settings)
    retrace: Retracer | None = None  # None outside the worker or when the import failed

    def option(self, rule: type[Rule], name: str) -> Any:
        """The configured value of one of ``rule``'s declared options, else its default."""
        return self.settings.rule_options.get(rule.code, {}).get(name, rule.options[name].default)

    def finding(self, rule: type[Rule], message: str, span: Span, fix: Fix | None = None, *,
                cost: Cost | None = None) -> Finding:
        return rule.finding(self.path, span, message, fix, cost=cost)


@dataclass
class ProgramContext(SourceContext):
    """What a rule sees for one traced signature of one target, in one file: the target's own
    (``in_target_file``) or a project file holding helpers the target called."""

    target: Target = field(default=None)  # type: ignore[assignment]
    program: Program = field(default=None)  # type: ignore[assignment]
    signature: str = ""  # the abstract arguments, e.g. "x=i32[] (weak), y=i32[10]"
    vmap_records: Mapping[str, VmapRecord] = field(default_factory=dict)  # marker tag -> record
    target_path: str = ""  # the target's file ("": ``path``)
    # Which other files are the project's: their helpers' problems are reported there, by the
    # context of that file (None: no file but the target's).
    project: Callable[[str], bool] | None = None
    # The tests called the target under jax.grad, jvp or vjp (pytest --jaxlint sees the tracers);
    # its own trace, made on plain abstract arguments, does not show the derivative.
    differentiated: bool = False
    # The source index of another project file the program went through (None: not one, unreadable).
    sources: Callable[[str], SourceIndex | None] | None = None
    # The bad points the findings name, per place (``finding``'s ``points``, one tuple per finding
    # made there): shared by the contexts of one program, read by analysis/instance_points.py.
    points: dict[tuple, list[tuple[Value, ...]]] = field(default_factory=dict)

    def ops_here(self, *primitives: str) -> Iterator[Op]:
        """The program's ops of ``primitives`` (every op when none is named) whose location is in
        this context's file, in program order."""
        for op in self.program.walk():
            if (not primitives or op.primitive in primitives) and op.location is not None \
                    and op.location.path == self.path:
                yield op

    def calls_of(self, kinds: frozenset[str], wanted: set[Span]) -> dict[Span, str]:
        """Span -> kind of the transform calls of ``kinds`` (``"cond"``, ``"while_loop"``, ...) in
        the file: the target's own first; when some of ``wanted`` are not among them (the usual
        ``jax.vmap(step)`` with the cond inside ``step``, a helper of the same file), every
        transform call of the file."""
        found = {c.span: c.kind for c in self.target.calls if c.kind in kinds} if self.in_target_file else {}
        if not wanted <= set(found):
            found.update((c.span, c.kind) for c in self.index.transform_calls if c.kind in kinds)
        return found

    def index_of(self, path: str) -> SourceIndex | None:
        """The source index of ``path``: this context's file, the target's or another project file
        (a rule that places a finding in a caller's file reads the caller's source through it)."""
        if path == self.path:
            return self.index
        return self.sources(path) if self.sources is not None else None

    @property
    def in_target_file(self) -> bool:
        return not self.target_path or self.target_path == self.path

    def reports_in(self, path: str) -> bool:
        """Whether some context of this program reports findings located in ``path``."""
        return path in (self.path, self.target_path) or (self.project is not None and self.project(path))

    @property
    def fallback_span(self) -> Span | None:
        """Where a finding with no location in ``path`` points: the target's name, in its own file."""
        return self.target.name_span if self.in_target_file else None

    def finding(self, rule: type[Rule], message: str, span: Span, fix: Fix | None = None, *,
                cost: Cost | None = None, points: Sequence[Value] = ()) -> Finding:
        """``points``: the values whose bad point the finding names where the rule derived that
        point from the arithmetic (JX501's clamped operand), not from a test the program makes:
        a point among the fields of an instance jaxlint built, alone, is one the class may never
        hold, and such a finding is left out (analysis/instance_points.py)."""
        made = rule.finding(self.path, span, message, fix, self.target.qualname, cost=cost)
        self.points.setdefault(made.place, []).append(tuple(points))
        return made


@dataclass
class RunContext:
    """What a run-time rule sees of one scope of a run: its events, and the rule options."""

    events: RunEvents
    settings: Settings = field(default_factory=Settings)

    def option(self, rule: type[Rule], name: str) -> Any:
        """The configured value of one of ``rule``'s declared options, else its default."""
        return self.settings.rule_options.get(rule.code, {}).get(name, rule.options[name].default)


class Rule:
    code: ClassVar[str]
    name: ClassVar[str]  # kebab-case
    summary: ClassVar[str]
    severity: ClassVar[Severity]
    # The applicability of the fixes the rule offers (None: it offers none); docs and JSON show it.
    fix: ClassVar[Applicability | None] = None
    # The fixes replace an expression that overflows or loses precision by JAX's stable function
    # (the numerics rules): the fixer accepts new values where the original's were not finite.
    stabilizing_fix: ClassVar[bool] = False
    # The fixes change what a call passes to the traced function, outside it (JX206's cast start):
    # the fixer takes them as proven only if the fixed file traces the function with other arguments.
    fixes_calls: ClassVar[bool] = False
    # Analysis-failure codes (JX9xx) are reported by the pipeline itself and have no check.
    by_pipeline: ClassVar[bool] = False
    # Kebab-case option name -> declaration; read them with ``ctx.option(cls, name)``.
    options: ClassVar[dict[str, Option]] = {}
    # Whether check_program also runs on the files of the helpers a target called (see above).
    reads_helpers: ClassVar[bool] = True
    # The run-time events check_run reads ("compiles", "syncs"): only those are watched.
    run_events: ClassVar[frozenset[str]] = frozenset()

    @classmethod
    def finding(cls, path: str, span: Span, message: str, fix: Fix | None = None,
                target: str | None = None, *, cost: Cost | None = None) -> Finding:
        """A finding of this rule: the one place a Finding is made (code, name and severity are the
        rule's). ``target``: the qualname of the traced function it came from, if any; ``cost``:
        what a performance finding wastes (a Finding is frozen: it is given here, not after)."""
        return Finding(code=cls.code, name=cls.name, message=message, severity=cls.severity,
                       path=path, span=span, fix=fix, target=target, cost=cost)

    @classmethod
    def check_source(cls, ctx: SourceContext) -> Iterable[Finding]:
        return ()

    @classmethod
    def check_program(cls, ctx: ProgramContext) -> Iterable[Finding]:
        return ()

    @classmethod
    def check_run(cls, ctx: RunContext) -> Iterable[Finding]:
        return ()

    @classmethod
    def explain(cls, ctx: SourceContext, target: Target | None, error: BaseException,
                span: Span) -> list[Finding]:
        """Findings that explain an import or trace failure raised at ``span`` better than the
        generic JX601/JX901 finding (which is then dropped); [] when this rule cannot."""
        return []


def frame_span(source: str, line: int, column: int | None, end_column: int | None) -> Span:
    """Where a compiled program's frame points in ``source``: its columns (UTF-8 bytes) when it has
    them, else the line's code without its indentation."""
    lines = source.splitlines()
    text = lines[line - 1] if 0 < line <= len(lines) else ""
    if column is not None and end_column is not None and end_column > column:
        return char_span(source, Span(line, column, line, end_column))
    start = len(text) - len(text.lstrip())
    return Span(line, start, line, len(text.rstrip()))


def checks(rules: Sequence[type[Rule]], hook: str) -> list[type[Rule]]:
    """The rules that implement ``hook`` ("check_source", "check_program" or "check_run")."""
    return [r for r in rules if getattr(r, hook).__func__ is not getattr(Rule, hook).__func__]
