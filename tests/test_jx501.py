"""JX501 where-nan-gradient on real jaxprs, through the whole pipeline.

The module is JX501's case (tests/rules/JX501.py, whose marked lines and quiet near misses
test_rule_cases.py checks), checked here once more with --fix, in the test process
(helpers.check_in_process: the worker's analysis without a worker process; JX501's fix is unsafe,
so --fix applies and verifies nothing). The behaviour is checked in this
process too: the flagged functions really have a NaN gradient at the point the message names, the
double-where rewrite the fix proposes has the same forward value and a finite gradient, and the
near misses that must stay quiet have finite gradients where it matters.
"""
from __future__ import annotations

import importlib.util
import math
import textwrap
from pathlib import Path
from types import ModuleType

import pytest
from helpers import by_target, case_source, check_case, check_in_process, write

from jaxlint.config.selection import select_rules
from jaxlint.engine.results import CheckResult
from jaxlint.model import Finding
from jaxlint.text import apply_edits

TRIGGERS = case_source("JX501").read_text(encoding="utf-8")

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
    "rows_log": ("jnp.log(row)", "0"),  # a jit of a vmap, called with the batch at import
}
# The named forms: function -> (the unsafe expression, x's name, x's value named, the fix's edit or
# None: offered only where the op is spelled in the where's own branch).
NAMED = {
    "named_mask": ("jnp.log(x)", "x", "0", "jnp.where(positive, x, 1.0)"),
    "named_op": ("jnp.log(x)", "x", "0", None),
    "named_both": ("jnp.sqrt(x)", "x", "0", None),
    "named_false_branch": ("jnp.sqrt(x)", "x", "-1", "jnp.where(negative, 1.0, x)"),
    "through_helper": ("jnp.log(v)", "v", "0", None),
    "library_log10": ("jnp.log10(x)", "x", "0", None),
    "lax_select": ("jnp.log(x)", "x", "0", None),  # lax.select(pred, x, 1.0) would not broadcast 1.0
}
# Clamps of a named op or of a library call holding it: function -> (the unsafe expression, its input).
NAMED_CLAMPS = {"named_clip": ("jnp.log(p)", "p"), "clip_library_log10": ("jnp.log10(p)", "p")}


def named_clamps() -> dict[str, tuple[str, str]]:
    """NAMED_CLAMPS for this JAX: before 0.7 log10 divides by a traced log(10.0), and its clamp is
    quiet (tests/rules/JX501.py)."""
    from jaxlint.jaxapi import version

    return {k: v for k, v in NAMED_CLAMPS.items() if version.JAX_VERSION >= (0, 7) or k != "clip_library_log10"}
# A division by a sum over the kept entries: function -> (the quotient, the denominator).
MASKED = {
    "masked_sum": ("p * q / s", "s"),
    "masked_sum_inline": ("p / jnp.sum(jnp.where(n > 0, p, 0.0))", "jnp.sum(jnp.where(n > 0, p, 0.0))"),
    "masked_count": ("p / jnp.sum(mask)", "jnp.sum(mask)"),
    "masked_product_sum": ("p * q / s", "s"),  # sum(mask * p), the mask cast to a float
    "masked_bool_product_sum": ("p * q / s", "s"),  # sum(p * (n > 0))
}
MASKED_QUIET = ["masked_sum_guarded", "masked_sum_other_mask", "masked_sum_filler_one", "masked_sum_of_discarded",
                "masked_count_clamped", "masked_product_other_mask"]
