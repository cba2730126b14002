"""The numerics rules JX701-JX708: their fixes, together, on real jaxprs, through the whole pipeline.

Which lines each rule reports, and the near misses that must stay quiet, are their cases
(tests/rules/JX701.py ... JX708.py). Here one module holds the triggers of all eight rules (through
aliases, a helper, vmap, scan and cond), so that their fixes apply together. The fixes are applied
with ``--unsafe-fixes`` (verified by the fixer on ordinary and wide inputs), and the values are
checked here too, independently: at the inputs each rule's message names, the original is wrong and
the fixed module is right.
"""
from __future__ import annotations

import importlib.util
import math
from pathlib import Path
from types import ModuleType

import pytest
from helpers import assert_analyzed, check_in_process, write

from jaxlint.config.selection import select_rules
from jaxlint.engine import values
from jaxlint.engine.results import CheckResult

CODES = ["JX701", "JX702", "JX703", "JX704", "JX705", "JX706", "JX707", "JX708"]

TRIGGERS = '''\
import jax
import jax.numpy as jnp
from jax import lax
from jax.numpy import log, exp
from jax.nn import sigmoid as sg


@jax.jit
def lse(x):
    return jnp.log(jnp.sum(jnp.exp(x), axis=-1))


@jax.jit
def lse_aliases(x):
    return log(exp(x).sum())


@jax.jit
def logsoftmax(x):
    return jnp.log(jax.nn.softmax(x, axis=-1))


@jax.jit
def log1p_hand(x):
    return jnp.log(1.0 + x) + (jnp.exp(x) - 1)


@jax.jit
def softplus_hand(x):
    return log(1 + exp(x))


def loss(a, b):
    return jnp.linalg.norm(a - b)


loss_grad = jax.jit(jax.grad(loss))


@jax.jit
def grad_inside(a, b):
    return jax.grad(lambda v: jnp.sqrt(jnp.sum((v - b) ** 2)))(a)


@jax.jit
def solve_by_inverse(m, b):
    return jnp.linalg.inv(m) @ b


@jax.jit
def inverse_elsewhere(m, b):
    return b @ jnp.linalg.inv(m) + jnp.dot(jnp.linalg.inv(m), b)


@jax.jit
def softmax_variable(x):
    e = jnp.exp(x)
    return e / e.sum(axis=0)


@jax.jit
def softmax_hand(x):
    return jnp.exp(x) / jnp.sum(jnp.exp(x), axis=-1, keepdims=True)


@jax.jit
def sigmoid_hand(x):
    return 1.0 / (1.0 + jnp.exp(-x))


@jax.jit
def bce(logits, labels):
    p = sg(logits)
    return -(labels * jnp.log(p) + (1 - labels) * jnp.log(1 - p))


@jax.jit
def log_sigmoid_call(x):
    return jnp.log(jax.nn.sigmoid(x))


def helper(v):
    return jnp.exp(v) - 1


@jax.jit
def sigmoid_scaled_exp(x, c):
    e = jnp.exp(-75.0 * x)
    return 1.0 / (1.0 + e) + 1.0 / (1.0 + c * jnp.exp(x))


@jax.jit
def through_helper(x):
    return helper(x) * 2.0


@jax.jit
def in_vmap(x):
    return jax.vmap(lambda r: jnp.log(jnp.sum(jnp.exp(r))))(x)


@jax.jit
def in_scan(x):
    def body(c, r):
        return c + 1.0 / (1.0 + jnp.exp(-r)), None
    return lax.scan(body, jnp.zeros(x.shape[1:]), x)[0]


@jax.jit
def in_cond(x):
    return lax.cond(x.sum() > 0, lambda v: jnp.log(1 + v), lambda v: v, x)


@jax.jit
def softplus_log1p(x):
    return x + jnp.log1p(jnp.exp(-x))


x = jnp.linspace(-3.0, 3.0, 12).reshape(3, 4)
m = jnp.eye(4) + 0.1
for fn in (lse, lse_aliases, logsoftmax, log1p_hand, softplus_hand, softmax_hand, sigmoid_hand,
           log_sigmoid_call, through_helper, in_vmap, in_scan, in_cond, softplus_log1p):
    fn(x)
loss_grad(x[0], x[1])
grad_inside(x[0], x[1])
solve_by_inverse(m, x[0])
inverse_elsewhere(m, x[0])
softmax_variable(x)
sigmoid_scaled_exp(x, 25.0)
bce(x, (x > 0).astype(jnp.float32))
'''

