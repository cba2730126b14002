"""JX101 vmap-unbatched-output on real jaxprs, through the whole pipeline (worker, rules, fixer).

Which lines it reports, with the near misses, is its case (tests/rules/JX101.py), checked by
test_rule_cases.py. Here the case is checked once more with --fix in the test process
(helpers.check_case: the worker's analysis and the fixer's verification without a worker
process), and the tests assert on that one result: the fixed text, spans, messages and edits. The
symbolic sizes and a fix that verification rejects keep the real worker, which verifies fixes in
a fresh worker of its own.
"""
from __future__ import annotations

from pathlib import Path

import pytest
from helpers import case_line, case_source, check_case, checked_case, write

from jaxlint.config.selection import select_rules
from jaxlint.engine.check import check
from jaxlint.engine.results import CheckResult
from jaxlint.model import Finding

# The case (tests/rules/JX101.py, whose marked lines test_rule_cases.py checks): its fixes are tested here.
TRIGGERS = case_source("JX101").read_text(encoding="utf-8")
MARKER = "  # expect: JX101"

# For each function of the case --fix rewrites: (its body, its body after --fix), without the markers.
FIXED_BODIES = {
    "jit_first": ("    a, b = jax.vmap(pair, in_axes=(None, 0))(x, y)\n    return a[0], b\n",
                  "    a, b = jax.vmap(pair, in_axes=(None, 0), out_axes=(None, 0))(x, y)\n    return a, b\n"),
    "eager_first": ("    a, b = jax.vmap(pair, in_axes=(None, 0))(x, y)\n    return a[0] + 1.0, b\n",
                    "    a, b = jax.vmap(pair, in_axes=(None, 0), out_axes=(None, 0))(x, y)\n"
                    "    return a + 1.0, b\n"),
    "last_index": ("    a, b = jax.vmap(pair, in_axes=(None, 0))(x, y)\n    return a[-1], b\n",
                   "    a, b = jax.vmap(pair, in_axes=(None, 0), out_axes=(None, 0))(x, y)\n    return a, b\n"),
    "third_index": ("    c, d = jax.vmap(pair, in_axes=(None, 0))(x, y)\n    return c[3], d\n",
                    "    c, d = jax.vmap(pair, in_axes=(None, 0), out_axes=(None, 0))(x, y)\n    return c, d\n"),
    "aliased": ("    a, b = V(pair, in_axes=(None, 0))(x, y)\n    return a[0], b\n",
                "    a, b = V(pair, in_axes=(None, 0), out_axes=(None, 0))(x, y)\n    return a, b\n"),
    "tree_in": ('    a, b = jax.vmap(from_dict, in_axes=({"s": None}, 0))({"s": x}, y)\n    return a[0], b\n',
                '    a, b = jax.vmap(from_dict, in_axes=({"s": None}, 0), out_axes=(None, 0))({"s": x}, y)\n'
                '    return a, b\n'),
    "dict_out": ('    out = jax.vmap(as_dict, in_axes=(None, 0))(x, y)\n    return out["a"][0], out["b"]\n',
                 "    out = jax.vmap(as_dict, in_axes=(None, 0), out_axes={'a': None, 'b': 0})(x, y)\n"
                 '    return out["a"], out["b"]\n'),
    "three": ("    a, b, c = jax.vmap(triple, in_axes=(None, 0))(x, y)\n    return a[0], b, c[1]\n",
              "    a, b, c = jax.vmap(triple, in_axes=(None, 0), out_axes=(None, 0, None))(x, y)\n"
              "    return a, b, c\n"),
    "existing_zero": ("    a, b = jax.vmap(pair, in_axes=(None, 0), out_axes=0)(x, y)\n    return a[0], b\n",
                      "    a, b = jax.vmap(pair, in_axes=(None, 0), out_axes=(None, 0))(x, y)\n    return a, b\n"),
    "existing_tuple": ("    a, b = jax.vmap(pair, in_axes=(None, 0), out_axes=(0, 0))(x, y)\n    return a[0], b\n",
                       "    a, b = jax.vmap(pair, in_axes=(None, 0), out_axes=(None, 0))(x, y)\n    return a, b\n"),
    "nested_index": ("    out = jax.vmap(pair, in_axes=(None, 0))(x, y)\n    return out[0][0] * 2, out[1]\n",
                     "    out = jax.vmap(pair, in_axes=(None, 0), out_axes=(None, 0))(x, y)\n"
                     "    return out[0] * 2, out[1]\n"),
    "accented": ('    _ = "é€"; a, b = jax.vmap(pair, in_axes=(None, 0))(x, y)  # ü\n    return a[0], b\n',
                 '    _ = "é€"; a, b = jax.vmap(pair, in_axes=(None, 0), out_axes=(None, 0))(x, y)  # ü\n'
                 '    return a, b\n'),
    "last_row": ("    x, y = jax.vmap(blackbox_function, in_axes=(None, 0))(x, y)\n    return x[-1], y\n",
                 "    x, y = jax.vmap(blackbox_function, in_axes=(None, 0), out_axes=(None, 0))(x, y)\n"
                 "    return x, y\n"),
    "fifth_row": ("    x, y = jax.vmap(blackbox_function, in_axes=(None, 0))(x, y)\n    return x[5], y\n",
                  "    x, y = jax.vmap(blackbox_function, in_axes=(None, 0), out_axes=(None, 0))(x, y)\n"
                  "    return x, y\n"),
}
# Reported without a fix (test_reported_without_fix says why).
FIXLESS = ["variable_index", "rebound_in_branch", "applied_later", "in_closure", "in_loop", "batch_axis_one",
           "outer"]


