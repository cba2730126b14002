"""Fix verification re-traces the fixed file with the arguments check traced it with, whatever
their source (hint, examples file, recorded signature, import-time call, inferred); a rejected fix
says in words what differed; the summary's counts agree with each other. Real rules (JX701's
unsafe fix), real traces; the workers run in the test process (helpers.InProcessPool), and one
test goes through the command line."""
from __future__ import annotations

import io
import json
import subprocess
import sys
from pathlib import Path

import pytest
from helpers import check_in_process

from jaxlint.config import load_config
from jaxlint.config.selection import select_rules
from jaxlint.engine.results import CheckResult
from jaxlint.model import Result, Skipped, Traced
from jaxlint.report.common import sources
from jaxlint.report.full import write_findings
from jaxlint.report.summary import summary

# A plain function: only the argument source under test makes it a target.
PLAIN = '''\
import jax.numpy as jnp


def cross_entropy(logits, labels):
    lse = jnp.log(jnp.sum(jnp.exp(logits)))
    return lse - jnp.sum(logits * labels), lse
'''
HINT = "# jaxlint: args logits=f32[10], labels=f32[10]\n"


def signatures_file(params: list[str]) -> str:
    """What `jaxlint record` writes for cross_entropy called with two f32[10] arrays."""
    return json.dumps({"version": 1, "functions": {"model.py::cross_entropy": {
        "params": params, "signatures": [{"logits": "f32[10]", "labels": "f32[10]"}]}}})


EXAMPLES = '''\
import jax
import jax.numpy as jnp
import jaxlint
from model import cross_entropy

jaxlint.example(cross_entropy, jax.ShapeDtypeStruct((10,), jnp.float32), jax.ShapeDtypeStruct((10,), jnp.float32))
'''
# The fix adds `import jax`, but the function's parameter `jax` shadows the module: the fixed
# function raises where the original traced.
SHADOWED = PLAIN.replace("def cross_entropy(logits, labels):", "def cross_entropy(logits, labels, jax=None):")
FIXED_LINE = "    lse = jax.nn.logsumexp(logits)\n"


def project(root: Path, source: str, module: str = PLAIN, pyproject: str = "[tool.jaxlint]\n") -> Path:
    """``root`` holding ``model.py`` (``module``) set up for the argument ``source``."""
    (root / "pyproject.toml").write_text(pyproject, encoding="utf-8")
    if source == "hint":
        module = module.replace("def cross_entropy", HINT + "def cross_entropy")
    elif source == "recorded":
        (root / ".jaxlint").mkdir()
        params = ["logits", "labels"] + (["jax"] if module == SHADOWED else [])
        (root / ".jaxlint" / "signatures.json").write_text(signatures_file(params), encoding="utf-8")
    elif source == "inferred":
        (root / "pyproject.toml").write_text(pyproject + "infer-arguments = true\n", encoding="utf-8")
    elif source == "examples":
        (root / "pyproject.toml").write_text(pyproject + 'examples = ["examples.py"]\n', encoding="utf-8")
        (root / "examples.py").write_text(EXAMPLES, encoding="utf-8")
    elif source == "import-call":
        module = ("import jax\n" + module.replace("def cross_entropy", "@jax.jit\ndef cross_entropy")
                  + "\n\ncross_entropy(jnp.zeros(10), jnp.zeros(10))\n")
    (root / "model.py").write_text(module, encoding="utf-8")
    return root / "model.py"


def diff_check(path: Path) -> CheckResult:
    """``jaxlint check --diff --unsafe-fixes --select JX701`` with the project's configuration."""
    return check_in_process([str(path)], select_rules(["JX701"], None), diff=True, unsafe_fixes=True,
                            config=load_config([str(path)]))


@pytest.mark.parametrize("source", ["hint", "recorded", "inferred", "examples", "import-call"])
def test_a_fix_verifies_with_every_argument_source(tmp_path: Path, source: str) -> None:
    path = project(tmp_path, source)
    result = diff_check(path)
    [traced] = result.files[0].result.traced
    assert traced.source == source  # the source under test gave the arguments
    [finding] = result.findings
    assert finding.code == "JX701" and finding.fix_rejected is None
    assert result.fixed == [finding] and result.fix_rejected == []
    assert FIXED_LINE in result.fixed_texts[str(path)]
    assert summary(result, "diff", unsafe_fixes=True).endswith(
        "1 finding, 1 fix shown (verified: --fix --unsafe-fixes would apply it).")


