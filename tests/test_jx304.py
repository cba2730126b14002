"""JX304 reduce-of-broadcast: its fixes (written by the real worker) and messages, on its case
(tests/rules/JX304.py, whose marked lines test_rule_cases.py checks)."""
from __future__ import annotations

from pathlib import Path

import pytest
from helpers import (
    assert_analyzed,
    assert_case_fixed,
    by_target,
    case_source,
    check_in_process,
    checked_case,
    fix_case_with_workers,
    position,
    write,
)

from jaxlint.config.selection import select_rules
from jaxlint.engine.results import CheckResult
from jaxlint.model import Finding

CODE = "JX304"
CASE = case_source(CODE).read_text(encoding="utf-8")

# For each fixable function of the case: (its return expression, after --fix).
FIXED = {
    "max_copies": ("jnp.max(jnp.broadcast_to(v, (100, 10)), axis=0)", "v"),
    "all_method": ("~jnp.broadcast_to(v > 0, (100, 10)).all(axis=-2)", "~(v > 0)"),
    "min_expression": ("jnp.min(jnp.broadcast_to(v + 1.0, (4, 25, 10)), axis=(0, 1)) * 3.0", "(v + 1.0) * 3.0"),
}
FIXLESS = ["product", "arg", "keep", "stretched", "partial_axes"]


@pytest.fixture(scope="module")
def fixed_case(tmp_path_factory: pytest.TempPathFactory) -> tuple[Path, CheckResult]:
    root = tmp_path_factory.mktemp(CODE)
    return root, fix_case_with_workers(CODE, root)


@pytest.fixture(scope="module")
def fixed(fixed_case: tuple[Path, CheckResult]) -> dict[str, Finding]:
    return by_target(fixed_case[1].fixed)


def test_fixes_written_and_verified_by_the_worker(fixed_case) -> None:
    assert_case_fixed(CODE, *fixed_case, FIXED, FIXLESS)


def test_reported_without_fix() -> None:
    found = by_target(checked_case(CODE)[1].findings)
    assert all(found[name].fix is None for name in FIXLESS)


def test_reduce_finding_points_at_the_reduction_with_the_scale(fixed) -> None:
    finding = fixed["max_copies"]
    line, col = position(CASE, "jnp.max(jnp.broadcast_to(v, (100, 10)), axis=0)")
    assert (finding.span.start_line, finding.span.start_col) == (line, col)
    assert finding.message.startswith("reduce_max over axis 0 of f32[100,10], which a broadcast just made "
                                      "of 100 copies of the operand")
    assert "reads 1000 elements (4000 bytes) and does 990 operations per call to return 10 values" in finding.message
    assert (finding.cost.flops, finding.cost.bytes) == (990.0, 4000)
    assert "axes 0, 1 of f32[4,25,10]" in fixed["min_expression"].message
    assert "100 copies" in fixed["min_expression"].message


def test_fixless_messages() -> None:
    found = by_target(checked_case(CODE)[1].findings)
    assert "the product of 100 equal copies is `x ** 100`" in found["product"].message
    assert "the argmax is 0 everywhere" in found["arg"].message
    assert "100 copies" in found["stretched"].message


def run_in_process(path: Path) -> CheckResult:
    return check_in_process([str(path)], select_rules(None, None))


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
    y = jnp.max(jnp.broadcast_to(row + 1.0, (500, 3)), axis=0)
    return y


@jax.jit
def scaled(row):
    return 2.0 * jnp.max(jnp.broadcast_to(row + 1.0, (500, 3)), axis=0)


@jax.jit
def powered(row):
    return -jnp.min(jnp.broadcast_to(row ** 2, (400, 3)), axis=0)


@jax.jit
def attribute(row):
    return jnp.broadcast_to(-row, (400, 3)).max(axis=0).sum()


for f in (assigned, scaled, powered, attribute):
    f(jnp.arange(3.0))
'''


def test_the_replacement_is_parenthesized_only_where_python_needs_it(tmp_path: Path) -> None:
    result = run_in_process(write(tmp_path, "jx304_parentheses", PARENTHESES))
    texts = {f.target: [e.content for e in f.fix.edits] for f in result.findings if f.code == "JX304"}
    assert texts == {"assigned": ["row + 1.0"], "scaled": ["(row + 1.0)"], "powered": ["row ** 2"],
                     "attribute": ["(-row)"]}
