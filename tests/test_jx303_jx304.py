"""JX303 constant-index-gather and JX304 reduce-of-broadcast on real jaxprs, end to end.

Each module is written to a temporary folder and checked once; the tests then assert on that one
result. The triggers are checked with --fix by the real worker (the fixes are written and verified
in a fresh worker: both rules' fixes go through the process boundary here); the other modules are
analyzed in the test process (helpers.check_in_process: the worker's analysis without a worker).
"""
from __future__ import annotations

from pathlib import Path

import pytest
from helpers import assert_analyzed, check_in_process, write

from jaxlint.config.selection import select_rules
from jaxlint.engine.check import check
from jaxlint.engine.results import CheckResult
from jaxlint.model import Finding

TRIGGERS = '''\
import jax
import jax.numpy as jnp
import numpy as np


@jax.jit
def columns(x):
    return x[:, np.arange(0, 4)]


@jax.jit
def strided_list(v):
    return v[jnp.array([0, 2, 4])]


@jax.jit
def jnp_arange_step(v):
    return v[jnp.arange(1, 9, 3)] + 1.0


@jax.jit
def rows_first(x):
    return x[np.array([1, 2]), :]


@jax.jit
def from_end(v):
    return v[np.array([-3, -2, -1])]


@jax.jit
def max_copies(v):
    return jnp.max(jnp.broadcast_to(v, (5, 10)), axis=0)


@jax.jit
def all_method(v):
    return ~jnp.broadcast_to(v > 0, (5, 10)).all(axis=-2)


@jax.jit
def min_expression(v):
    return jnp.min(jnp.broadcast_to(v + 1.0, (4, 5, 10)), axis=(0, 1)) * 3.0


x = jnp.ones((3, 10))
v = jnp.arange(10.0)
columns(x)
rows_first(x)
for fn in (strided_list, jnp_arange_step, from_end, max_copies, all_method, min_expression):
    fn(v)
'''

# For each function of TRIGGERS: (its return line, after --fix).
FIXED = {
    "columns": ("x[:, np.arange(0, 4)]", "x[:, 0:4]"),
    "strided_list": ("v[jnp.array([0, 2, 4])]", "v[0:5:2]"),
    "jnp_arange_step": ("v[jnp.arange(1, 9, 3)] + 1.0", "v[1:8:3] + 1.0"),
    "rows_first": ("x[np.array([1, 2]), :]", "x[1:3, :]"),
    "from_end": ("v[np.array([-3, -2, -1])]", "v[-3:]"),
    "max_copies": ("jnp.max(jnp.broadcast_to(v, (5, 10)), axis=0)", "v"),
    "all_method": ("~jnp.broadcast_to(v > 0, (5, 10)).all(axis=-2)", "~(v > 0)"),
    "min_expression": ("jnp.min(jnp.broadcast_to(v + 1.0, (4, 5, 10)), axis=(0, 1)) * 3.0", "(v + 1.0) * 3.0"),
}
CODES = {name: ("JX303" if name in ("columns", "strided_list", "jnp_arange_step", "rows_first", "from_end")
                else "JX304") for name in FIXED}

FIXLESS = '''\
import jax
import jax.numpy as jnp
import numpy as np


@jax.jit
def product(v):
    return jnp.prod(jnp.broadcast_to(v, (5, 10)), axis=0)


@jax.jit
def arg(v):
    return jnp.argmax(jnp.broadcast_to(v, (5, 10)), axis=0)


@jax.jit
def keep(v):
    return jnp.max(jnp.broadcast_to(v, (5, 10)), axis=0, keepdims=True)


@jax.jit
def stretched(m):
    return jnp.max(jnp.broadcast_to(m[:1], (4, 10)), axis=0)


@jax.jit
def partial_axes(v):
    return jnp.max(jnp.broadcast_to(v, (4, 5, 10)), axis=0)


@jax.jit
def mixed_signs(v):
    return v[np.array([-10, 1])]


v = jnp.arange(10.0)
for fn in (product, arg, keep, partial_axes, mixed_signs):
    fn(v)
stretched(jnp.ones((4, 10)))
'''

