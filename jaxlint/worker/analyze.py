"""Worker side, one module: import it with recording on, run the source rules once, trace each
target and run the program rules on every signature; then the job kind's hook, if any."""
from __future__ import annotations

import dataclasses
import hashlib
import importlib
import sys
import time
from functools import cached_property
from types import CodeType
from typing import Any, Callable

import jax

from jaxlint.analysis.program import program_findings
from jaxlint.chips import parse_target
from jaxlint.ir import compile as compile_step
from jaxlint.ir import target_devices
from jaxlint.ir.truncations import TruncationRecorder
from jaxlint.jaxapi import jaxprs
from jaxlint.model import RAN_ALL, Finding, Job, Result, SkipKind, Skipped, Span, Target, Traced, one_per_place
from jaxlint.rules import all_rules
from jaxlint.rules.analysis_failures import InvalidHintRule
from jaxlint.rules.base import SourceContext
from jaxlint.rules.jx601_trace_error import TraceError as TraceErrorRule
from jaxlint.rules.runner import run_source_rules
from jaxlint.scan.functions import JaxFunction, jax_functions
from jaxlint.scan.index import SourceIndex
from jaxlint.scan.meshes import literal_meshes
from jaxlint.worker import dispatch, guards, lifeline, progress
from jaxlint.worker import errors as failures
from jaxlint.worker.argsources import (
    ArgumentError,
    ArgumentRequest,
    ArgumentSet,
    arguments_for,
    made_up_values,
    rank_retry,
    sizes,
)
from jaxlint.worker.argsources.inferred import SOURCE as INFERRED
from jaxlint.worker.argsources.inferred import symbolic_size
from jaxlint.worker.argsources.made_up_callee import made_up_for_callee
from jaxlint.worker.closures import Factories
from jaxlint.worker.dependencies import missing_dependency
from jaxlint.worker.errors import describe_error
from jaxlint.worker.frames import parameter_names
from jaxlint.worker.importer import (
    import_module,
    is_project_file,
    is_project_module,
    keeping_printed,
    program_argv,
    reading_from_source,
)
from jaxlint.worker.inprocess import target_for
from jaxlint.worker.instrument import VMAP_RECORDS, CallRecorder, RanRecorder, VmapRecorder
from jaxlint.worker.nested_code import NESTED_SECONDS, build, for_trace, unrun
from jaxlint.worker.project_sources import ProjectSources
from jaxlint.worker.retrace import ModuleRetracer
from jaxlint.worker.rule_runs import in_rules_only, primal_lines, rule_traces
from jaxlint.worker.trace import (
    NotArrays,
    arrays_only,
    built_inputs,
    code_of,
    compiled_cost,
    concrete_arguments,
    fails_at_any_size,
    format_signature,
    resolve,
    trace_function,
)
from jaxlint.worker.traced_lines import LineOwners, equation_lines, reached_in_files, suppression_lines

# (qualname, the object traced, its arguments) for each traced signature: what a job kind's
# hook and --cost compiled compile.
TracedCall = tuple[str, Any, ArgumentSet]
# The argument sources whose symbolic dimensions jaxlint made up (a hint's are the user's): a trace
# that fails with them is tried again with concrete sizes before anything is reported.
MADE_SYMBOLIC = ("annotations", INFERRED)
NESTED_MARGIN = 5.0  # seconds of the module's limit kept back when nested functions are built


