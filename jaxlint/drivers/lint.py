"""Once the tests are done: trace each kept call (watched_calls.py) with its real non-array arguments and
abstract arrays, run the program rules on the jaxpr, and the source rules once per file.

A function is rebuilt from its code object, its globals and closure cells holding the kept
values, so a closure a factory returned is traced with what it closed over, and a tracer it
closed over (from a trace that has ended) becomes an input instead of leaking. A call that does
not trace again (the function needs concrete values, or an object it reads holds a dead tracer)
is not a finding: the test ran it fine, jaxlint just cannot see its jaxpr; it is reported as not
linted, with the reason.
"""
from __future__ import annotations

import contextlib
import io
import os
import sys
import types
from dataclasses import dataclass, field, replace
from typing import Any, Callable, ContextManager, Iterable, Iterator

import jax

from jaxlint.analysis.program import program_findings
from jaxlint.drivers.placement import argument_paths, leaf_names, placed_jit, result_paths
from jaxlint.drivers.results import Linted, Ran
from jaxlint.drivers.watched_calls import EMPTY_CELL, Call, Function
from jaxlint.ir import Truncation, sharded
from jaxlint.ir.truncations import TruncationRecorder
from jaxlint.jaxapi import config_state, tracers
from jaxlint.model import Finding, Settings, Span
from jaxlint.rules import Rule
from jaxlint.rules.base import SourceContext
from jaxlint.rules.runner import describe_error, internal_error, run_source_rules
from jaxlint.scan.functions import JaxFunction, jax_functions
from jaxlint.scan.index import SourceIndex
from jaxlint.text import SourceFile, read_source
from jaxlint.worker.argsources import ArgumentSet
from jaxlint.worker.frames import parameter_names, split_arguments
from jaxlint.worker.inprocess import recording_vmaps, target_for
from jaxlint.worker.instrument import VMAP_RECORDS
from jaxlint.worker.retrace import ModuleRetracer
from jaxlint.worker.trace import format_signature
from jaxlint.worker.traced_lines import equation_files, reached_functions


@dataclass
class Outcome:
    findings: list[Finding] = field(default_factory=list)
    functions: list[Linted] = field(default_factory=list)  # those called with arrays
    ran: list[Ran] = field(default_factory=list)
    # Why some programs were not compiled for the target (ir/target_devices.take_refusals).
    not_compiled: list[str] = field(default_factory=list)
    # Module -> the project files its linted functions' traces ran, and whose lines made the
    # equations of the traces that put findings in it: what its result depends on (engine/store.py).
    depends: dict[str, set[str]] = field(default_factory=dict)


@dataclass
class _File:
    text: str
    index: SourceIndex
    module: Any
    functions: list[JaxFunction]
    reached: set[int] = field(default_factory=set)  # first lines of its linted JAX functions


def lint_calls(functions: Iterable[Function], rules: list[type[Rule]], settings: Settings,
               is_project: Callable[[str], bool] | None = None,
               executed: Callable[[], ContextManager[set[str]]] | None = None,
               read: Callable[[str], SourceFile] = read_source) -> Outcome:
    """Lint the kept calls of ``functions`` (every project function the tests called). The helpers
    they call are among them, each traced on its own; ``is_project`` tells which files a finding
    may be placed in (JX401 at the calls that passed a key twice to a helper); ``executed``: a
    block that records the project files whose functions run in it (the watcher's); ``read``: a
    file's source as the code that ran was compiled from (imported_sources.py)."""
    codes = {rule.code for rule in rules}
    outcome = Outcome()
    report = _Reporter(outcome)
    files: dict[str, _File | None] = {}
    called: dict[str, set[int]] = {}  # path -> first lines of the functions the tests called
    tests: dict[tuple[str, int], list[str]] = {}  # (path, first line) -> the tests that called it
    executed = executed or _nothing_recorded
    for function in functions:
        code = function.code
        path = os.path.abspath(code.co_filename)
        called.setdefault(path, set()).add(code.co_firstlineno)
        tests.setdefault((path, code.co_firstlineno), function.named_tests)
        if not function.calls:
            continue
        source = files[path] if path in files else files.setdefault(path, _read(path, function, read))
        if source is None:  # deleted or rewritten by a test since
            continue
        try:
            # What the traced code prints would land in the middle of pytest's summary.
            with contextlib.redirect_stdout(io.StringIO()), contextlib.redirect_stderr(io.StringIO()):
                _lint_function(function, path, source, rules, codes, settings, outcome, report, is_project, executed)
        except Exception as error:  # a bug of jaxlint's: a finding, never a crash of the test run
            outcome.findings += internal_error(codes, path, Span(code.co_firstlineno, 0, code.co_firstlineno, 0),
                                               None, f"linting {getattr(code, 'co_qualname', code.co_name)}",
                                               error)
    for path, lines in called.items():
        source = files[path] if path in files else files.setdefault(path, _read(path, None, read))
        if source is not None:
            _called_file(path, source, lines, tests, rules, codes, settings, outcome, report, executed)
    from jaxlint.ir import target_devices  # the tests' process imports JAX already

    outcome.not_compiled = target_devices.take_refusals()
    return outcome