def marked(body: str) -> str:
    """``body`` as the case writes it: its first line (where the finding starts) marked."""
    first, rest = body.split("\n", 1)
    return f"{first}{MARKER}\n{rest}"

# Batch sizes known only as symbols, from hint comments.
SYMBOLIC = '''\
import jax


def pair(x, y):
    return x + 1, x * y


# jaxlint: args x=f32[], y=f32[b]
@jax.jit
def symbolic_jit(x, y):
    a, b = jax.vmap(pair, in_axes=(None, 0))(x, y)
    return a[0], b


# jaxlint: args x=f32[n], y=f32[b, n]
def symbolic_eager(x, y):
    a, b = jax.vmap(pair, in_axes=(None, 0))(x, y)
    return a[-1], b
'''

# The same vmap site is unbatched for one caller and batched for another: the fix that declares
# it unbatched breaks the second caller, which verification must catch.
REJECTED = '''\
import jax
import jax.numpy as jnp


def first_free(x, y):
    return x + 1, x * y


def both_mapped(x, y):
    return x + y, x * y


def helper(fn, x, y):
    a, b = jax.vmap(fn, in_axes=(None, 0))(x, y)
    return a[0], b


@jax.jit
def uses_free(x, y):
    return helper(first_free, x, y)


@jax.jit
def uses_mapped(x, y):
    return helper(both_mapped, x, y)


uses_free(1.0, jnp.arange(10.0))
uses_mapped(1.0, jnp.arange(10.0))
'''

def run(path: Path, fix: bool = False) -> CheckResult:
    """The real pipeline: worker processes."""
    return check([str(path)], select_rules(None, None), fix=fix)


def position(text: str, snippet: str, occurrence: int = 0) -> tuple[int, int]:
    """(1-based line, 0-based character column) of ``snippet`` in ``text``."""
    index = -1
    for _ in range(occurrence + 1):
        index = text.index(snippet, index + 1)
    line = text.count("\n", 0, index) + 1
    return line, index - (text.rfind("\n", 0, index) + 1)


def by_target(findings: list[Finding]) -> dict[str, Finding]:
    found: dict[str, Finding] = {}
    for finding in findings:
        assert finding.target not in found, f"two findings for {finding.target}"
        found[finding.target] = finding
    return found


# ---------------------------------------------------------------------------------------------
# Findings that have a fix: checked and fixed in one run.


@pytest.fixture(scope="module")
def triggers(tmp_path_factory: pytest.TempPathFactory) -> tuple[Path, CheckResult]:
    """The case checked with --fix in the test process (the fixer's verification too)."""
    root = tmp_path_factory.mktemp("jx101")
    return root / "JX101.py", check_case("JX101", root, fix=True)