def analyze(job: Job) -> Result:
    """Analyze one module, then forget the project's modules and sys.path changes: the next
    module may come from another folder with its own ``utils.py``."""
    modules, path = set(sys.modules), list(sys.path)
    # A user file named like a module the worker already uses (``types.py``, ``code.py``)
    # replaces it in sys.modules while it is analyzed; put the original back afterwards.
    shadowed = sys.modules.get(job.module)
    # Every compile of this job is for the job's target; a TPU's devices are made now, so a
    # libtpu that refuses fails the job loudly instead of leaving each compile without facts.
    target_devices.use(parse_target(job.settings.target))
    target_devices.devices()
    target_devices.take_refusals()  # a previous job's
    try:
        # The module's code runs during the whole job, not only at import.
        with program_argv(job.path), reading_from_source(job.root) as read:
            analysis = _Analysis(job)
            result = analysis.run()
        result.inputs = _inputs(job, set(sys.modules) - modules, analysis.examples_files, read)
        result.ran = {file: names for file, names in result.ran.items() if file in result.inputs}
        result.not_compiled = target_devices.take_refusals()
        return result
    finally:
        for name in set(sys.modules) - modules:
            if is_project_module(sys.modules.get(name), job.root):
                del sys.modules[name]
        if shadowed is not None:
            sys.modules[job.module] = shadowed
        sys.path[:] = path
        VMAP_RECORDS.clear()  # they hold the module's functions and arguments


def _inputs(job: Job, imported: set[str], examples_files: set[str], read: dict[str, str]) -> dict[str, str]:
    """The files besides the module that its result depends on, with their sha256: the project's
    modules it imported and the examples files that registered its functions (result cache).
    ``read``: the digests of the modules' bytes as compiled (importer.reading_from_source), which
    vouch for what ran where the files now may hold an edit made meanwhile."""
    files = set(examples_files)
    for name in imported:
        module = sys.modules.get(name)
        if is_project_module(module, job.root):
            try:
                file = getattr(module, "__file__", None)
            except Exception:  # a module object of the user's with surprising attributes
                file = None
            files.add(file if isinstance(file, str) else "")
    inputs = {}
    for file in sorted(files - {"", job.path}):
        if file in read:
            inputs[file] = read[file]
            continue
        try:
            with open(file, "rb") as handle:
                inputs[file] = hashlib.sha256(handle.read()).hexdigest()
        except OSError:
            inputs[file] = ""  # never equal to a digest: the entry is always out of date
    return inputs


