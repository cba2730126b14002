"""JX501 where-nan-gradient on real jaxprs, through the whole pipeline.

Each module is written to a temporary folder and checked once, in the test process
(helpers.check_in_process: the worker's analysis without a worker process; JX501's fix is unsafe,
so --fix applies and verifies nothing here). The behaviour is checked in this
process too: the flagged functions really have a NaN gradient at the point the message names, the
double-where rewrite the fix proposes has the same forward value and a finite gradient, and the
near misses that must stay quiet have finite gradients where it matters.
"""
from __future__ import annotations

import importlib.util
import math
from pathlib import Path
from types import ModuleType

import pytest
from helpers import check_in_process, write

from jaxlint.config.selection import select_rules
from jaxlint.engine.results import CheckResult
from jaxlint.model import Finding
from jaxlint.text import apply_edits

TRIGGERS = '''\
import jax
import jax.numpy as jnp


@jax.jit
def log_gt(x):
    return jnp.where(x > 0, jnp.log(x), 0.0)


@jax.jit
def swapped_compare(x):
    return jnp.where(0 < x, jnp.log(x), 0.0)


@jax.jit
def div_ne(x):
    return jnp.where(x != 0, 1.0 / x, 0.0)


@jax.jit
def sqrt_false_branch(x):
    return jnp.where(x < 0, 0.0, jnp.sqrt(x))


@jax.jit
def arcsin_abs(x):
    return jnp.where(jnp.abs(x) < 1, jnp.arcsin(x), 0.0)


@jax.jit
def arccos_lt(x):
    return jnp.where(x < 1, jnp.arccos(x), 0.0)


@jax.jit
def arctanh_lt(x):
    return jnp.where(x < 1, jnp.arctanh(x), 0.0)


@jax.jit
def log1p_gt(x):
    return jnp.where(x > -1, jnp.log1p(x), 0.0)


@jax.jit
def rsqrt_and(x):
    return jnp.where((x > 0) & (x < 5), jax.lax.rsqrt(x) + 1.0, 0.0)


@jax.jit
def pow_half(x):
    return jnp.where(x > 0, x ** 0.5, 0.0)


@jax.jit
def power_call(x):
    return jnp.where(x > 0, jnp.power(x, 0.5), 0.0)


@jax.jit
def inverse(x):
    return jnp.where(x != 0, x ** -1, 0.0)


@jax.jit
def reciprocal(x):
    return jnp.where(x != 0, jnp.reciprocal(x), 0.0)


@jax.jit
def cbrt_ne(x):
    return jnp.where(x != 0, jnp.cbrt(x), 0.0)


@jax.jit
def chained(x):
    return jnp.where(x > 0, 2.0 * jnp.log(x) + 1.0, 0.0)


@jax.jit
def two_unsafe(x):
    return jnp.where(x > 0,
                     jnp.log(x) + jnp.sqrt(x),
                     0.0)


def vmapped(x):
    return jax.vmap(lambda v: jnp.where(v > 0, jnp.log(v), 0.0))(x)


@jax.jit
def in_scan(x):
    def body(carry, v):
        return carry + jnp.where(v > 0, jnp.sqrt(v), 0.0), None
    return jax.lax.scan(body, 0.0, x)[0]


def total(v):
    return jnp.where(v > 0, jnp.log(v), 0.0).sum()


@jax.jit
def grad_inside(x):
    return jax.grad(total)(x)


x = jnp.arange(3.0)
for fn in (log_gt, swapped_compare, div_ne, sqrt_false_branch, arcsin_abs, arccos_lt, arctanh_lt,
           log1p_gt, rsqrt_and, pow_half, power_call, inverse, reciprocal, cbrt_ne, chained,
           two_unsafe, vmapped, in_scan, grad_inside):
    fn(x)
'''

# function -> (the unsafe expression, x's value named in the message)
EXPECTED = {
    "log_gt": ("jnp.log(x)", "0"),
    "swapped_compare": ("jnp.log(x)", "0"),
    "div_ne": ("1.0 / x", "0"),
    "sqrt_false_branch": ("jnp.sqrt(x)", "-1"),
    "arcsin_abs": ("jnp.arcsin(x)", "1"),
    "arccos_lt": ("jnp.arccos(x)", "1"),
    "arctanh_lt": ("jnp.arctanh(x)", "1"),
    "log1p_gt": ("jnp.log1p(x)", "-1"),
    "rsqrt_and": ("jax.lax.rsqrt(x)", "0"),
    "pow_half": ("x ** 0.5", "0"),
    "power_call": ("jnp.power(x, 0.5)", "0"),
    "inverse": ("x ** -1", "0"),
    "reciprocal": ("jnp.reciprocal(x)", "0"),
    "cbrt_ne": ("jnp.cbrt(x)", "0"),
    "chained": ("jnp.log(x)", "0"),
    "two_unsafe": ("jnp.log(x)", "0"),
    "vmapped": ("jnp.log(v)", "0"),
    "in_scan": ("jnp.sqrt(v)", "0"),
    "grad_inside": ("jnp.log(v)", "0"),  # the where sits in ``total``, differentiated inside
}