# The guard joined with another boolean: function -> (the unsafe expression, the fix's edit).
# Guards before loops: function -> the JAX call that shows the NaN (tests/rules/JX501.py); the guard
# whose result only enters a while loop is a near miss (reverse mode refuses the loop).
LOOPS = {"where_into_a_while_loop_and_out": "grad", "where_into_a_scan": "grad"}
JOINED = {
    "and_valid": ("jnp.log(x)", "jnp.where((x > 0) & valid, x, 1.0)"),
    "logical_and_valid": ("jnp.sqrt(x)", "jnp.where(jnp.logical_and(valid, x > 0), x, 1.0)"),
    "named_and_valid": ("1.0 / x", "jnp.where(keep, x, 1.0)"),
    "or_other_false_branch": ("jnp.log(x)", "jnp.where((x <= 0) | other, 1.0, x)"),
}
# The clamp guard: function -> (the unsafe expression, its input's name, the fix's text or None).
CLAMP_EXPECTED = {
    "clip_log_finfo": ("jnp.log(p)", "p", "jnp.log(jnp.clip(p, jnp.finfo(p.dtype).tiny))"),
    "clip_log_keyword": ("jnp.log(p)", "p", "jnp.log(jnp.clip(p, jnp.exp(-10.0)))"),
    "maximum_log": ("jnp.log(p)", "p", "jnp.log(jnp.maximum(p, jnp.finfo(p.dtype).tiny))"),
    "minimum_neg_log": ("jnp.log(p)", "p", None),  # -2 * log(p): no plain lower clamp to move
    "clip_sqrt": ("jnp.sqrt(x)", "x", "jnp.sqrt(jnp.clip(x, 1e-6 ** 2))"),
    "clip_reciprocal": ("1.0 / x", "x", None),
    "lax_clamp": ("jnp.log(p)", "p", None),
    "aliased_maximum": ("jnp.log(p)", "p", None),  # a bare name: no module to spell exp with
    "clip_method": ("jnp.log(p)", "p", None),
    "clip_of_helper": ("jnp.log(v)", "v", None),  # the log is in the helper
    "clip_vmapped": ("jnp.log(v)", "v", "jnp.log(jnp.clip(v, jnp.finfo(v.dtype).tiny))"),
    "clip_in_scan": ("jnp.log(v)", "v", "jnp.log(jnp.maximum(v, jnp.finfo(v.dtype).tiny))"),
    "clip_product_with_a_bare_norm": ("1.0 / ((jnp.abs(a) + 1e-6) * jnp.abs(a))", "(jnp.abs(a) + 1e-6) * jnp.abs(a)",
                                      None),
    "clip_kept_at_zero": ("1.0 / safe", "safe", None),  # where(d >= 0, d, 1) keeps d = 0
    "clip_difference_of_inputs": ("1.0 / (a - b)", "a - b", None),  # two equal arguments
    "clip_sum_of_differences": ("1.0 / jnp.sum(u - v)", "jnp.sum(u - v)", None),  # no two values coincide
    "clip_difference_of_inputs_in_a_branch": ("1.0 / (u - v)", "u - v", None),  # the function's inputs
}
# The clamps of two arguments, NaN where both are 0.
TWO_ARGUMENTS = ("clip_difference_of_inputs", "clip_sum_of_differences", "clip_difference_of_inputs_in_a_branch")
# Quiet clamps whose gradient at 0 and above is not NaN (inf for the tie and the upper bound).
CLAMP_NOT_NAN = ["clip_before_log", "clip_log_upper", "clip_sqrt_at_zero"]

# The case's quiet functions of one float argument whose gradient has no NaN anywhere on this grid.
FINITE_GRADIENT = ["double_where", "double_where_false_branch", "log_threshold_below_zero",
                   "arctanh_outside", "safe_power", "safe_op", "clip_tanh", "clip_log_positive",
                   "clip_positive_denominator", "clip_kept_denominator", "clip_clamped_square"]
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
    """The case checked with --fix (its fixes are unsafe: nothing is applied)."""
    root = tmp_path_factory.mktemp("jx501")
    return root / "JX501.py", check_case("JX501", root, fix=True)


@pytest.fixture(scope="module")
def found(triggers) -> dict[str, Finding]:
    """JX501's findings (the case runs every rule: JX703 reports one of its near misses)."""
    return by_target(triggers[1].findings, "JX501")