@pytest.mark.parametrize("source, reason", [
    ("hint", "trace error: logits=f32[10], labels=f32[10]"),
    ("recorded", "trace error (not reported: a plain function, recorded): f32[10], f32[10]"),
])
def test_a_fixed_function_that_no_longer_traces_is_rejected_in_words(tmp_path: Path, source: str,
                                                                      reason: str) -> None:
    path = project(tmp_path, source, SHADOWED)
    result = diff_check(path)
    [finding] = result.fix_rejected
    assert finding.fix_rejected == (
        "the fixed function `cross_entropy` could not be traced with the same arguments: " + reason
        + ": AttributeError: 'NoneType' object has no attribute 'nn'")
    assert result.fixed == [] and str(path) not in result.fixed_texts


def traced_result(signatures: dict[str, list[str]]) -> Result:
    """A worker's result for a function ``f`` traced with each signature to those output avals."""
    return Result("model.py", traced=[Traced("f", "hint", next(iter(signatures)), list(signatures))],
                  outputs={"f": list(signatures.values())})


def test_changed_outputs_are_named_with_their_shapes_and_signature() -> None:
    from jaxlint.engine.fixer import _outputs_changed

    before = traced_result({"x=f32[3]": ["float32[]", "float32[3]"], "x=f32[5]": ["float32[]", "float32[5]"]})
    assert _outputs_changed("f", before, traced_result(
        {"x=f32[3]": ["float32[]", "float32[3]"], "x=f32[5]": ["float32[]", "float32[1,5]"]})) == (
        "output 1 of `f` changes from float32[5] to float32[1,5] (with x=f32[5])")
    assert _outputs_changed("f", before, traced_result(
        {"x=f32[3]": ["float32[]"], "x=f32[5]": ["float32[]"]})) == (
        "`f` returns 2 outputs before the fix and 1 after ((float32[], float32[3]) -> (float32[]), with x=f32[3])")
    assert _outputs_changed("f", before, traced_result({"x=f32[3]": ["float32[]", "float32[3]"]})) == (
        "the fixed function `f` could not be traced with the same arguments (x=f32[5]): "
        "it raised where the original traced")
    gone = Result("model.py", skipped=[Skipped("f", "trace-error", "trace error: x=f32[3]: TypeError: no", 4)])
    assert _outputs_changed("f", before, gone) == (
        "the fixed function `f` could not be traced with the same arguments: trace error: x=f32[3]: TypeError: no")


def test_a_rejected_fix_is_not_also_counted_fixable(tmp_path: Path) -> None:
    result = diff_check(project(tmp_path, "hint", SHADOWED))
    assert summary(result, "diff", unsafe_fixes=True).endswith(
        "1 finding, 0 fixes shown, 1 fix rejected by verification (not shown: why is said above).")
    # Without --diff (the fixes verified for --cost compiled), nothing is left fixable either.
    assert summary(result, "none", unsafe_fixes=True).endswith("1 finding, 1 fix rejected by verification.")
    out = io.StringIO()
    write_findings(result.findings, sources(result), out, unsafe_fixes=True)
    report = out.getvalue()
    assert "JX701 log of a sum of exp" in report and "[*]" not in report
    assert "= note: fix not applied: the fixed function `cross_entropy` could not be traced" in report


def test_diff_says_which_fixes_it_left_out_and_why(tmp_path: Path) -> None:
    project(tmp_path, "hint", SHADOWED)
    run = subprocess.run([sys.executable, "-m", "jaxlint", "check", "--diff", "--unsafe-fixes", "model.py"],
                         cwd=tmp_path, capture_output=True, text=True, timeout=600)
    assert run.returncode == 1 and run.stdout == ""
    assert run.stderr.splitlines() == [
        "jaxlint: model.py:6:11: JX701 fix not shown: the fixed function `cross_entropy` could not be traced "
        "with the same arguments: trace error: logits=f32[10], labels=f32[10]: AttributeError: 'NoneType' object "
        "has no attribute 'nn'",
        "1 file checked, linted 1 of 1 JAX functions (1 target traced), 1 finding, 0 fixes shown, "
        "1 fix rejected by verification (not shown: why is said above)."]