@pytest.fixture(scope="module")
def fixed(triggers: tuple[Path, CheckResult]) -> dict[str, Finding]:
    """The findings --fix applied (and verified), by traced function."""
    return by_target(triggers[1].fixed)


def test_every_trigger_is_reported_once_and_fixed(triggers, fixed) -> None:
    _, result = triggers
    assert set(fixed) == set(FIXED_BODIES)
    assert all(f.code == "JX101" and f.name == "vmap-unbatched-output" for f in result.fixed)
    assert result.fix_rejected == []
    # After the fix the file is analyzed again: the findings without a fix are left.
    assert sorted(f.target for f in result.findings) == sorted(FIXLESS)


def test_fixed_file_text(triggers) -> None:
    path, _ = triggers
    expected = TRIGGERS
    for name, (body, fixed_body) in FIXED_BODIES.items():
        signature = f"def {name}(x, y):\n"
        assert signature + marked(body) in expected, name
        expected = expected.replace(signature + marked(body), signature + marked(fixed_body))
    assert path.read_text(encoding="utf-8") == expected


def test_jitted_caller_points_at_vmap_call_and_says_no_compiled_cost(fixed) -> None:
    finding = fixed["jit_first"]
    line, col = position(TRIGGERS, "jax.vmap(pair, in_axes=(None, 0))(x, y)")
    assert (finding.span.start_line, finding.span.start_col) == (line, col)
    assert (finding.span.end_line, finding.span.end_col) == (line, col + len("jax.vmap(pair, in_axes=(None, 0))(x, y)"))
    message = finding.message
    assert message.startswith("vmap output [0] (used as [0]) depends on no mapped input")
    assert "(10 copies)" in message and "out_axes=None" in message
    assert "Cost: none in compiled code, under jax.jit XLA deletes the broadcast" in message
    assert finding.fix.applicability == "safe"
    assert [e.content for e in finding.fix.edits] == [", out_axes=(None, 0)", "a"]


def test_eager_caller_gives_the_materialized_cost(fixed) -> None:
    message = fixed["eager_first"].message
    assert "(10 copies)" in message
    assert "Cost: outside jax.jit each call materializes the broadcast: 10 elements (40 bytes)" in message
    assert "none in compiled code" not in message
    assert fixed["eager_first"].cost.bytes == 40.0 and fixed["eager_first"].cost.basis == "shapes"


def test_last_and_constant_index(fixed) -> None:
    assert "(used as [-1])" in fixed["last_index"].message  # as written, not JAX's [9] (a batch of 10)
    assert "(used as [3])" in fixed["third_index"].message


def test_aliased_vmap_and_pytree_in_axes(fixed) -> None:
    assert fixed["aliased"].span.start_col == position(TRIGGERS, "V(pair,")[1]
    assert fixed["tree_in"].fix.edits[0].content == ", out_axes=(None, 0)"


def test_dict_output_renders_a_dict_out_axes(fixed) -> None:
    finding = fixed["dict_out"]
    assert finding.message.startswith("vmap output ['a'] (used as [0])")
    assert [e.content for e in finding.fix.edits] == [", out_axes={'a': None, 'b': 0}", 'out["a"]']


def test_three_outputs_two_unbatched_share_one_finding(fixed) -> None:
    message = fixed["three"].message
    assert message.startswith("vmap output [0] (used as [0]) and output [2] (used as [1]) depend on no mapped input")
    assert "declare them unbatched" in message


def test_existing_out_axes_is_replaced(fixed) -> None:
    line, col = position(TRIGGERS, "out_axes=0)")
    edit = fixed["existing_zero"].fix.edits[0]
    assert edit.content == "(None, 0)"
    assert (edit.span.start_line, edit.span.start_col, edit.span.end_col) == (line, col + 9, col + 10)
    assert fixed["existing_tuple"].fix.edits[0].content == "(None, 0)"