def test_every_trigger_is_an_error(found) -> None:
    assert set(found) == (set(EXPECTED) | set(CLAMP_EXPECTED) | set(NAMED) | set(MASKED) | set(named_clamps())
                          | set(JOINED) | set(LOOPS))
    assert all(f.code == "JX501" and f.name == "where-nan-gradient" and f.severity == "error"
               for f in found.values())


def test_unsafe_fix_is_never_applied(triggers, found) -> None:
    path, result = triggers
    assert path.read_text(encoding="utf-8") == TRIGGERS
    assert result.fixed == [] and result.fix_rejected == []
    assert all(found[name].fix is not None for name in EXPECTED)
    assert all(f.fix is None or f.fix.applicability == "unsafe" for f in found.values())


def test_points_at_the_where_call_and_names_the_point(found) -> None:
    lines = TRIGGERS.splitlines()
    for name, (unsafe, witness) in EXPECTED.items():
        finding = found[name]
        line = lines[finding.span.start_line - 1]
        assert line[finding.span.start_col:].startswith("jnp.where("), name
        variable = {"vmapped": "v", "in_scan": "v", "grad_inside": "v", "rows_log": "row"}.get(name, "x")
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
        "    return jnp.where(x > 0,  # expect: JX501") + 1, TRIGGERS.splitlines().index("                     0.0)") + 1)
    assert "(and 1 other unsafe op in this where)" in found["two_unsafe"].message
    assert len(found["two_unsafe"].fix.edits) == 2
    assert [e.content for e in found["sqrt_false_branch"].fix.edits] == ["jnp.where(x < 0, 1.0, x)"]
    assert [e.content for e in found["arcsin_abs"].fix.edits] == ["jnp.where(jnp.abs(x) < 1, x, 0.0)"]


@pytest.mark.slow
def test_flagged_gradient_is_nan_and_the_rewrite_fixes_it(triggers, found, tmp_path: Path) -> None:
    path, _ = triggers
    edits = [e for name in EXPECTED for e in found[name].fix.edits]
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
    # The rewritten file has no where finding left (the clamp guards: their own test).
    assert not {f.target for f in run(fixed_path).findings} & set(EXPECTED)


def test_near_misses_have_finite_gradients(triggers) -> None:
    module = load(triggers[0])
    for name in FINITE_GRADIENT:
        for value in GRID:
            assert not math.isnan(grad_at(getattr(module, name), value)), (name, value)


def test_clamp_points_at_the_guard_and_names_the_point(found) -> None:
    lines = TRIGGERS.splitlines()
    for name, (unsafe, variable, fix) in CLAMP_EXPECTED.items():
        finding = found[name]
        text = lines[finding.span.start_line - 1][finding.span.start_col:]
        assert any(text.startswith(guard) for guard in ("jnp.clip(", "jnp.maximum(", "jnp.minimum(",
                                                        "jax.lax.clamp(", "floor_at(", "jnp.log(p).clip(")), name
        assert f"clamps away {variable}=0, where {unsafe} has an infinite derivative" in finding.message, name
        assert f"the gradient is NaN at {variable}=0" in finding.message, name
        assert [e.content for e in finding.fix.edits] == [fix] if fix else finding.fix is None, name
        if fix:
            assert finding.message.endswith(f"Clamp the input instead: {fix}."), finding.message


