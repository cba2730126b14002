"""Outer functions: a module-level function or method that calls nothing of JAX itself but
defines a JAX function (numpyro's ``DoublyTruncatedPowerLaw.cdf``, whose body defines
``@jax.custom_jvp def f`` and returns ``f(value, ...)``) is tried as a JAX function would be, a
factory through the closures it returns, so that its nested functions run under the trace. The
outer function is no JAX function: it is never counted, only the nested ones its run linted."""
from __future__ import annotations

import json
import subprocess
import sys
import textwrap
from pathlib import Path

import pytest
from helpers import check_in_process, expected_markers, write
from test_pytest_store import environment, pytest_run

from jaxlint.config import load_config
from jaxlint.report.coverage import coverage
from jaxlint.rules import all_rules

OUTER = textwrap.dedent('''\
    import jax
    import jax.numpy as jnp


    class PowerLaw:
        def __init__(self, alpha: float = 1.0):
            self.alpha = alpha

        def log_prob(self, value: jax.Array) -> jax.Array:
            @jax.custom_jvp
            def f(x, alpha):
                return jnp.log(1 + x) * alpha  # expect JX703

            @f.defjvp
            def f_jvp(primals, tangents):
                x, alpha = primals
                dx, dalpha = tangents
                return f(x, alpha), dx * alpha / x + dalpha * jnp.log(x)

            return f(value, self.alpha)


    def make_scaler(scale: float = 2.0):
        def scale_fn(x: jax.Array) -> jax.Array:
            return jnp.log(1 + x) * scale  # expect JX703

        def apply(x):
            return scale_fn(x) + 1

        return apply


    def fit(model, x):  # no arguments can be guessed for a model: skipped, and its loss not linted
        offset = model.offset

        def loss(y):  # a local of fit: not built from its code (test_nested_code.py)
            return jnp.sum(y) + offset

        return model.apply(loss(x))


    def no_nested_jax(x):
        def helper(y):
            return y + 1

        return helper(x)
    ''')


def checked(tmp_path: Path):
    path = write(tmp_path, "outer", OUTER)
    (tmp_path / "pyproject.toml").write_text("[tool.jaxlint]\n")
    return check_in_process([str(path)], all_rules(), config=load_config([str(path)]))


def traced_signatures(result) -> dict[str, str]:
    return {t.target: t.signature for fa in result.files for t in fa.result.traced}


def test_a_method_that_only_defines_a_custom_jvp_function_lints_it_at_its_lines(tmp_path: Path) -> None:
    result = checked(tmp_path)
    assert {(f.code, f.span.start_line) for f in result.findings} == expected_markers(OUTER)
    assert all(f.arguments == "inferred" for f in result.findings)
    # the outer method is tried with a built instance, shown in the signature
    assert traced_signatures(result)["PowerLaw.log_prob"] == "self=PowerLaw(alpha=f32[]), value=f32[]"
    report = coverage(result)
    linted = {f.function: f.linted for f in report.functions}
    assert linted["PowerLaw.log_prob.<locals>.f"] is True
    # the jvp rule runs only under differentiation: the traced method is differentiated too (rule_runs.py)
    assert linted["PowerLaw.log_prob.<locals>.f_jvp"] is True
    assert "PowerLaw.log_prob" not in linted  # no JAX function: not counted
    assert linted["fit.<locals>.loss"] is False
    # an outer function skipped is no target defined elsewhere; its nested function says why
    assert not report.outside
    [loss] = [u for u in report.untraced if u.target == "fit.<locals>.loss"]
    assert loss.kind == "nested-not-built"
    assert loss.reason.startswith("not built from its code: its free variable offset is a local of fit; "
                                  "its outer function fit was tried, not run: arguments not inferred: parameter model")


def test_a_factory_whose_jax_code_is_in_a_nested_helper_of_its_closure(tmp_path: Path) -> None:
    result = checked(tmp_path)
    assert "make_scaler.<locals>.apply" in traced_signatures(result)
    linted = {f.function: f.linted for f in coverage(result).functions}
    assert linted["make_scaler.<locals>.scale_fn"] is True
    assert "make_scaler" not in linted and "make_scaler.<locals>.apply" not in linted


def test_an_outer_function_without_a_nested_jax_function_stays_untried(tmp_path: Path) -> None:
    result = checked(tmp_path)
    tried = set(traced_signatures(result)) | {s.target for fa in result.files for s in fa.result.skipped}
    assert "no_nested_jax" not in tried and "no_nested_jax.<locals>.helper" not in tried
    report = coverage(result)
    assert {f.function for f in report.functions} == {"PowerLaw.log_prob.<locals>.f",
                                                      "PowerLaw.log_prob.<locals>.f_jvp",
                                                      "make_scaler.<locals>.scale_fn", "fit.<locals>.loss"}
    assert result.jax_functions == 4 and result.linted == 3



@pytest.mark.slow
def test_an_outer_function_whose_nested_functions_the_tests_linted_is_not_tried_again(tmp_path: Path) -> None:
    """The tests gave the nested function real arguments: check reports their finding and traces
    no guess of the outer function beside it."""
    (tmp_path / "pyproject.toml").write_text("[tool.jaxlint]\n")
    (tmp_path / "pkg").mkdir()
    (tmp_path / "pkg" / "__init__.py").write_text("")
    (tmp_path / "pkg" / "model.py").write_text(
        "import jax.numpy as jnp\n\n\ndef total(xs):\n    def body(x):\n"
        "        return jnp.where(x > 0, jnp.log(x), 0.0)\n\n    return body(xs)\n")
    (tmp_path / "tests").mkdir()
    (tmp_path / "tests" / "test_model.py").write_text(
        "import jax.numpy as jnp\n\nfrom pkg.model import total\n\n\n"
        "def test_total():\n    assert total(jnp.ones(3)).shape == (3,)\n")
    assert "1 passed" in pytest_run(tmp_path).stdout
    run = subprocess.run([sys.executable, "-m", "jaxlint", "check", "--output-format", "json", "pkg"],
                         cwd=tmp_path, env=environment(), capture_output=True, text=True, timeout=600)
    assert "linted 1 of 1 JAX functions: 0 traced here, 1 in the test run of " in run.stderr, run.stderr
    assert [(f["code"], f["origin"]) for f in json.loads(run.stdout)] == [("JX501", "test run")]