class _Analysis:
    def __init__(self, job: Job) -> None:
        self.job = job
        self.codes = set(job.codes)
        self.rules = [r for r in all_rules() if r.code in self.codes]
        self.result = Result(job.path, timings={"import": 0.0, "trace": 0.0, "rules": 0.0})
        self.index = SourceIndex(job.path, job.source, job.targets)
        self.traced_calls: list[TracedCall] = []
        self.registrations: dispatch.Registrations | None = None  # read once the first target is found
        # The project's other files the traces go through: their helpers' findings land there.
        self.others = ProjectSources(lambda path: is_project_file(path, job.root),
                                     {job.path: (job.source, self.index)})
        self.line_owners: dict[str, LineOwners] = {}  # path -> its JAX functions by line, built once
        self.linted: set[int] = set()  # result.linted as a set
        self.examples_files: set[str] = set()  # those that registered a function of the module
        # Every function run after the import and the source rules, until something is traced (Result.ran).
        self.ran = RanRecorder()
        self.traced_anything = False
        self.factories = Factories(job.path)  # the factories called for their closures (kind "closure")

    @cached_property
    def jax_functions(self) -> list[JaxFunction]:
        """The file's JAX functions, once something traced (which of them it reached is coverage)."""
        return jax_functions(self.index)

    @property
    def findings(self) -> list[Finding]:
        return self.result.findings

    def run(self) -> Result:
        job, timings = self.job, self.result.timings
        started = time.perf_counter()
        with VmapRecorder({job.path}), CallRecorder({job.path}) as calls, TruncationRecorder() as early:
            try:
                with keeping_printed() as printed:
                    module = import_module(job.module, job.path, job.root, job.override, job.sys_path,
                                           job.sys_path_appended, job.packages_from_files)
            except BaseException as error:  # SystemExit and KeyboardInterrupt included
                timings["import"] = time.perf_counter() - started
                self._import_failed(error, printed.last_line())
                return self.result
        timings["import"] = time.perf_counter() - started
        retracer = ModuleRetracer(module, job.path, job.settings)
        guards.LOAD_DEPENDENT.fired = False
        guards.set_tripwires(job.path, job.runaway_lines)
        try:
            self._analyze_imported(module, retracer, calls, bool(early))
        finally:
            self.ran.stop()
            guards.set_tripwires("", [])
        # A limit of jaxlint's own fired in the user's code (an instance's __init__, an import):
        # what was linted depends on the machine's load, and the result cache does not keep it.
        self.result.load_dependent = self.result.load_dependent or guards.LOAD_DEPENDENT.fired
        self.result.ran = _ran_by_file([*calls.ran.values(), *self.ran.ran.values()],
                                       everything=self.traced_anything or retracer.used)
        return self.result

    def _analyze_imported(self, module: Any, retracer: ModuleRetracer, calls: CallRecorder,
                          truncated_at_import: bool) -> None:
        job, timings = self.job, self.result.timings
        context = SourceContext(job.path, job.source, self.index, job.settings, retracer)
        started = time.perf_counter()
        self.findings.extend(run_source_rules(self.rules, context, self.codes))
        timings["rules"] += time.perf_counter() - started
        # From here on user code may run again (examples, annotations) until the first trace.
        # Not during the source rules: they read the syntax tree (a retrace counts as a trace),
        # and recording their calls doubled their time (optax: 0.7 s to 1.4 s in all).
        self.ran.start()
        recorded = lambda function: calls.calls.get(code_of(function))  # noqa: E731
        compiled_before = compile_step.SPENT["seconds"]
        with VmapRecorder({job.path}):
            # After the import, so the examples files bind the very objects the targets resolve to.
            from jaxlint.worker.argsources.examples import run_examples

            started = time.perf_counter()
            with TruncationRecorder() as examples_truncations:
                registrations, failed = run_examples(job, self.codes)
            self.examples_files = {r.examples_file for r in registrations}
            self.findings.extend(failed)
            timings["examples"] = time.perf_counter() - started
            if truncated_at_import or examples_truncations:
                # JAX warns of a truncation when it traces, not when a cached trace is reused: the
                # import's calls traced the targets already, so trace them afresh (JX508).
                jax.clear_caches()
            for target in job.targets:
                self._target(module, target, recorded, registrations)
            for target, function in self._registered_only(registrations):
                self._target(module, target, recorded, registrations, function)
            if job.settings.infer_arguments:
                self._unrun_nested(module, recorded, registrations)
        # Part of "rules": what the memory rules' compile step took (ir/compile.py).
        timings["memory-compile"] = compile_step.SPENT["seconds"] - compiled_before
        if job.compile_costs:
            started = time.perf_counter()
            # Traces cached while jaxlint's vmap markers were active would compile with them.
            jax.clear_caches()
            for qualname, function, arguments in self.traced_calls:
                self.result.compiled.setdefault(qualname, []).append(compiled_cost(function, arguments))
            timings["compile"] = time.perf_counter() - started
        if job.run_values:  # fix verification: the outputs on generated inputs
            from jaxlint.worker.values import run_values

            started = time.perf_counter()
            self.result.values = run_values(self.traced_calls, job.run_values, job.wide_values)
            timings["values"] = time.perf_counter() - started
        if job.kind is not None:  # another job kind (jaxlint explain): its own hook, by name
            module_name, _, function_name = job.kind.partition(":")
            hook: Callable[[Job, list[TracedCall]], Any] = getattr(importlib.import_module(module_name),
                                                                   function_name)
            self.result.kind_data = hook(job, self.traced_calls)

    def _count_linted(self, closed: Any, target: Target, itself: bool = True) -> None:
        """Record the JAX functions (of this file and the helpers' files) the trace reached;
        ``itself``: the target counts even where none of its own lines made an operation (not so
        for a trace of constants alone: a size-only function that returns Python values)."""
        linted, elsewhere = self.linted, self.result.linted_elsewhere
        if self.job.path not in self.line_owners:
            self.line_owners[self.job.path] = LineOwners(self.jax_functions)
        files = {self.job.path: (self.line_owners[self.job.path], linted)}
        for path, loaded in self.others.loaded.items():
            if loaded is not None and path != self.job.path:
                if path not in self.line_owners:
                    self.line_owners[path] = LineOwners(jax_functions(loaded[1]))
                files[path] = (self.line_owners[path], set(elsewhere.get(path, ())))
        for path, reached in reached_in_files(closed, files).items():
            if path == self.job.path:
                new = sorted(reached | ({target.first_line} - linted if itself else set()))
                self.result.linted += new
                linted.update(new)
            elif reached:
                elsewhere[path] = sorted(set(elsewhere.get(path, ())) | reached)

    def _import_failed(self, error: BaseException, printed: str = "") -> None:
        """``printed``: the last line the module printed (JX901 quotes it when the module exits)."""
        job = self.job
        # The source rules still run: what they find needs no import (no retrace service).
        context = SourceContext(job.path, job.source, self.index, job.settings)
        self.findings.extend(run_source_rules(self.rules, context, self.codes))
        missing = missing_dependency(error, [job.root, job.settings.root])
        if missing is not None:  # not the user's error: where jaxlint runs lacks a package
            self.result.missing_dependency = missing
            for target in job.targets:
                self._skip(target, "dependency-missing", missing)
            return
        tree = self.index.tree
        finding = failures.import_error(error, job.path, literal_meshes(tree) if tree is not None else [],
                                        job.devices, printed)
        explained = self._explained(None, error, finding.span)
        self.findings.extend(explained or ([finding] if finding.code in self.codes else []))
        for target in job.targets:
            self._skip(target, "import-failed", "the module failed to import")

    def _explained(self, target: Target | None, error: BaseException, span: Span) -> list[Finding]:
        """A more specific rule's account of a failure (JX204 for a list as a static argument)."""
        context = SourceContext(self.job.path, self.job.source, self.index, self.job.settings)
        return [finding for rule in self.rules for finding in rule.explain(context, target, error, span)]

    def _skip(self, target: Target, kind: SkipKind, reason: str) -> None:
        self.result.skipped.append(Skipped(target.qualname, kind, reason, target.name_span.start_line))

    def _registered_only(self, registrations: list) -> list[tuple[Target, Any]]:
        """Functions an examples file registers that the scan found no target for (a plain
        function, a closure ``make_step(0.1)`` returned): traced as registered."""
        known = {(target.first_line, target.name) for target in self.job.targets}
        found = []
        for registration in registrations:
            _, first_line, name = registration.key
            if (first_line, name) in known or registration.function is None or registration.call is not None:
                continue
            known.add((first_line, name))
            function = _registered_function(registration)
            code = code_of(function)
            qualname = getattr(code, "co_qualname", name) if code is not None else name
            params = list(parameter_names(code)) if code is not None else []
            target = target_for(self.job.path, self.job.source, name, qualname, first_line, params,
                                self.index.targets)
            found.append((dataclasses.replace(target, kind="example"), function))
        return found

    def _target(self, module: Any, target: Target, recorded: Callable[[Any], Any], registrations: list,
                function: Any = None, outer: tuple[str, ...] = ()) -> None:
        """``_traced_target``, told to the parent as it runs (progress.py); one an earlier run of the
        job ran away in is skipped, as timed out."""
        if target.qualname in self.job.runaway:
            self.result.load_dependent = True  # where it ran away depends on the machine's load
            kind, why = self.job.runaway[target.qualname]
            self._skip(target, kind, why)  # type: ignore[arg-type]
            return
        with progress.analyzing(target.qualname, target.first_line):
            self._traced_target(module, target, recorded, registrations, function, outer)

    def _traced_target(self, module: Any, target: Target, recorded: Callable[[Any], Any], registrations: list,
                       function: Any = None, outer: tuple[str, ...] = ()) -> None:
        """Trace one target with each of its signatures and run the rules on each program: the
        function found, its signatures asked of the argument sources, each traced, then what was
        traced or why nothing was. ``outer``: a nested function's parameters that are its enclosing
        functions' (nested_code.py), shown apart."""
        function = function if function is not None else self._found(module, target, registrations)
        closure = None
        if function is None and target.kind == "closure":  # no examples file registered it: its factory makes it
            closure = self.factories.closure(module, target)
            function = closure.function
        if function is None:
            self._skip(target, *(closure.why if closure else ("not-found", "not found on the module after import")))
            return
        request = ArgumentRequest(target, function, module, self.job.path, self.job.settings, recorded,
                                  registrations, index=self.index)
        try:
            signatures = closure.signatures(request) if closure and not target.hint else arguments_for(request)
        except ArgumentError as error:
            if InvalidHintRule.code in self.codes:
                self.findings.append(InvalidHintRule.finding(self.job.path, target.hint_span or target.name_span,
                                                             f"{error}", target=target.qualname))
            self._skip(target, "invalid-hint", str(error))
            return
        signatures = [for_trace(arguments, function, outer) for arguments in signatures] if outer else signatures
        if not signatures:
            self._skip(target, "no-arguments", "; ".join(request.notes) or "no abstract arguments known")
            return
        # Inferred signatures are a ladder of guesses: the first that traces is kept. One that
        # fails is not the user's error, nor is any failure of a plain function only inference or
        # its annotations made a target (it may be meant to run eagerly, on concrete shapes).
        inferred = signatures[0].source == INFERRED
        runs = _TargetRuns(inferred, inferred or target.kind in ("inferred", "annotated", "recorded", "nested"),
                           suppression_lines(self.job.source))
        self.traced_anything = True  # what runs from here on is not recorded (RanRecorder)
        self.ran.stop()
        retries = rank_retry.Retries(request, symbolic_size()) if inferred else None
        for arguments in signatures:
            outcome = self._rung(function, target, arguments, runs, retries) if retries \
                else self._signature(function, target, arguments, runs)
            if outcome == "not-traceable" or (outcome == "traced" and inferred):
                break
        if outcome != "not-traceable":
            self._concluded(target, request, runs)

    def _rung(self, function: Any, target: Target, arguments: ArgumentSet, runs: _TargetRuns,
              retries: rank_retry.Retries) -> str:
        """One inferred rung, with what earlier retries learned; where it fails with an error that
        names one parameter's rank or float index, traced once more with that raised (rank_retry.py).
        A signature a retry traced already is not traced again: its error is the rung's."""
        arguments, failed = retries.applied(arguments)
        outcome = "failed" if failed is not None else self._signature(function, target, arguments, runs)
        error, runs.error = failed or runs.error, None
        if outcome != "failed" or error is None:
            return outcome
        retries.failed(arguments, error)
        raised = retries.retried(arguments, error)
        if raised is None:
            return outcome
        outcome = self._signature(function, target, raised, runs)
        if outcome == "failed" and runs.error is not None:
            retries.failed(raised, runs.error)
        runs.error = None
        return outcome

    def _unrun_nested(self, module: Any, recorded: Callable[[Any], Any], registrations: list) -> None:
        """The nested JAX functions no trace linted, built from their own code (worker/nested_code.py)
        and traced with guessed arguments, their enclosing functions' parameters among them."""
        # A closure whose factory made nothing is built from its code too.
        targets = [t for t in self.job.targets if not (t.kind == "closure" and self.factories.made_none(t))]
        for function in unrun(self.jax_functions, self.linted | set(self.job.settled), targets):
            if function.first_line in self.linted:
                continue  # a later sibling's trace ran it
            try:
                built = build(module, function, self.index)
            except Exception as error:  # the user's objects (a __getattr__, a __wrapped__ cycle): not built
                self._skip(function.target(), "nested-not-built", f"not built from its code: {describe_error(error)}")
                continue
            left = lifeline.job_time_left()
            if left is not None and left < NESTED_SECONDS + NESTED_MARGIN:
                # The module's limit would discard what its targets found: the rest stay unbuilt.
                self._skip(built.target, "timeout", "not built from its code: the module's time was nearly spent")
                continue
            if built.function is None:
                self._skip(built.target, "nested-not-built", built.why)
                continue
            try:
                with guards.without_side_effects(module), guards.guessed_call_limit(NESTED_SECONDS) as limit:
                    self._target(module, built.target, recorded, registrations, built.function, built.outer)
            except guards.TimeUp:
                if not limit.fired:
                    raise
                self._skip(built.target, "timeout", f"built from its code, it ran past {NESTED_SECONDS:g} s")

    def _found(self, module: Any, target: Target, registrations: list) -> Any:
        """The target's function on the module; a closure (``make.<locals>.step``) has no name
        there, so an examples file's registration of it; None when neither has it."""
        function = resolve(module, target.qualname)
        if function is not None and not isinstance(function, type):  # a singledispatch registration's def
            if self.registrations is None:
                self.registrations = dispatch.Registrations(module, self.job.path)
            registered = self.registrations.function(target)
            # A name a later def rebound: that def is not the target's (not found, unless registered).
            function = registered if registered is not None or dispatch.shadowed(function, target, self.job.path) \
                else function
        if function is None:
            function = next((_registered_function(r) for r in registrations if r.function is not None
                             and r.key[1:] == (target.first_line, target.name)), None)
        return function

    def _signature(self, function: Any, target: Target, arguments: ArgumentSet, runs: _TargetRuns) -> str:
        """Trace ``function`` with one signature and run the rules on its program: "traced",
        "failed" (a trace error, reported unless quiet) or "not-traceable" (a factory: skipped)."""
        job, timings = self.job, self.result.timings
        signature = format_signature(arguments)
        started = time.perf_counter()
        try:
            with TruncationRecorder() as truncations, guards.guess_limit(arguments.source in MADE_SYMBOLIC):
                closed = trace_function(function, arguments)
        except guards.GuessTimeUp as up:  # a guess that ran away: the next one, and the module's other functions
            timings["trace"] += time.perf_counter() - started
            self.result.load_dependent = True
            runs.errors.append(f"{signature}: {up}")
            return "failed"
        except guards.TimeUp:  # an outer limit's (a nested function built from its code): its caller's
            raise
        except NotArrays as error:
            # A factory (returns a function or an optimizer object): not an error in the user's
            # code; its closures are traced as it returns them (worker/closures.py), the other
            # functions it makes where a traced caller uses them. Its own operations, if any,
            # are a program of their own, what it returns left out.
            factory = self._factory_program(function, target, arguments)
            if factory is None:
                timings["trace"] += time.perf_counter() - started
                self._skip(target, "not-traceable", str(error))
                return "not-traceable"
            arguments, closed = factory
        except BaseException as error:  # user code: sys.exit() while traced is a trace error too
            timings["trace"] += time.perf_counter() - started
            grown = made_up_values.grown(arguments, error)  # a callee read an attribute the body did not
            grown = grown if grown is not None else made_up_for_callee(function, arguments, error)  # of a passed array
            if grown is not None:
                return self._signature(function, target, grown, runs)
            symbolic = arguments.source in MADE_SYMBOLIC and not fails_at_any_size(error)
            concrete = concrete_arguments(arguments) if symbolic else None
            if concrete is not None:  # jaxlint's symbols may be what failed (associative_scan): sizes
                outcome = self._signature(function, target, concrete, runs)
                if outcome == "failed":  # with sizes too: the error at sizes was reported (unless quiet)
                    runs.errors.append(f"{signature}: {describe_error(error)}")
                return outcome
            runs.error = error
            if not runs.quiet:
                trace_error = failures.trace_error(error, job.path, target, signature)
                explained = self._explained(target, error, trace_error.span)
                self.findings.extend(explained or ([trace_error] if TraceErrorRule.code in self.codes else []))
            runs.errors.append(f"{signature}: {describe_error(error)}")
            return "failed"
        runs.traced.append((arguments.source, signature, [str(a) for a in closed.out_avals],
                            [i for i, a in enumerate(closed.in_avals) if getattr(a, "weak_type", False)]))
        if jaxprs.side_effects(closed) and target.qualname not in self.result.effectful:
            self.result.effectful.append(target.qualname)
        self.traced_calls.append((target.qualname, function, arguments))
        timings["trace"] += time.perf_counter() - started
        started = time.perf_counter()
        left_out: list[Finding] = []
        found = program_findings(self.rules, self.codes, job.path, job.source, target, closed, signature,
                                 self.index, job.settings, self.others, vmap_records=VMAP_RECORDS,
                                 truncations=truncations, instance_inputs=built_inputs(arguments),
                                 left_out=left_out)
        # A nested function built from its code counts only where its own lines made operations.
        self._count_linted(closed, target, itself=not arguments.constant and target.kind != "nested")
        found += self._rule_runs(function, target, arguments, closed, signature, left_out)
        if arguments.constant or arguments.chosen_sizes:  # its lengths are jaxlint's sizes
            left_out += [finding for finding in found if sizes.judges_chosen_sizes(finding.code)]
            found = [finding for finding in found if not sizes.judges_chosen_sizes(finding.code)]
        self._left_out([_inferred(finding, signature) for finding in left_out])
        if runs.inferred:
            found = [_inferred(finding, signature) for finding in found]
            runs.errors = []  # the first guess that traces is kept: the failed ones were guesses
        # Every signature's findings: the parent's settle step keeps the first at each place.
        self.findings.extend(found)
        if runs.wanted - runs.lines and not runs.inferred:  # JX800 never judges a comment by a guessed signature
            runs.lines |= equation_lines(closed, job.path, runs.wanted - runs.lines)
        timings["rules"] += time.perf_counter() - started
        return "traced"

    def _factory_program(self, function: Any, target: Target, arguments: ArgumentSet) -> tuple[ArgumentSet, Any] | None:
        """(the arguments whose call keeps the arrays it returns, their program) for a factory
        whose own lines made an operation; None for one that only defines and returns functions
        (its closures are what is linted), or where that trace fails."""
        arrays = arrays_only(arguments, function)
        try:
            with guards.guess_limit(arguments.source in MADE_SYMBOLIC):
                closed = trace_function(function, arrays)
        except (guards.TimeUp, KeyboardInterrupt):
            raise
        except guards.GuessTimeUp:
            self.result.load_dependent = True
            return None
        except BaseException:  # the first trace ran the same code: nothing new to report
            return None
        if self.job.path not in self.line_owners:
            self.line_owners[self.job.path] = LineOwners(self.jax_functions)
        reached = reached_in_files(closed, {self.job.path: (self.line_owners[self.job.path], set())})
        return (arrays, closed) if target.first_line in reached[self.job.path] else None

    def _rule_runs(self, function: Any, target: Target, arguments: ArgumentSet, closed: Any, signature: str,
                   left_out: list[Finding]) -> list[Finding]:
        """The findings in the user's differentiation rules, which only a differentiated trace runs
        (worker/rule_runs.py); their lines count linted."""
        found: list[Finding] = []
        started = time.perf_counter()
        try:
            # The rules are the user's code, run on the same guesses: the same limit as the trace.
            with guards.guess_limit(arguments.source in MADE_SYMBOLIC):
                traces = rule_traces(function, arguments, closed, self.others)
            ran = primal_lines(closed) if traces else set()
        except guards.TimeUp:  # an outer limit's: its caller's
            raise
        except guards.GuessTimeUp:  # a rule that runs away: what it gives depends on the load
            self.result.load_dependent = True
            traces, ran = [], set()
        except BaseException:  # a rule that refuses, or a jaxpr of a shape not foreseen
            traces, ran = [], set()
        for differentiated in traces:
            out: list[Finding] = []
            found += in_rules_only(program_findings(
                self.rules, self.codes, self.job.path, self.job.source, target, differentiated, signature, self.index,
                self.job.settings, self.others, differentiated=True, vmap_records=VMAP_RECORDS,
                instance_inputs=built_inputs(arguments), left_out=out), ran)
            left_out += in_rules_only(out, ran)
            self._count_linted(differentiated, target, itself=False)
        # Part of "rules": the differentiated traces and the rules on them.
        timings = self.result.timings
        timings["rule-runs"] = timings.get("rule-runs", 0.0) + time.perf_counter() - started
        return found

    def _left_out(self, findings: list[Finding]) -> None:
        """Findings at a bad point among a built instance's fields alone: listed, not reported."""
        self.result.left_out = one_per_place([*self.result.left_out, *findings])

    def _concluded(self, target: Target, request: ArgumentRequest, runs: _TargetRuns) -> None:
        """What the target's signatures traced into, or why none did."""
        if runs.traced:
            traced = runs.traced
            self.result.traced.append(Traced(target.qualname, traced[0][0], traced[0][1], [t[1] for t in traced],
                                             request.notes, len(runs.errors), sorted(runs.lines),
                                             [t[3] for t in traced]))
            self.result.outputs[target.qualname] = [t[2] for t in traced]
        elif runs.inferred:
            # What the other sources said comes first (a stale record, an unbuildable annotation).
            self._skip(target, "no-arguments", "; ".join([*request.notes, "no inferred signature traced: "
                                                          + "; ".join(runs.errors)]))
        elif runs.quiet:
            self._skip(target, "trace-error", f"trace error (not reported: a plain function, {target.kind}): "
                       + "; ".join(runs.errors))
        else:
            self._skip(target, "trace-error", "trace error: " + "; ".join(runs.errors))