# The rewrite of each fixed line: (the original expression, the fix's text).
REWRITES = [
    ("jnp.log(jnp.sum(jnp.exp(x), axis=-1))", "jax.nn.logsumexp(x, axis=-1)"),
    ("log(exp(x).sum())", "jax.nn.logsumexp(x)"),
    ("jnp.log(jax.nn.softmax(x, axis=-1))", "jax.nn.log_softmax(x, axis=-1)"),
    ("jnp.log(1.0 + x) + (jnp.exp(x) - 1)", "jnp.log1p(x) + (jnp.expm1(x))"),
    ("log(1 + exp(x))", "jax.nn.softplus(x)"),
    ("jnp.linalg.inv(m) @ b", "jnp.linalg.solve(m, b)"),
    ("jnp.exp(x) / jnp.sum(jnp.exp(x), axis=-1, keepdims=True)", "jax.nn.softmax(x, axis=-1)"),
    ("1.0 / (1.0 + jnp.exp(-x))", "sg(x)"),  # the module imports jax.nn.sigmoid as sg
    ("jnp.log(jax.nn.sigmoid(x))", "jax.nn.log_sigmoid(x)"),
    ("jnp.exp(v) - 1", "jnp.expm1(v)"),
    ("jnp.log(jnp.sum(jnp.exp(r)))", "jax.nn.logsumexp(r)"),
    ("1.0 / (1.0 + jnp.exp(-r))", "sg(r)"),
    ("jnp.log(1 + v)", "jnp.log1p(v)"),
    ("jnp.log1p(jnp.exp(-x))", "jax.nn.softplus(-x)"),
]


def run(path: Path, **kwargs) -> CheckResult:
    return check_in_process([str(path)], select_rules(CODES, None), **kwargs)


def load(path: Path) -> ModuleType:
    spec = importlib.util.spec_from_file_location(path.stem, path)
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


@pytest.fixture(scope="module")
def triggers(tmp_path_factory: pytest.TempPathFactory) -> tuple[Path, CheckResult]:
    path = write(tmp_path_factory.mktemp("jx7"), "jx7_triggers", TRIGGERS)
    return path, run(path)


@pytest.fixture(scope="module")
def fixed(tmp_path_factory: pytest.TempPathFactory) -> tuple[Path, CheckResult]:
    path = write(tmp_path_factory.mktemp("jx7_fixed"), "jx7_fixed", TRIGGERS)
    return path, run(path, fix=True, unsafe_fixes=True)


def test_every_trigger_traced_and_a_warning(triggers) -> None:
    _, result = triggers
    # 20 targets, and with inference on (the default) the plain functions loss and helper, which the
    # module calls at import: traced with that call's arguments, no findings of their own.
    assert_analyzed(result, 22)
    assert len(result.findings) == 24
    assert all(f.severity == "warning" for f in result.findings)


def test_findings_point_at_the_expression(triggers) -> None:
    _, result = triggers
    lines = TRIGGERS.splitlines()
    starts = {(f.code, lines[f.span.start_line - 1][f.span.start_col:f.span.end_col]) for f in result.findings}
    assert ("JX701", "jnp.log(jnp.sum(jnp.exp(x), axis=-1))") in starts
    assert ("JX704", "jnp.linalg.norm(a - b)") in starts
    assert ("JX704", "jnp.sqrt(jnp.sum((v - b) ** 2))") in starts
    assert ("JX705", "jnp.linalg.inv(m) @ b") in starts
    assert ("JX708", "jnp.log(1 - p)") in starts and ("JX708", "jnp.log(p)") in starts
    assert all("double where" in f.message for f in result.findings if f.code == "JX704")
    # No single stable call replaces a norm; the BCE's logs read a variable, not a sigmoid call.
    without = {(f.code, f.span.start_line) for f in result.findings if f.fix is None}
    assert without == {("JX704", 34), ("JX704", 42), ("JX705", 52), ("JX706", 58), ("JX708", 74), ("JX707", 89)}
    assert all(f.fix.applicability == "unsafe" for f in result.findings if f.fix is not None)