QUIET = '''\
import jax
import jax.numpy as jnp
from jax.scipy.special import logsumexp, xlogy


@jax.jit
def double_where(x):
    return jnp.where(x > 0, jnp.log(jnp.where(x > 0, x, 1.0)), 0.0)


@jax.jit
def double_where_false_branch(x):
    return jnp.where(x < 0, 0.0, jnp.sqrt(jnp.where(x < 0, 1.0, x)))


@jax.jit
def library(x, y):
    return (jnp.sinc(x) + jax.nn.softplus(x) + xlogy(x, y) + logsumexp(x) + jnp.linalg.norm(x)
            + jax.nn.relu(x) + jax.nn.log_sigmoid(x))


@jax.jit
def library_in_where(x, y):
    return jnp.where(x > 0, jnp.sinc(x) + xlogy(x, y) + jax.nn.softplus(x), 0.0)


@jax.jit
def other_variable(x, y):
    return jnp.where(y > 0, jnp.log(x), 0.0)


@jax.jit
def log_threshold_below_zero(x):
    return jnp.where(x > -1, jnp.log(x), 0.0)


@jax.jit
def arctanh_outside(x):
    return jnp.where(x > 1, 0.0, jnp.arctanh(x))


@jax.jit
def safe_power(x):
    return jnp.where(x > 0, x ** 2.0, 0.0) + jnp.where(x > 0, x ** 2, 0.0)


@jax.jit
def stopped(x):
    return jnp.where(x > 0, jnp.log(jax.lax.stop_gradient(x)), 0.0)


@jax.jit
def shifted_input(x):
    return jnp.where(x > 0, jnp.log(x + 1.0), 0.0)


@jax.jit
def constant_input(x):
    c = jnp.linspace(-1.0, 1.0, 3)
    return jnp.where(c > 0, jnp.log(c), 0.0) * x


@jax.jit
def integer_input(n):
    return jnp.where(n > 0, jnp.log(n), 0.0)


@jax.jit
def safe_op(x):
    return jnp.where(x > 0, jnp.exp(x) * jnp.sin(x), 0.0)


def log_of(v):
    return jnp.log(v)


@jax.jit
def not_shown_in_the_call(x):
    # Real NaN gradients, but the where call's own text shows neither the test nor the log:
    # the rule reports only the documented form.
    positive = x > 0
    return jnp.where(positive, jnp.log(x), 0.0) + jnp.where(x > 0, log_of(x), 0.0)


x = jnp.arange(3.0)
for fn in (double_where, double_where_false_branch, log_threshold_below_zero, arctanh_outside,
           safe_power, stopped, shifted_input, constant_input, safe_op, not_shown_in_the_call):
    fn(x)
library(x, x)
library_in_where(x, x)
other_variable(x, x)
integer_input(jnp.arange(3))
'''

# Quiet functions of one float argument whose gradient has no NaN anywhere on this grid.
FINITE_GRADIENT = ["double_where", "double_where_false_branch", "log_threshold_below_zero",
                   "arctanh_outside", "safe_power", "safe_op"]
GRID = [-2.0, -1.0, -0.5, 0.0, 0.5, 1.0, 2.0, 3.0]


def run(path: Path, fix: bool = False) -> CheckResult:
    return check_in_process([str(path)], select_rules(["JX501"], None), fix=fix)


def load(path: Path) -> ModuleType:
    spec = importlib.util.spec_from_file_location(path.stem, path)
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def grad_at(fn, value: float) -> float:
    import jax
    import jax.numpy as jnp

    return float(jax.grad(lambda v: fn(v).sum())(jnp.full((1,), value, jnp.float32))[0])


def value_at(fn, value: float) -> float:
    import jax.numpy as jnp

    return float(jnp.ravel(fn(jnp.full((1,), value, jnp.float32)))[0])


@pytest.fixture(scope="module")
def triggers(tmp_path_factory: pytest.TempPathFactory) -> tuple[Path, CheckResult]:
    path = write(tmp_path_factory.mktemp("jx501"), "jx501_triggers", TRIGGERS)
    return path, run(path, fix=True)