@pytest.mark.slow
def test_clamped_gradient_is_nan_and_the_moved_clamp_fixes_it(triggers, found, tmp_path: Path) -> None:
    path, _ = triggers
    edits = [e for name in CLAMP_EXPECTED if found[name].fix for e in found[name].fix.edits]
    original = load(path)
    rewritten_path = write(tmp_path, "jx501_clamp_rewritten", apply_edits(TRIGGERS, edits))
    rewritten = load(rewritten_path)
    for name, (_, _, fix) in CLAMP_EXPECTED.items():
        if name in TWO_ARGUMENTS:  # a = b = 0
            assert math.isnan(grad_at(lambda a, f=getattr(original, name): f(a, a * 0), 0.0)), name
            continue
        assert math.isnan(grad_at(getattr(original, name), 0.0)), name
        if fix is None:
            continue
        assert math.isfinite(grad_at(getattr(rewritten, name), 0.0)), name
        for value in (0.5, 1.0, 2.0, 3.0):  # nothing clamped: the same value
            assert value_at(getattr(original, name), value) == value_at(getattr(rewritten, name), value)
    # Clamped: the bound, up to rounding (exp then log), or log of the smallest normal number.
    assert value_at(rewritten.clip_log_keyword, 0.0) == pytest.approx(-10.0, rel=1e-6)
    assert value_at(rewritten.clip_log_finfo, 0.0) == pytest.approx(math.log(1.1754943508222875e-38), rel=1e-6)
    # Rewritten, the clamps are quiet (the where guards and the clamps without a fix remain).
    left = {f.target for f in run(rewritten_path).findings}
    assert left == set(EXPECTED) | set(NAMED) | set(MASKED) | set(named_clamps()) | set(JOINED) | set(LOOPS) | {
        name for name, (_, _, fix) in CLAMP_EXPECTED.items() if fix is None}


def test_quiet_clamps_have_no_nan_gradient(triggers) -> None:
    module = load(triggers[0])
    for name in CLAMP_NOT_NAN:
        for value in (0.0, 0.5, 1.0, 2.0):
            assert not math.isnan(grad_at(getattr(module, name), value)), (name, value)


@pytest.mark.slow
def test_named_forms_point_at_the_where_and_name_the_point(found) -> None:
    lines = TRIGGERS.splitlines()
    for name, (unsafe, variable, witness, fix) in NAMED.items():
        finding = found[name]
        text = lines[finding.span.start_line - 1][finding.span.start_col:]
        assert text.startswith(("jnp.where(", "jax.lax.select(")), name
        assert f"excludes {variable}={witness} from {unsafe}" in finding.message, finding.message
        assert f"the gradient is NaN at {variable}={witness}" in finding.message, finding.message
        if fix is None:
            assert finding.fix is None, name
        else:
            assert [e.content for e in finding.fix.edits] == [fix], name
    assert found["named_mask"].message.endswith(
        "Guard the input with the same predicate: jnp.log(jnp.where(positive, x, 1.0)).")
    assert found["lax_select"].message.endswith(
        "Guard the input with the same predicate: jnp.log(jnp.where(x > 0, x, 1.0)).")
    for name, (unsafe, variable) in named_clamps().items():
        finding = found[name]
        assert f"clamps away {variable}=0, where {unsafe} has an infinite derivative" in finding.message, name
        assert finding.fix is None and math.isnan(grad_at(getattr(load(case_source("JX501")), name), 0.0)), name


@pytest.mark.slow
def test_named_forms_have_nan_gradients_and_the_fix_removes_them(triggers, found, tmp_path: Path) -> None:
    path, _ = triggers
    edits = [e for name in NAMED if found[name].fix for e in found[name].fix.edits]
    original = load(path)
    rewritten = load(write(tmp_path, "jx501_named_rewritten", apply_edits(TRIGGERS, edits)))
    for name, (_, _, witness, fix) in NAMED.items():
        assert math.isnan(grad_at(getattr(original, name), float(witness))), name
        if fix is not None:
            assert math.isfinite(grad_at(getattr(rewritten, name), float(witness))), name
            for value in GRID:
                before, after = value_at(getattr(original, name), value), value_at(getattr(rewritten, name), value)
                assert before == after or (math.isnan(before) and math.isnan(after)), (name, value)
    for name in ("named_mask_keeps_zero", "named_double_where"):
        assert not math.isnan(grad_at(getattr(original, name), 0.0)), name


def test_masked_sum_message_and_no_fix(found) -> None:
    for name, (quotient, total) in MASKED.items():
        finding = found[name]
        assert finding.fix is None, name
        assert finding.message.startswith(
            f"jnp.where divides by {total} in {quotient}, a sum over the entries this where keeps: where it "
            f"keeps none, {total} is 0"), finding.message
        assert finding.message.endswith(f"Divide by a sum that cannot be 0: jnp.where({total} == 0, 1.0, {total})."), \
            finding.message