def test_non_ascii_text_before_the_call_shifts_no_column(fixed) -> None:
    finding = fixed["accented"]
    call = 'jax.vmap(pair, in_axes=(None, 0))(x, y)  # ü'
    line, col = position(TRIGGERS, call)
    assert (finding.span.start_line, finding.span.start_col) == (line, col)  # characters, not bytes
    assert finding.span.end_col == col + len("jax.vmap(pair, in_axes=(None, 0))(x, y)")


def symbolic_shapes_available() -> bool:
    """jax.export (symbolic shapes) needs absl-py on JAX 0.4.x, which JAX itself does not install."""
    try:
        from jax import export  # noqa: F401
    except ImportError:
        return False
    return True


def test_symbolic_batch_size(tmp_path: Path) -> None:
    """Also --fix writing the file through the real worker (and a fresh one verifying the fix)."""
    if not symbolic_shapes_available():
        pytest.skip("jax.export cannot be imported here (JAX 0.4.x without absl-py)")
    path = write(tmp_path, "jx101_symbolic", SYMBOLIC)
    result = run(path, fix=True)
    fixed = by_target(result.fixed)
    jitted, eager = fixed["symbolic_jit"].message, fixed["symbolic_eager"].message
    # Static shapes except the batch: dynamic_slice; everything symbolic: gather.
    assert "(b copies)" in jitted and "(used as [0])" in jitted and "none in compiled code" in jitted
    # JAX 0.4.x lowers x[-1] on a symbolic axis with a traced index: jaxlint can only say [i].
    assert "(b copies)" in eager and ("(used as [b - 1])" in eager or "(used as [i])" in eager)
    assert "materializes the broadcast: b copies of n elements" in eager
    assert path.read_text() == SYMBOLIC.replace("(x, y)\n    return a[0], b", "(x, y)\n    return a, b").replace(
        "(x, y)\n    return a[-1], b", "(x, y)\n    return a, b").replace(
        "in_axes=(None, 0))(x, y)", "in_axes=(None, 0), out_axes=(None, 0))(x, y)")
    assert result.findings == []


# ---------------------------------------------------------------------------------------------
# Reported without a fix.


def case_findings() -> dict[str, Finding]:
    """The findings of the case (tests/rules/JX101.py, whose marked lines test_rule_cases.py checks),
    by traced function."""
    return by_target(checked_case("JX101")[1].findings)


def test_reported_without_fix() -> None:
    found = case_findings()
    for target in ("variable_index", "rebound_in_branch", "applied_later", "in_closure", "in_loop",
                   "batch_axis_one", "outer"):
        assert found[target].fix is None, target
    assert "(used as [i])" in found["variable_index"].message
    line = case_line("JX101", "a, b = mapped(x, y)")
    assert (found["applied_later"].span.start_line, found["applied_later"].span.start_col) == (line, 11)
    assert "(10 copies)" in found["in_loop"].message


@pytest.mark.slow
def test_fix_rejected_by_verification_leaves_file_identical(tmp_path: Path) -> None:
    path = write(tmp_path, "jx101_rejected", REJECTED)
    before = path.read_bytes()
    result = run(path, fix=True)
    assert path.read_bytes() == before
    assert result.fixed == []
    assert result.fix_rejected and all(f.code == "JX101" for f in result.fix_rejected)
    reasons = [f.fix_rejected for f in result.fix_rejected]
    assert any("out_axes" in r and "batched" in r for r in reasons), reasons
    assert not list(tmp_path.glob(".jaxlint-*"))


def test_broadcast_leaving_its_jit_is_materialized() -> None:
    finding = case_findings()["outer"]  # the use is not where the vmap is bound: no fix
    assert "the broadcast leaves the jax.jit that makes it" in finding.message
    assert "10 elements (40 bytes)" in finding.message


def test_the_row_is_named_as_the_source_wrote_it() -> None:
    """JAX turns x[-1] into a slice at 5 (a batch of 6): the message says [-1], as written."""
    found = case_findings()
    used = {name: found[name].message.split("(used as ")[1].split(")")[0] for name in ("last_row", "fifth_row")}
    assert used == {"last_row": "[-1]", "fifth_row": "[5]"}