@dataclasses.dataclass
class _TargetRuns:
    """One target's traces so far: ``inferred`` (guessed signatures), ``quiet`` (its trace errors
    are not reported), the suppression comments' lines (``wanted``) and those that made equations."""

    inferred: bool
    quiet: bool
    wanted: set[int]
    # (argument source, signature, output avals, positions of the weakly typed inputs)
    traced: list[tuple[str, str, list[str], list[int]]] = dataclasses.field(default_factory=list)
    errors: list[str] = dataclasses.field(default_factory=list)
    lines: set[int] = dataclasses.field(default_factory=set)  # lines of the wanted comments' statements (JX800)
    error: BaseException | None = None  # the last signature's trace error (argsources/rank_retry.py reads it)


def _ran_by_file(codes: list[CodeType], everything: bool) -> dict[str, list[str]]:
    """The qualified names of the functions that ran, by file (``ran_code``), for the files whose
    module-level code ran under the recording (which confirms that the code's file name is the
    file's path, and that none of its functions ran before). ``everything``: something ran
    unrecorded (a trace), so every function counts as run (``RAN_ALL``); so too before
    Python 3.11, which has no ``co_qualname``."""
    names: dict[str, set[str]] = {}
    for code in codes:
        names.setdefault(code.co_filename, set()).add(getattr(code, "co_qualname", code.co_name))
    everything = everything or sys.version_info < (3, 11)
    return {file: [RAN_ALL] if everything else sorted(n - {"<module>"}) for file, n in names.items() if "<module>" in n}


def _registered_function(registration: Any) -> Any:
    """What to trace for an examples registration: the function, or a module instance's class
    ``__call__`` (the instance is then passed first, as ``self``)."""
    function = registration.function
    return function if code_of(function) is not None else type(function).__call__


def _inferred(finding: Finding, signature: str) -> Finding:
    """A finding seen with arguments jaxlint guessed says so (a JX906 too: the guess may matter)."""
    return dataclasses.replace(finding, arguments=INFERRED,
                               message=finding.message + f" (seen with arguments jaxlint inferred: {signature}; "
                                                         "a hint, an example or `pytest --jaxlint` gives real ones)")


__all__ = ["analyze"]