QUIET = '''\
import jax
import jax.numpy as jnp
import numpy as np


@jax.jit
def permutation(v):
    return v[np.array([3, 1, 2])]


@jax.jit
def traced_index(v, i):
    return v[i]


@jax.jit
def plain_slice(v):
    return v[2:8]


@jax.jit
def repeated(v):
    return v[np.array([2, 2, 2])]


@jax.jit
def decreasing(v):
    return v[np.array([4, 3, 2])]


@jax.jit
def out_of_bounds(v):
    return v[np.array([8, 9, 10])]


@jax.jit
def single(v):
    return v[np.array([3])]


@jax.jit
def index_in_variable(v):
    idx = np.arange(0, 4)
    return v[idx]


@jax.jit
def sum_copies(v):
    return jnp.sum(jnp.broadcast_to(v, (5, 10)), axis=0) + jnp.mean(jnp.broadcast_to(v, (5, 10)), axis=0)


@jax.jit
def original_axis(v):
    return jnp.max(jnp.broadcast_to(v, (5, 10)), axis=1)


@jax.jit
def all_axes(v):
    return jnp.max(jnp.broadcast_to(v, (5, 10)))


@jax.jit
def size_one(v):
    return jnp.max(v[None], axis=0)


@jax.jit
def constant_broadcast(v):
    return jnp.max(jnp.full((5, 10), 2.0), axis=0) + v


v = jnp.arange(10.0)
traced_index(v, jnp.arange(3))
for fn in (permutation, plain_slice, repeated, decreasing, out_of_bounds, single, index_in_variable,
           sum_copies, original_axis, all_axes, size_one, constant_broadcast):
    fn(v)
'''


def run(path: Path, fix: bool = False) -> CheckResult:
    """The real pipeline: worker processes."""
    return check([str(path)], select_rules(None, None), fix=fix)


def run_in_process(path: Path) -> CheckResult:
    return check_in_process([str(path)], select_rules(None, None))


def by_target(findings: list[Finding]) -> dict[str, Finding]:
    found: dict[str, Finding] = {}
    for finding in findings:
        assert finding.target not in found, f"two findings for {finding.target}"
        found[finding.target] = finding
    return found


@pytest.fixture(scope="module")
def triggers(tmp_path_factory: pytest.TempPathFactory) -> tuple[Path, CheckResult]:
    path = write(tmp_path_factory.mktemp("triggers"), "jx303_jx304_triggers", TRIGGERS)
    return path, run(path, fix=True)


@pytest.fixture(scope="module")
def fixed(triggers: tuple[Path, CheckResult]) -> dict[str, Finding]:
    return by_target(triggers[1].fixed)


def test_every_trigger_is_reported_and_fixed(triggers, fixed) -> None:
    _, result = triggers
    assert {name: f.code for name, f in fixed.items()} == CODES
    assert result.fix_rejected == []
    assert result.findings == []  # analyzed again after the fix: clean


def test_fixed_file_text(triggers) -> None:
    path, _ = triggers
    expected = TRIGGERS
    for before, after in FIXED.values():
        assert f"    return {before}\n" in expected, before
        expected = expected.replace(f"    return {before}\n", f"    return {after}\n")
    assert path.read_text(encoding="utf-8") == expected


def position(text: str, snippet: str) -> tuple[int, int]:
    index = text.index(snippet)
    return text.count("\n", 0, index) + 1, index - (text.rfind("\n", 0, index) + 1)


def test_gather_finding_points_at_the_subscript_with_the_scale(fixed) -> None:
    finding = fixed["columns"]
    line, col = position(TRIGGERS, "x[:, np.arange(0, 4)]")
    assert (finding.span.start_line, finding.span.start_col, finding.span.end_col) == \
        (line, col, col + len("x[:, np.arange(0, 4)]"))
    assert finding.message.startswith("gather of 4 positions along axis 1 (of 10) with constant "
                                      "indices 0, 1, 2, 3: a strided range, which the static slice `[:, 0:4]`")
    assert finding.cost.basis == "shapes" and finding.cost.bytes == 3 * 4 * 4 + 4 * 4  # result + indices
    assert f"about {3 * 4 * 4 + 4 * 4} bytes more memory traffic" in finding.message
    assert finding.fix.applicability == "safe"
    assert "indices 1, 4, 7:" in fixed["jnp_arange_step"].message
    assert "indices 7, 8, 9:" in fixed["from_end"].message