class _Reporter:
    """Adds findings to the outcome, each with the test that reached it, and records each
    finding's files as depended on. Several signatures and nested functions see the same
    operation: every finding is kept, the settle step keeps one per place (engine/settle.py)."""

    def __init__(self, outcome: Outcome) -> None:
        self.outcome = outcome

    def __call__(self, found: list[Finding], depends: Iterable[str] = (), test: str | None = None) -> None:
        depends = {os.path.abspath(file) for file in depends}
        for finding in found:
            self.outcome.depends.setdefault(os.path.abspath(finding.path), set()).update(depends)
            self.outcome.findings.append(replace(finding, test=finding.test or test))


def _called_file(path: str, source: _File, lines: set[int], tests: dict[tuple[str, int], list[str]],
                 rules: list[type[Rule]], codes: set[str], settings: Settings, outcome: Outcome,
                 report: _Reporter, executed: Callable[[], ContextManager[set[str]]]) -> None:
    """A file whose functions the tests called: which of its JAX functions ran (and were linted),
    then its source rules, when its traces reached it."""
    outcome.ran += [Ran(path, f.qualname, f.line, f.first_line in source.reached, f.first_line,
                        list(tests.get((path, f.first_line), [])))
                    for f in source.functions if f.first_line in lines]
    if source.reached or any(f.path == path and f.signatures for f in outcome.functions):
        retrace = ModuleRetracer(source.module, path, settings) if source.module is not None else None
        with executed() as ran_files:
            found = run_source_rules(rules, SourceContext(path, source.text, source.index, settings, retrace), codes)
        # The source rules' findings depend on the file's traces too (ctx.retrace).
        report(found, ran_files | outcome.depends.get(path, set()) | {path})


@contextlib.contextmanager
def _nothing_recorded() -> Iterator[set[str]]:
    yield set()


def _read(path: str, function: Function | None, read: Callable[[str], SourceFile]) -> _File | None:
    try:
        text = read(path).text
    except Exception:
        return None
    module = sys.modules.get(function.calls[0].globals.get("__name__", "")) if function is not None else None
    index = SourceIndex(path, text)
    return _File(text, index, module, jax_functions(index))


def _lint_function(function: Function, path: str, source: _File, rules: list[type[Rule]], codes: set[str],
                   settings: Settings, outcome: Outcome, report: Callable[..., None],
                   is_project: Callable[[str], bool] | None,
                   executed: Callable[[], ContextManager[set[str]]]) -> None:
    """Trace each kept call of ``function`` and run the program rules."""
    code = function.code
    qualname = getattr(code, "co_qualname", code.co_name)  # Python 3.11+
    target = target_for(path, source.text, code.co_name, qualname, code.co_firstlineno,
                        list(parameter_names(code)), source.index.targets)
    linted = Linted(path, qualname, code.co_firstlineno, tests=function.named_tests)
    test = function.named_tests[0] if function.named_tests else None
    depends = outcome.depends.setdefault(path, {path})
    for call in function.calls:
        ran_files: set[str] = set()
        try:
            with executed() as ran_files, traced(call, path) as (closed, signature, truncations, paths):
                # The files the trace ran, and those whose lines made its equations (a jitted
                # helper whose trace JAX had cached ran no code this time).
                ran_files |= equation_files(closed, is_project)
                # Inside the block: the rules read the vmap records made while tracing.
                report(program_findings(rules, codes, path, source.text, target, closed, signature, source.index,
                                        settings, project=is_project, differentiated=call.differentiated,
                                        vmap_records=VMAP_RECORDS, truncations=truncations, paths=paths),
                       ran_files | {path}, test)
                source.reached |= reached_functions(closed, path, source.functions, source.reached)
        except Exception as error:
            linted.errors.append(describe_error(error))
            continue
        finally:
            depends.update(os.path.abspath(f) for f in ran_files)
        linted.signatures += 1
        linted.signature_texts.append(signature)
        source.reached.add(code.co_firstlineno)
    outcome.functions.append(linted)