@pytest.fixture(scope="module")
def found(triggers) -> dict[str, Finding]:
    by_target: dict[str, Finding] = {}
    for finding in triggers[1].findings:
        assert finding.target not in by_target, f"two findings for {finding.target}"
        by_target[finding.target] = finding
    return by_target


def test_every_trigger_is_reported_once(triggers, found) -> None:
    path, result = triggers
    assert result.skipped == [] and result.traced == len(EXPECTED)
    assert set(found) == set(EXPECTED)
    assert all(f.code == "JX501" and f.name == "where-nan-gradient" and f.severity == "error"
               for f in found.values())


def test_unsafe_fix_is_never_applied(triggers, found) -> None:
    path, result = triggers
    assert path.read_text(encoding="utf-8") == TRIGGERS
    assert result.fixed == [] and result.fix_rejected == []
    assert all(f.fix is not None and f.fix.applicability == "unsafe" for f in found.values())


def test_points_at_the_where_call_and_names_the_point(found) -> None:
    lines = TRIGGERS.splitlines()
    for name, (unsafe, witness) in EXPECTED.items():
        finding = found[name]
        line = lines[finding.span.start_line - 1]
        assert line[finding.span.start_col:].startswith("jnp.where("), name
        variable = "v" if name in ("vmapped", "in_scan", "grad_inside") else "x"
        assert f"excludes {variable}={witness} from {unsafe}" in finding.message, finding.message
        assert f"the forward value is right, but the gradient is NaN at {variable}={witness}" \
            in finding.message


def test_log_message_and_edit(found) -> None:
    finding = found["log_gt"]
    assert finding.message.endswith(
        "Guard the input with the same predicate: jnp.log(jnp.where(x > 0, x, 1.0)).")
    assert [e.content for e in finding.fix.edits] == ["jnp.where(x > 0, x, 1.0)"]
    span = found["two_unsafe"].span
    assert (span.start_line, span.end_line) == (TRIGGERS.splitlines().index(
        "    return jnp.where(x > 0,") + 1, TRIGGERS.splitlines().index("                     0.0)") + 1)
    assert "(and 1 other unsafe op in this where)" in found["two_unsafe"].message
    assert len(found["two_unsafe"].fix.edits) == 2
    assert [e.content for e in found["sqrt_false_branch"].fix.edits] == ["jnp.where(x < 0, 1.0, x)"]
    assert [e.content for e in found["arcsin_abs"].fix.edits] == ["jnp.where(jnp.abs(x) < 1, x, 0.0)"]


def test_flagged_gradient_is_nan_and_the_rewrite_fixes_it(triggers, found, tmp_path: Path) -> None:
    path, _ = triggers
    edits = [e for f in found.values() for e in f.fix.edits]
    fixed_path = write(tmp_path, "jx501_rewritten", apply_edits(TRIGGERS, edits))
    original, rewritten = load(path), load(fixed_path)
    # grad_inside computes the gradient itself: its value is NaN, and finite after the rewrite.
    assert math.isnan(value_at(original.grad_inside, 0.0))
    assert math.isfinite(value_at(rewritten.grad_inside, 0.0))
    for name, (_, witness) in EXPECTED.items():
        if name == "grad_inside":
            continue
        point = float(witness)
        assert math.isnan(grad_at(getattr(original, name), point)), name
        assert math.isfinite(grad_at(getattr(rewritten, name), point)), name
        for value in GRID:  # same forward value everywhere (NaN where the original is NaN)
            before, after = value_at(getattr(original, name), value), value_at(getattr(rewritten, name), value)
            assert before == after or (math.isnan(before) and math.isnan(after)), (name, value)
    # The rewritten file is clean.
    assert run(fixed_path).findings == []


@pytest.fixture(scope="module")
def quiet(tmp_path_factory: pytest.TempPathFactory) -> tuple[Path, CheckResult]:
    path = write(tmp_path_factory.mktemp("jx501_quiet"), "jx501_quiet", QUIET)
    return path, run(path)


def test_near_misses_stay_quiet(quiet) -> None:
    _, result = quiet
    assert result.skipped == [] and result.traced == QUIET.count("@jax.jit\n")
    assert result.findings == [], [f.message for f in result.findings]


def test_near_misses_have_finite_gradients(quiet) -> None:
    module = load(quiet[0])
    for name in FINITE_GRADIENT:
        for value in GRID:
            assert not math.isnan(grad_at(getattr(module, name), value)), (name, value)