def _masked_gradient(fn, n: list[float]) -> list[float]:
    """The gradient of ``fn``'s sum with respect to every float argument but the last (the mask's n)."""
    import jax
    import jax.numpy as jnp

    p = jnp.array([1.0, 2.0, 3.0], jnp.float32)
    arity = fn.__wrapped__.__code__.co_argcount if hasattr(fn, "__wrapped__") else fn.__code__.co_argcount
    grads = jax.grad(lambda *a: fn(*a, jnp.array(n, jnp.float32)).sum(), argnums=tuple(range(arity - 1)))(
        *[p] * (arity - 1))
    return [float(g) for gradient in grads for g in gradient]


def test_masked_sums_are_nan_exactly_where_every_entry_is_masked(triggers) -> None:
    module = load(triggers[0])
    for name in MASKED:
        assert all(math.isnan(g) for g in _masked_gradient(getattr(module, name), [0.0, -1.0, 0.0])), name
        assert not any(math.isnan(g) for g in _masked_gradient(getattr(module, name), [1.0, -1.0, 0.0])), name
    for name in MASKED_QUIET:
        assert not any(math.isnan(g) for g in _masked_gradient(getattr(module, name), [0.0, -1.0, 0.0])), name


def _joined_gradient(fn, value: float, flag: bool) -> float:
    import jax
    import jax.numpy as jnp

    return float(jax.grad(lambda v: fn(v, jnp.full((1,), flag)).sum())(jnp.full((1,), value, jnp.float32))[0])


def test_joined_guards_name_the_point_and_their_gradient_is_nan(triggers, found, tmp_path: Path) -> None:
    """And-ed with another boolean (or-ed under the negated test), the where discards x = 0 whatever
    the other is: the gradient is NaN there for either value, and the double where removes it."""
    path, _ = triggers
    original = load(path)
    edits = [e for name in JOINED for e in found[name].fix.edits]
    rewritten = load(write(tmp_path, "jx501_joined_rewritten", apply_edits(TRIGGERS, edits)))
    for name, (unsafe, fix) in JOINED.items():
        finding = found[name]
        assert f"excludes x=0 from {unsafe}" in finding.message, finding.message
        assert [e.content for e in finding.fix.edits] == [fix], name
        for flag in (True, False):
            assert math.isnan(_joined_gradient(getattr(original, name), 0.0, flag)), (name, flag)
            assert math.isfinite(_joined_gradient(getattr(rewritten, name), 0.0, flag)), (name, flag)
    # Quiet: where the other boolean is true, or_other keeps log(0) (its derivative inf, not NaN);
    # and_keeps_zero keeps it whatever the other is.
    assert _joined_gradient(original.or_other, 0.0, True) == math.inf
    assert not math.isnan(_joined_gradient(original.and_keeps_zero, 0.0, True))


def test_a_clamp_that_keeps_the_square_below_one_is_quiet(tmp_path: Path) -> None:
    """jax-md's ``_safe_acos_jvp``: ``x`` clipped inside (-1, 1) keeps ``1 - x**2`` above 0, so the
    outer clamp never clamps away sqrt's singular point; clipped to [-1, 1] it does."""
    template = textwrap.dedent('''\
        import jax
        import jax.numpy as jnp


        # jaxlint: args x=f32[3]
        @jax.jit
        def safe_acos_tangent(x):
            x_clamped = jnp.clip(x, LOW, HIGH)
            return jnp.maximum(jnp.sqrt(1 - x_clamped**2), 1e-7)
        ''')
    inside = write(tmp_path, "inside", template.replace("LOW", "-1 + 1e-7").replace("HIGH", "1 - 1e-7"))
    bounds = write(tmp_path, "bounds", template.replace("LOW", "-1.0").replace("HIGH", "1.0"))
    assert run(inside).findings == []
    [finding] = run(bounds).findings
    assert "clamps away 1 - x_clamped**2=0" in finding.message
