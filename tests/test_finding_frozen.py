"""A Finding is frozen (issue 44): a rule gives its cost when it makes the finding, and a later
stage that changes one makes a new one (``dataclasses.replace``) and puts it where the old one
was. The frozen dataclass makes an assignment raise where it runs; the source check below also
finds one on a path no test runs."""
from __future__ import annotations

import ast
import dataclasses
import json
from pathlib import Path

import pytest

from jaxlint.config import Config
from jaxlint.drivers.results import settled
from jaxlint.engine.results import FileAnalysis
from jaxlint.model import Cost, Edit, Finding, Fix, Span
from jaxlint.text import SourceFile

PACKAGE = Path(__file__).resolve().parents[1] / "jaxlint"
FIELDS = {field.name for field in dataclasses.fields(Finding)}


def _finding() -> Finding:
    return Finding(code="JX101", name="vmap-unbatched-output", message="m", severity="warning", path="/a.py",
                   span=Span(1, 0, 1, 1))


def test_assigning_a_field_of_a_finding_raises() -> None:
    finding = _finding()
    with pytest.raises(dataclasses.FrozenInstanceError):
        finding.cost = Cost(basis="shapes")  # type: ignore[misc]
    with pytest.raises(dataclasses.FrozenInstanceError):
        setattr(finding, "fix_rejected", "why")
    assert dataclasses.replace(finding, path="/b.py").path == "/b.py" and finding.path == "/a.py"


def test_a_rule_gives_the_cost_when_it_makes_the_finding() -> None:
    from jaxlint.rules import all_rules
    from jaxlint.rules.catalog import rule_info

    rule = next(r for r in all_rules() if r.code == "JX101")
    cost = Cost(basis="shapes", bytes=40.0)
    assert rule.finding("/a.py", Span(1, 0, 1, 1), "m", cost=cost).cost == cost
    assert rule_info("JX906").finding("/a.py", Span(1, 0, 1, 1), "m", cost=cost).cost == cost


def test_a_finding_with_every_field_survives_the_json_round_trip() -> None:
    """What crosses the process boundary and the stores: frozen, the JSON is what it was."""
    data = {"code": "JX302", "name": "missing-donation", "message": "m", "severity": "warning", "path": "/a.py",
            "span": {"start_line": 1, "start_col": 0, "end_line": 1, "end_col": 4},
            "fix": {"applicability": "safe", "message": "donate",
                    "edits": [{"span": {"start_line": 1, "start_col": 0, "end_line": 1, "end_col": 4},
                               "content": "x"}]},
            "target": "f", "fix_rejected": "why", "arguments": "inferred", "origin": "test run", "test": "t::a",
            "cost": {"basis": "shapes", "flops": 0.0, "bytes": 8.0, "equations": None, "compile_seconds": None,
                     "note": "n"}}
    finding = Finding.from_json(json.loads(json.dumps(data)))
    assert json.loads(json.dumps(finding.to_json())) == data and Finding.from_json(finding.to_json()) == finding


def _names_bound_to_findings(function: ast.AST) -> set[str]:
    """Names a function binds to a Finding: a parameter annotated ``Finding``, the result of a
    ``.finding(...)``, ``Finding(...)`` or ``Finding.from_json(...)`` call, and the loop variable
    over findings (an iterable whose text says findings, or a parameter annotated as a
    collection of them)."""
    assert isinstance(function, (ast.FunctionDef, ast.AsyncFunctionDef))
    arguments = [*function.args.posonlyargs, *function.args.args, *function.args.kwonlyargs]
    annotated = {a.arg: ast.unparse(a.annotation) for a in arguments if a.annotation is not None}
    names = {name for name, annotation in annotated.items() if annotation in ("Finding", "'Finding'")}
    collections = {name for name, annotation in annotated.items() if "Finding]" in annotation}
    for node in ast.walk(function):
        if isinstance(node, ast.Assign) and isinstance(node.value, ast.Call):
            call = ast.unparse(node.value.func)
            if call == "Finding" or call.endswith((".finding", "Finding.from_json")):
                names |= {t.id for t in node.targets if isinstance(t, ast.Name)}
        elif isinstance(node, (ast.For, ast.comprehension)) and isinstance(node.target, ast.Name):
            iterable = node.iter
            if "finding" in ast.unparse(iterable).lower() or (isinstance(iterable, ast.Name)
                                                               and iterable.id in collections):
                names.add(node.target.id)
    return names