def test_reduce_finding_points_at_the_reduction_with_the_scale(fixed) -> None:
    finding = fixed["max_copies"]
    line, col = position(TRIGGERS, "jnp.max(jnp.broadcast_to(v, (5, 10)), axis=0)")
    assert (finding.span.start_line, finding.span.start_col) == (line, col)
    assert finding.message.startswith("reduce_max over axis 0 of f32[5,10], which a broadcast just made "
                                      "of 5 copies of the operand")
    assert "reads 50 elements (200 bytes) and does 40 operations per call to return 10 values" in finding.message
    assert (finding.cost.flops, finding.cost.bytes) == (40.0, 200)
    assert "axes 0, 1 of f32[4,5,10]" in fixed["min_expression"].message
    assert "20 copies" in fixed["min_expression"].message


def test_reported_without_fix(tmp_path: Path) -> None:
    result = run_in_process(write(tmp_path, "jx303_jx304_fixless", FIXLESS))
    assert_analyzed(result, 6)
    found = by_target(result.findings)
    assert {name: f.code for name, f in found.items()} == {
        "product": "JX304", "arg": "JX304", "keep": "JX304", "stretched": "JX304",
        "partial_axes": "JX304", "mixed_signs": "JX303"}
    assert all(f.fix is None for f in found.values())
    assert "the product of 5 equal copies is `x ** 5`" in found["product"].message
    assert "the argmax is 0 everywhere" in found["arg"].message
    assert "4 copies" in found["stretched"].message


def test_near_misses_are_quiet(tmp_path: Path) -> None:
    result = run_in_process(write(tmp_path, "jx303_jx304_quiet", QUIET))
    assert_analyzed(result, 13)
    assert [f.message for f in result.findings if f.code in ("JX303", "JX304")] == []


SYMBOLIC = '''\
import jax
import jax.numpy as jnp
import numpy as np


# jaxlint: args v=f32[n]
@jax.jit
def symbolic_operand(v):
    return jnp.max(jnp.broadcast_to(v, (4,) + v.shape), axis=0)


# jaxlint: args x=f32[8, n]
@jax.jit
def symbolic_copies(x):
    return jnp.max(jnp.broadcast_to(x[:5, 0], (x.shape[1], 5)), axis=0)


# jaxlint: args x=f32[n, m]
@jax.jit
def symbolic_gather(x):
    return x[:, np.arange(0, 3)]
'''


def test_symbolic_sizes(tmp_path: Path) -> None:
    try:
        from jax import export  # noqa: F401
    except ImportError:
        pytest.skip("jax.export cannot be imported here (JAX 0.4.x without absl-py)")
    result = run_in_process(write(tmp_path, "jx303_jx304_symbolic", SYMBOLIC))
    assert_analyzed(result, 3)
    [finding] = [f for f in result.findings if f.code in ("JX303", "JX304")]
    # Static copies of a symbolic operand: reported and fixable; symbolic copies (maybe 0 or 1)
    # and a gather along a symbolic axis (bounds unknown): quiet.
    assert finding.target == "symbolic_operand" and finding.fix is not None
    assert "reads 4 copies of the operand" in finding.message


PARENTHESES = '''\
import jax
import jax.numpy as jnp


@jax.jit
def assigned(row):
    y = jnp.max(jnp.broadcast_to(row + 1.0, (5, 3)), axis=0)
    return y


@jax.jit
def scaled(row):
    return 2.0 * jnp.max(jnp.broadcast_to(row + 1.0, (5, 3)), axis=0)


@jax.jit
def powered(row):
    return -jnp.min(jnp.broadcast_to(row ** 2, (4, 3)), axis=0)


@jax.jit
def attribute(row):
    return jnp.broadcast_to(-row, (2, 3)).max(axis=0).sum()


for f in (assigned, scaled, powered, attribute):
    f(jnp.arange(3.0))
'''


def test_the_replacement_is_parenthesized_only_where_python_needs_it(tmp_path: Path) -> None:
    result = run_in_process(write(tmp_path, "jx304_parentheses", PARENTHESES))
    texts = {f.target: [e.content for e in f.fix.edits] for f in result.findings if f.code == "JX304"}
    assert texts == {"assigned": ["row + 1.0"], "scaled": ["(row + 1.0)"], "powered": ["row ** 2"],
                     "attribute": ["(-row)"]}
