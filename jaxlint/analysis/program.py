"""The program rules over one traced signature: in the target's file and in the project's other
files whose helpers made operations, with a failure to build the IR as a JX906 finding."""
from __future__ import annotations

import dataclasses
import re
from typing import TYPE_CHECKING, Any, Callable, Collection, Mapping, Sequence

from jaxlint.analysis import instance_points
from jaxlint.chips import parse_target
from jaxlint.ir import Program, Truncation, VmapRecord, is_sharded, target_devices
from jaxlint.ir.build import build_program
from jaxlint.model import Finding, Settings, Target
from jaxlint.rules import Rule
from jaxlint.rules.base import ProgramContext
from jaxlint.rules.runner import internal_error, run_program_rules
from jaxlint.scan.index import SourceIndex
from jaxlint.text import read_source

if TYPE_CHECKING:
    from jaxlint.worker.project_sources import ProjectSources


def program_findings(rules: list[type[Rule]], codes: set[str], path: str, source: str, target: Target,
                     closed: Any, signature: str, index: SourceIndex | None = None,
                     settings: Settings | None = None, others: ProjectSources | None = None,
                     project: Callable[[str], bool] | None = None, differentiated: bool = False,
                     vmap_records: Mapping[str, VmapRecord] | None = None,
                     truncations: Sequence[Truncation] = (),
                     paths: tuple[list[str], list[str | None] | None] | None = None,
                     instance_inputs: Collection[int] = (), left_out: list[Finding] | None = None) -> list[Finding]:
    """The program rules' findings on one traced signature (``closed``: its ClosedJaxpr), in the
    target's file and in each file of ``others`` (the project's) whose helpers made operations; a
    failure to build the IR is a JX906 finding too. ``project`` without ``others``: which files
    are the project's, for the rules that place a finding themselves (JX401), with no run of the
    rules in the helpers' files (``pytest --jaxlint`` traces the helpers it saw called on their own;
    ``differentiated``: the tests called this one under ``jax.grad`` or ``jvp``). ``vmap_records``:
    the records the tracer's vmap recorder made (worker/instrument.py), for JX101; ``truncations``:
    the 64-bit dtype requests JAX truncated while ``closed`` was traced (ir/truncations.py), for JX508;
    ``paths``: the path of each input and output in the function's parameters and result, where
    the trace's own jit does not name them (``pytest --jaxlint``'s re-trace, lint.py);
    ``instance_inputs``: the input positions that hold the fields of an instance jaxlint built for
    a method, whose findings at a point among them alone go to ``left_out`` (instance_points.py)."""
    try:
        # The driver's target (a worker's job, the plugin's or lint's configuration) compiles it.
        target_devices.use(parse_target((settings or Settings()).target))
        program = build_program(closed)
    except Exception as error:
        return internal_error(codes, path, target.name_span, target, f"building the IR for {target.qualname}",
                              error)
    program.truncations = list(truncations)
    if paths is not None:
        _name_paths(program, *paths)
    index = index or SourceIndex(path, source)
    context = ProgramContext(path, source, index, settings or Settings(),
                             target=target, program=program, signature=signature,
                             vmap_records={} if vmap_records is None else vmap_records,
                             target_path=path, project=others or project, differentiated=differentiated,
                             sources=_sources(path, index, others, project))
    findings = run_program_rules(rules, context, codes)
    if is_sharded(program):
        findings = [_whole_program(finding) for finding in findings]
    if others is not None:
        for other in sorted({op.location.path for op in program.walk() if op.location is not None} - {path}):
            loaded = others.get(other)
            if loaded is not None:
                helper = dataclasses.replace(context, path=other, source=loaded[0], index=loaded[1])
                findings += [_through_helper(finding) for finding in run_program_rules(rules, helper, codes)]
    findings, left = instance_points.split(findings, context.points, program, instance_inputs)
    if left_out is not None:
        left_out += left
    return findings


_FIGURE = re.compile(r"\d (FLOPs|bytes)\b")


def _whole_program(finding: Finding) -> Finding:
    """On a sharded program a cost estimated from the jaxpr's shapes counts the global arrays:
    the whole program's work over all its devices, not one device's; say so where the figure
    does not already say it is per device."""
    cost = finding.cost
    if cost is None or cost.basis != "shapes" or "per device" in (cost.note or "") + finding.message:
        return finding
    if not cost.flops and not cost.bytes and not _FIGURE.search(cost.note or ""):
        return finding  # no figure (a figure only in the note: JX103's FLOPs per iteration, trips unknown)
    said = "the cost is the whole sharded program's, all devices together, not per device"
    note = f"{cost.note}; {said}" if cost.note else said
    return dataclasses.replace(finding, cost=dataclasses.replace(cost, note=note),
                               message=f"{finding.message.rstrip()} ({said[0].upper()}{said[1:]}.)")


def _sources(path: str, index: SourceIndex, others: ProjectSources | None,
             project: Callable[[str], bool] | None) -> Callable[[str], SourceIndex | None]:
    """The index of each project file, read once: from ``others`` in a check, else (pytest
    --jaxlint) read here when ``project`` says the file is the project's."""
    known: dict[str, SourceIndex | None] = {path: index}

    def index_of(other: str) -> SourceIndex | None:
        if other not in known:
            known[other] = None
            if others is not None:
                loaded = others.get(other)
                known[other] = loaded[1] if loaded is not None else None
            elif project is not None and other.endswith(".py") and project(other):
                try:
                    known[other] = SourceIndex(other, read_source(other).text)
                except Exception:  # unreadable, undecodable or deleted: no source to read there
                    pass
        return known[other]

    return index_of


def _through_helper(finding: Finding) -> Finding:
    """A finding in a helper's file, seen through another file's target: its fix is shown, not
    applied, since verifying it would need that other file's trace."""
    if finding.fix is None or finding.fix.applicability == "display-only":
        return finding
    return dataclasses.replace(finding, fix=dataclasses.replace(finding.fix, applicability="display-only"))


def _name_paths(program: Program, inputs: list[str], outputs: list[str | None] | None) -> None:
    """The driver's names of the inputs and outputs, where they are one per value."""
    if len(inputs) == len(program.top.inputs):
        program.input_paths = list(inputs)
    if outputs is not None and len(outputs) == len(program.top.outputs):
        program.output_paths = list(outputs)