def finding_field_assignments(tree: ast.AST) -> list[str]:
    """``line: name.field`` for each assignment (plain, augmented, annotated or ``setattr``) to a
    Finding's field on a name the enclosing function binds to a Finding."""
    found = []
    for function in ast.walk(tree):
        if not isinstance(function, (ast.FunctionDef, ast.AsyncFunctionDef)):
            continue
        names = _names_bound_to_findings(function)
        for node in ast.walk(function):
            targets = node.targets if isinstance(node, ast.Assign) else \
                [node.target] if isinstance(node, (ast.AugAssign, ast.AnnAssign)) else []
            for target in targets:
                if isinstance(target, ast.Attribute) and isinstance(target.value, ast.Name) \
                        and target.value.id in names and target.attr in FIELDS:
                    found.append(f"{node.lineno}: {target.value.id}.{target.attr}")
            if isinstance(node, ast.Call) and ast.unparse(node.func) in ("setattr", "object.__setattr__") \
                    and node.args and isinstance(node.args[0], ast.Name) and node.args[0].id in names:
                found.append(f"{node.lineno}: setattr({node.args[0].id}, ...)")
    return sorted(set(found), key=lambda entry: int(entry.partition(":")[0]))


def test_no_module_assigns_to_a_finding_s_field() -> None:
    found = [f"{path.relative_to(PACKAGE.parent)}:{entry}" for path in sorted(PACKAGE.rglob("*.py"))
             for entry in finding_field_assignments(ast.parse(path.read_text(encoding="utf-8")))]
    assert found == []


def test_the_assignment_check_sees_each_way_a_finding_was_changed() -> None:
    """The shapes of the assignments the pipeline and the rules made before Finding was frozen."""
    tree = ast.parse('''
def rule(cls, ctx):
    finding = ctx.finding(cls, "m", span)
    finding.cost = Cost(basis="shapes")
    yield finding

def pipeline(analysis, fixed: list[Finding], one: Finding):
    for finding in analysis.result.findings:
        finding.path = analysis.source.path
    for found in fixed:
        found.fix_rejected = "why"
    one.message += " (inferred)"
    setattr(one, "test", "t")

def unrelated(args, layer):
    args.fix = True
    layer.path = "x"
''')
    assert finding_field_assignments(tree) == ["4: finding.cost", "9: finding.path", "11: found.fix_rejected",
                                               "12: one.message", "13: setattr(one, ...)"]


def _with_fix(path: str, line: int) -> Finding:
    edit = Edit(Span(line, 4, line, 5), "y")
    return dataclasses.replace(_finding(), path=path, span=Span(line, 4, line, 5), code="JX203",
                               name="python-state-in-traced-code", fix=Fix("safe", "use y", (edit,)))


def test_a_replaced_finding_takes_the_old_one_s_place_in_every_list_of_the_file(tmp_path: Path) -> None:
    """The fixer carries a routed finding only while the file's findings hold that same object."""
    own, routed = _with_fix(str(tmp_path / "a.py"), 1), _with_fix(str(tmp_path / "a.py"), 2)
    analysis = FileAnalysis(SourceFile(own.path, "", "utf-8", False), [], None, findings=[own, routed],
                            routed=[routed])
    verdict = dataclasses.replace(routed, fix_rejected="why")
    analysis.replace_finding(routed, verdict)
    assert analysis.findings == [own, verdict] and analysis.routed[0] is verdict


def test_settling_a_run_s_findings_demotes_the_fix_it_shows_not_the_one_the_run_stores(tmp_path: Path) -> None:
    """``jaxlint run`` stores its findings after reporting them: the reported fix is demoted (no
    linted function runs it), the list it stores keeps the rule's own, as ``pytest --jaxlint``
    stores it."""
    path = tmp_path / "train.py"
    path.write_text("def train(x):\n    x = x + 1\n    return x\n")
    finding = _with_fix(str(path), 2)
    findings = [finding]
    result = settled(findings, ["JX203"], Config(root=str(tmp_path)), functions=[])
    [reported] = result.findings
    assert reported.fix.applicability == "unsafe" and "(unsafe: no traced function runs this code" in \
        reported.fix.message
    assert findings == [finding] and finding.fix.applicability == "safe"