def test_unsafe_fixes_verified_and_applied(fixed) -> None:
    path, result = fixed
    text = path.read_text(encoding="utf-8")
    assert result.fix_rejected == [], [(f.code, f.fix_rejected) for f in result.fix_rejected]
    expected = TRIGGERS
    for before, after in REWRITES:
        assert before in expected, before
        expected = expected.replace(before, after, 1)
    assert text == expected
    # What is left: the findings without a single-expression fix (JX704, and the BCE's logs of a variable).
    remaining = {(f.code, f.span.start_line) for f in run(path).findings}
    assert remaining == {("JX704", 34), ("JX704", 42), ("JX705", 52), ("JX706", 58), ("JX708", 74), ("JX707", 89)}


def test_fixed_values_are_right_where_the_original_is_wrong(triggers, fixed) -> None:
    import jax.numpy as jnp
    import numpy as np

    original, repaired = load(triggers[0]), load(fixed[0])
    big = jnp.array([[1000.0, 1000.0, 999.0, 0.0]])
    # JX701: log(sum(exp([1000, 1000, 999, 0]))) is inf; logsumexp is 1000.86.
    assert math.isinf(float(original.lse(big)[0]))
    assert float(repaired.lse(big)[0]) == pytest.approx(1000.0 + math.log(2 + math.exp(-1)), abs=1e-3)
    # JX702: log(softmax([0, 200])) is [-inf, 0]; log_softmax gives [-200, 0].
    gap = jnp.array([[0.0, 200.0]])
    assert math.isinf(float(original.logsoftmax(gap)[0, 0]))
    assert np.allclose(repaired.logsoftmax(gap), [[-200.0, 0.0]])
    # JX703: log(1 + 1e-7) + (exp(1e-7) - 1) is 19% off each; log1p and expm1 are exact.
    tiny = jnp.full((1,), 1e-7, jnp.float32)
    assert abs(float(original.log1p_hand(tiny)[0]) - 2e-7) / 2e-7 > 0.15
    assert float(repaired.log1p_hand(tiny)[0]) == pytest.approx(2e-7, rel=1e-5)
    assert math.isinf(float(original.softplus_hand(jnp.array([100.0]))[0]))
    assert float(repaired.softplus_hand(jnp.array([100.0]))[0]) == pytest.approx(100.0)
    # JX706: softmax([0, 1000]) is [0, NaN]; jax.nn.softmax gives [0, 1].
    wide = jnp.array([[0.0, 1000.0]])
    assert math.isnan(float(original.softmax_hand(wide)[0, 1]))
    assert np.allclose(repaired.softmax_hand(wide), [[0.0, 1.0]])
    # JX708: log(sigmoid(-100)) is -inf; log_sigmoid(-100) is -100.
    assert math.isinf(float(original.log_sigmoid_call(jnp.array([-100.0]))[0]))
    assert float(repaired.log_sigmoid_call(jnp.array([-100.0]))[0]) == pytest.approx(-100.0)
    # JX708: x + log1p(exp(-x)) (softplus by hand) at -100 is inf; with softplus(-x) it is 0 (true: 4e-44).
    assert math.isinf(float(original.softplus_log1p(jnp.array([-100.0]))[0]))
    assert float(repaired.softplus_log1p(jnp.array([-100.0]))[0]) == pytest.approx(0.0, abs=1e-6)
    # Ordinary inputs: the same values.
    ordinary = jnp.linspace(-3.0, 3.0, 12).reshape(3, 4)
    for name in ("lse", "lse_aliases", "logsoftmax", "log1p_hand", "softplus_hand", "softmax_hand",
                 "sigmoid_hand", "log_sigmoid_call", "through_helper", "in_vmap", "in_scan", "in_cond",
                 "softplus_log1p"):
        assert np.allclose(getattr(original, name)(ordinary), getattr(repaired, name)(ordinary),
                           rtol=1e-5, atol=1e-6, equal_nan=True), name
    m = jnp.eye(4) + 0.1
    assert np.allclose(original.solve_by_inverse(m, ordinary[0]), repaired.solve_by_inverse(m, ordinary[0]), rtol=1e-4)


