"""JX505 zero-gradient and JX506 outer-broadcast-reduced: what their case files cannot say.

The messages name the parameter, the cut and the shapes; and the behaviour the rules claim is
checked on the case modules themselves, in this process: each function JX505 reports really has
an all-zero gradient and its near misses with a gradient path do not; each function JX506 reports
really differs from the same function with the column indexed.
"""
from __future__ import annotations

import importlib.util
from types import ModuleType

import jax
import jax.numpy as jnp
import numpy as np
import pytest
from helpers import case_line, case_source, checked_case


def load(code: str) -> ModuleType:
    spec = importlib.util.spec_from_file_location(f"case_{code}", case_source(code))
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def messages(code: str) -> dict[int, str]:
    _, result = checked_case(code)
    return {f.span.start_line: f.message for f in result.findings if f.code == code}


@pytest.mark.parametrize(("text", "name", "cut"), [
    ("jnp.round(x @ w) ** 2", "`w`", "jnp.round(x @ w) (round"),
    ("jnp.argmax(x @ w, axis=1)", "`w`", "jnp.argmax(x @ w, axis=1) (an integer result"),
    ("np.sign(w) * x", "`w`", "np.sign(w) (sign"),
    ("x > scale", "`scale`", "x > scale (a comparison"),
    ("jnp.round(w * x), None", "`w`", "jnp.round(w * x) (round"),
])
def test_jx505_message_names_the_parameter_and_the_cut(text: str, name: str, cut: str) -> None:
    message = messages("JX505")[case_line("JX505", text)]
    assert message.startswith(f"{name} is differentiated") and f"goes through {cut}" in message


def test_jx505_reported_gradients_are_zero_and_near_misses_are_not() -> None:
    case = load("JX505")
    w, x, v = case.w, case.x, case.v
    assert not np.any(jax.grad(case.rounded_loss)(w, x))
    assert not np.any(jax.grad(case.argmax_loss)(w, x))
    assert not np.any(jax.grad(case.aliased_loss)(v, v + 2.0))
    assert not np.any(jax.grad(case.helper_loss)(v, v))
    assert not np.any(jax.grad(case.threshold_loss)(v, v))
    assert not np.any(jax.grad(case.scanned_loss)(jnp.float32(0.5), v))
    assert np.any(jax.grad(case.straight_through_loss)(v, v + 2.0))
    assert np.any(jax.grad(case.both_paths_loss)(w, x))
    assert np.any(jax.grad(case.rounded_data_loss)(w, x))


def test_jx506_message_names_the_shapes() -> None:
    found = messages("JX506")
    assert found[case_line("JX506", "(pred - y) ** 2)  # expect: JX506\n".strip())].startswith(
        "`pred - y` broadcasts `pred` of shape (4, 1) against `y` of shape (4,) to (4, 4)")
    assert "`pred[..., 0]`" in found[case_line("JX506", "jnp.abs(y - pred)")]
    vmapped = found[case_line("JX506", "jax.vmap(lambda p")]
    assert "`p` of shape (3, 4, 1) against `y` of shape (4,) to (3, 4, 4)" in vmapped


def test_jx506_reported_values_differ_from_the_indexed_column() -> None:
    case = load("JX506")
    column, row = case.column, case.row
    pairs = np.subtract.outer(np.asarray(column[:, 0]), np.asarray(row)) ** 2  # every pred against every y
    assert float(case.mse(column, row)) == pytest.approx(float(pairs.mean()))
    assert float(case.mse(column, row)) > 0.1  # the predictions equal the targets: the intended value is 0
    assert float(case.matching(column, row)) == 0.0
