"""Findings whose bad point lies among the fields of an instance jaxlint built, alone: left out.

A method traced with an instance jaxlint built (worker/argsources/instances.py) sees guessed field
values, each any value of its type, apart from the others. A bad point a rule derives from the
arithmetic alone (JX501's clamp: ``clip((value - low) / (high - low), 0, 1)`` has a NaN gradient
at ``high == low``) whose value depends on those fields and nothing else may be one the class never
holds (its ``__init__``, its support, rule it out), which jaxlint cannot tell: such a finding is
left out, and listed by ``--show-untraced``. A point that depends on a method's argument as well
is kept (a caller may pass it), and so is a point the program tests itself (a where's predicate on
it says it is reached; the rule then names no point).
"""
from __future__ import annotations

from typing import Collection, Mapping, Sequence

from jaxlint.ir import Program, Value
from jaxlint.ir.patterns import input_positions
from jaxlint.model import Finding


def split(findings: list[Finding], points: Mapping[tuple, Sequence[tuple[Value, ...]]], program: Program,
          instance_inputs: Collection[int]) -> tuple[list[Finding], list[Finding]]:
    """(kept, left out): a finding is left out when every time a rule made it at its place it named
    points, each a value of ``instance_inputs`` (the program's input positions that hold a built
    instance's fields) alone."""
    if not instance_inputs:
        return findings, []
    kept, left_out = [], []
    for finding in findings:
        made = points.get(finding.place) or []
        alone = bool(made) and all(named and all(_of_instance(v, program, instance_inputs) for v in named)
                                   for named in made)
        (left_out if alone else kept).append(finding)
    return kept, left_out


def _of_instance(value: Value, program: Program, instance_inputs: Collection[int]) -> bool:
    positions = input_positions(value, program.top)
    return bool(positions) and all(p in instance_inputs for p in positions)  # type: ignore[union-attr]