def test_gradients_the_messages_promise(triggers, fixed) -> None:
    import jax
    import jax.numpy as jnp

    original, repaired = load(triggers[0]), load(fixed[0])
    a = jnp.arange(3.0)
    # JX704: the gradient of norm(a - b) at a == b is NaN (on the original and after the fixes,
    # which leave it: there is no single stable call).
    assert jnp.isnan(original.loss_grad(a, a)).all()
    assert jnp.isnan(original.grad_inside(a, a)).all()
    # JX707: the hand sigmoid's gradient at -1000 is NaN, jax.nn.sigmoid's is 0.
    hand = jax.grad(lambda v: original.sigmoid_hand(v).sum())(jnp.array([-1000.0]))
    stable = jax.grad(lambda v: repaired.sigmoid_hand(v).sum())(jnp.array([-1000.0]))
    assert math.isnan(float(hand[0])) and float(stable[0]) == 0.0
    # JX708: the hand BCE at logit 100, label 0 is inf; log_sigmoid gives 100.
    assert math.isinf(float(original.bce(jnp.array([100.0]), jnp.array([0.0]))[0]))
    bce = -(jax.nn.log_sigmoid(-jnp.array([100.0])))
    assert float(bce[0]) == pytest.approx(100.0)
    # JX708: softplus by hand has a NaN gradient once exp(-x) overflows (x = -89, float32: exp(89) is
    # inf); fixed, it is 0 (true: sigmoid(-89), 2e-39). At -88 exp(88) is still finite: no NaN.
    for point, hand_is_nan in ((-89.0, True), (-100.0, True), (-88.0, False)):
        hand = jax.grad(lambda v: original.softplus_log1p(v).sum())(jnp.array([point]))
        assert math.isnan(float(hand[0])) == hand_is_nan, point
        stable = jax.grad(lambda v: repaired.softplus_log1p(v).sum())(jnp.array([point]))
        assert float(stable[0]) == pytest.approx(0.0, abs=1e-6), point


def test_norm_recipe_in_the_message_has_a_finite_gradient() -> None:
    import jax
    import jax.numpy as jnp

    def guarded(d):
        s = jnp.sum(d ** 2)
        return jnp.where(s > 0, jnp.sqrt(jnp.where(s > 0, s, 1.0)), 0.0)

    assert not jnp.isnan(jax.grad(guarded)(jnp.zeros(3))).any()


def _run(array: list[float]) -> list:
    import base64

    import numpy as np
    data = np.asarray(array, dtype=np.float64)
    return [{"dtype": "float32", "shape": [len(array)], "kind": "float64",
             "data": base64.b64encode(data.tobytes()).decode("ascii")}]


def test_wide_runs_accept_repairs_and_reject_new_infinities() -> None:
    inf, nan = float("inf"), float("nan")
    ordinary = [_run([1.0, 2.0])] * 3
    before = [ordinary + [{"wide": _run([inf, 5.0])}]]
    repaired = [ordinary + [{"wide": _run([1000.5, 5.0])}]]
    broken = [ordinary + [{"wide": _run([inf, nan])}]]
    shifted = [ordinary + [{"wide": _run([1000.5, 6.0])}]]
    assert values.difference("f", before, repaired, stabilizing=True) is None
    assert "(signature 1, wide inputs): output 0 (float32[2]): infinity or NaN where the original was finite" \
        in values.difference("f", before, broken, stabilizing=True)
    assert "largest difference" in values.difference("f", before, shifted, stabilizing=True)
    # Other fixes are not compared on wide inputs (they are compared on the ordinary seeds).
    assert values.difference("f", before, broken) is None
    assert "seed 0" in values.difference("f", [[_run([1.0])] * 3 + [{"wide": _run([1.0])}]],
                                          [[_run([2.0])] * 3 + [{"wide": _run([1.0])}]])


IMPORTS_NOTHING_OF_JAX_NN = '''\
"""A module reaching jax only through from-imports: the fix adds ``import jax``."""
from jax import jit
from jax.numpy import exp, log, ones, sum as total


@jit
def log_partition(x):
    return log(total(exp(x)))


@jit
def smooth_relu(x):
    return log(1 + exp(x))


log_partition(ones(3))
smooth_relu(ones(3))
'''


def test_fix_adds_import_jax_when_nothing_reaches_jax_nn(tmp_path: Path) -> None:
    path = write(tmp_path, "jx7_no_jax", IMPORTS_NOTHING_OF_JAX_NN)
    result = run(path, fix=True, unsafe_fixes=True)
    assert result.fix_rejected == [] and len(result.fixed) == 2
    # Both fixes add the same import: it is written once.
    assert path.read_text(encoding="utf-8") == IMPORTS_NOTHING_OF_JAX_NN.replace(
        "sum as total\n", "sum as total\nimport jax\n").replace(
        "log(total(exp(x)))", "jax.nn.logsumexp(x)").replace("log(1 + exp(x))", "jax.nn.softplus(x)")