def _call(function: types.FunctionType, args: list[Any], kwargs: dict[str, Any]) -> Any:
    """Call ``function`` again; an ``__init__`` initializes a new instance of the class of its
    ``self`` (the tests' own instance is initialized already, frozen dataclasses refuse a second
    ``__init__``) and the instance's array leaves are its result."""
    code = function.__code__
    if code.co_name == "__init__" and args:
        cls = type(args[0])
        if getattr(getattr(cls, "__init__", None), "__code__", None) is code:
            instance = cls(*args[1:], **kwargs)
            try:
                return jax.tree_util.tree_leaves(instance, is_leaf=tracers.iterable_leaf) + \
                    jax.tree_util.tree_leaves(vars(instance), is_leaf=tracers.iterable_leaf)
            except TypeError:  # no __dict__ (slots)
                return jax.tree_util.tree_leaves(instance, is_leaf=tracers.iterable_leaf)
    return function(*args, **kwargs)


@contextlib.contextmanager
def traced(call: Call, path: str) -> Iterator[tuple[Any, str, list[Truncation], tuple[list[str], Any]]]:
    """(ClosedJaxpr, readable signature, the 64-bit dtype requests JAX truncated, the paths of its
    inputs and outputs in the function's parameters and result) of the function of ``call`` on
    its kept arguments, with the vmap records of the trace kept until the block ends."""
    code = call.code
    dynamic = [i for i, leaf in enumerate(call.leaves) if isinstance(leaf, jax.ShapeDtypeStruct)]
    results: list[Any] = []  # the result's structure and which leaves are arrays (out_shardings)

    def apply(*values: Any) -> list[Any]:
        filled = list(call.leaves)
        for index, value in zip(dynamic, values):
            filled[index] = value
        params, free = jax.tree_util.tree_unflatten(call.treedef, filled)
        cells = tuple(types.CellType() if value is EMPTY_CELL else types.CellType(value) for value in free)
        function = types.FunctionType(code, call.globals, code.co_name, None, cells or None)
        args, kwargs = split_arguments(code, params)
        # The jaxpr keeps every equation the call made, returned or not: a factory's, an
        # initializer's that stores its arrays on ``self``, a check's that returns a bool.
        leaves, treedef = jax.tree_util.tree_flatten(_call(function, args, kwargs), is_leaf=tracers.iterable_leaf)
        results[:] = [treedef, [isinstance(leaf, jax.Array) for leaf in leaves]]
        return [leaf for leaf in leaves if isinstance(leaf, jax.Array)]

    params = jax.tree_util.tree_unflatten(call.treedef, call.leaves)[0]
    args, kwargs = split_arguments(code, params)
    with config_state.enable_x64(call.x64), recording_vmaps(path, call.globals):
        with TruncationRecorder() as truncations:
            inputs = [call.leaves[i] for i in dynamic]
            closed = _placed_trace(call, apply, dynamic, inputs, results, truncations) \
                if call.placement is not None else None
            if closed is None:
                truncations.clear()  # those of a placed trace that failed: this one warns again
                closed = jax.make_jaxpr(jax.jit(apply) if call.staged else apply)(*inputs)
        sharded.note_inputs(closed, inputs)  # the compile step places the arguments as the test did
        paths = (argument_paths(code, call.treedef, len(call.leaves), dynamic), result_paths(results))
        yield closed, format_signature(ArgumentSet("test", tuple(args), kwargs)), truncations, paths


def _placed_trace(call: Call, apply: Callable[..., list[Any]], dynamic: list[int], inputs: list[Any],
                  results: list[Any], truncations: list[Truncation]) -> Any:
    """The jaxpr of ``apply`` under a jit placed as the test's jit placed the call (the sharded
    program); None when JAX refuses that placement here: the call is traced as before, unplaced."""
    assert call.placement is not None
    names = leaf_names(call.code, call.treedef, len(call.leaves))
    names = [names[i] for i in dynamic]
    try:
        closed = jax.make_jaxpr(placed_jit(apply, call.placement, dynamic, call.code, names))(*inputs)
        if call.placement.out_shardings is not None:  # spread over the result just traced
            truncations.clear()  # the first trace's: the second warns again
            closed = jax.make_jaxpr(placed_jit(apply, call.placement, dynamic, call.code, names, results))(*inputs)
    except Exception:  # noqa: BLE001 - the function's own error comes again from the unplaced trace
        return None
    return closed
