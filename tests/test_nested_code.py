"""Nested JAX functions that nothing ran are built from their own code (worker/nested_code.py):
their free variables that are parameters of an enclosing function get guessed values (shown after
their own, "with its outer's"), those that are sibling defs are built the same way, and one that
is a local the outer assigns leaves the function not linted, with why."""
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

NESTED = textwrap.dedent('''\
    import jax.numpy as jnp


    def no_free(model, data):
        def standalone(x):
            return jnp.log(1 + x)  # expect JX703

        model.register(standalone)
        return data


    def over_parameter(model, scale):
        def shifted():
            return jnp.log(1 + scale)  # expect JX703

        model.register(shifted)
        return scale


    def over_sibling(model, data):
        def helper(y):
            return 1 + y

        def uses_helper(x):
            return jnp.log(helper(x))  # expect JX703

        model.register(uses_helper)
        return data


    def over_local(model, data):
        offset = model.offset

        def moved(x):
            return jnp.log(1 + x + offset)

        model.register(moved)
        return data


    def over_rebound(model, scale):
        def rescale():
            nonlocal scale
            scale = model.scale

        def shifted_again():
            return jnp.log(1 + scale)

        model.register(rescale, shifted_again)
        return scale


    def runs_inner(x):
        def inner(y):
            return jnp.log(1 + y)  # expect JX703

        def unused(y):  # not run by runs_inner's trace: built from its code
            return jnp.log(1 + y)  # expect JX703

        return inner(x)


    def returned(model):
        def closure(x):
            return jnp.log(1 + x)  # expect JX703

        return closure
    ''')


def checked(tmp_path: Path):
    path = write(tmp_path, "nested", NESTED)
    (tmp_path / "pyproject.toml").write_text("[tool.jaxlint]\n")
    return check_in_process([str(path)], all_rules(), config=load_config([str(path)]))


def traced_signatures(result) -> dict[str, str]:
    return {t.target: t.signature for fa in result.files for t in fa.result.traced}


def test_nested_functions_built_from_their_code_are_linted_at_their_lines(tmp_path: Path) -> None:
    result = checked(tmp_path)
    assert {(f.code, f.span.start_line) for f in result.findings} == expected_markers(NESTED)
    assert all(f.arguments == "inferred" for f in result.findings)
    linted = {f.function: f.linted for f in coverage(result).functions}
    assert linted["no_free.<locals>.standalone"] is True
    assert linted["over_sibling.<locals>.uses_helper"] is True
    # a closure whose factory was not called (its parameter model) is built from its code too
    assert linted["returned.<locals>.closure"] is True


def test_an_outer_parameter_reaches_the_closure_as_an_array_and_is_shown(tmp_path: Path) -> None:
    result = checked(tmp_path)
    assert traced_signatures(result)["over_parameter.<locals>.shifted"] == "(no arguments) with its outer's scale=f32[]"
    [finding] = [f for f in result.findings if f.target == "over_parameter.<locals>.shifted"]
    assert "with its outer's scale=f32[]" in finding.message


def test_a_sibling_def_is_built_with_it(tmp_path: Path) -> None:
    result = checked(tmp_path)
    assert traced_signatures(result)["over_sibling.<locals>.uses_helper"] == "x=f32[]"
    # helper is no JAX function: it ran only as uses_helper's sibling
    assert "over_sibling.<locals>.helper" not in {f.function for f in coverage(result).functions}


def test_a_local_of_the_outer_is_not_guessed_and_the_reason_names_it(tmp_path: Path) -> None:
    result = checked(tmp_path)
    assert not [f for f in result.findings if f.target == "over_local.<locals>.moved"]
    report = coverage(result)
    [moved] = [u for u in report.untraced if u.target == "over_local.<locals>.moved"]
    assert moved.kind == "nested-not-built"
    assert moved.reason.startswith("not built from its code: its free variable offset is a local of over_local")
    assert not report.outside


def test_a_parameter_an_inner_function_rebinds_is_a_local_not_a_guess(tmp_path: Path) -> None:
    # ``nonlocal scale`` in a sibling: the value the closure reads is not the parameter's
    result = checked(tmp_path)
    [shifted] = [u for u in coverage(result).untraced if u.target == "over_rebound.<locals>.shifted_again"]
    assert shifted.reason.startswith("not built from its code: its free variable scale is a local of over_rebound")


def test_a_nested_function_its_outer_ran_is_not_traced_again(tmp_path: Path) -> None:
    result = checked(tmp_path)
    traced = traced_signatures(result)
    assert "runs_inner" in traced and "runs_inner.<locals>.inner" not in traced
    assert traced["runs_inner.<locals>.unused"] == "y=f32[]"
    assert {f.function: f.linted for f in coverage(result).functions}["runs_inner.<locals>.inner"] is True


SWITCH = textwrap.dedent('''\
    import jax.numpy as jnp


    class Energy:  # an object: the factory is not called
        pass


    def force_switch(energy: Energy, r_on: float, r_off: float):
        def smooth_fn(dr):
            # NaN gradient only at r_on == r_off: the outer's values alone, which jaxlint guessed
            return jnp.clip((dr - r_on) / (r_off - r_on), 0.0, 1.0)

        def cutoff_fn(dr):
            return smooth_fn(dr) * energy(dr)

        return cutoff_fn


    def scaled_switch(model, width: float = 2.0):
        def ramp(dr, low):
            return jnp.clip((dr - low) / (dr - width), 0.0, 1.0)  # expect JX501

        model.register(ramp)
        return width
    ''')


def test_a_bad_point_among_the_outer_values_alone_is_left_out(tmp_path: Path) -> None:
    """jax_md's force_switch: the clamp's bad point r_on == r_off depends on the enclosing
    function's parameters alone, a configuration jaxlint guessed: left out. One that depends on the
    function's own argument too is kept, and an outer default is shown as the closure holds it."""
    path = write(tmp_path, "switch", SWITCH)
    (tmp_path / "pyproject.toml").write_text("[tool.jaxlint]\n")
    result = check_in_process([str(path)], all_rules(), config=load_config([str(path)]))
    assert {(f.code, f.span.start_line) for f in result.findings} == expected_markers(SWITCH)
    traced = traced_signatures(result)
    assert traced["force_switch.<locals>.smooth_fn"] == "dr=f32[] with its outer's r_on=f32[], r_off=f32[]"
    assert traced["scaled_switch.<locals>.ramp"] == "dr=f32[], low=f32[] with its outer's width=2.0"
    assert [(f.line, f.code) for f in coverage(result).left_out] == [(11, "JX501")]


@pytest.mark.slow
def test_a_nested_function_the_tests_linted_is_not_built_with_guesses(tmp_path: Path) -> None:
    """The tests gave the nested function real arguments: check keeps their finding and builds no
    guess of it, though the file's other JAX function is traced with inferred arguments."""
    (tmp_path / "pyproject.toml").write_text("[tool.jaxlint]\n")
    (tmp_path / "pkg").mkdir()
    (tmp_path / "pkg" / "__init__.py").write_text("")
    (tmp_path / "pkg" / "model.py").write_text(
        "import jax.numpy as jnp\n\n\ndef total(model, xs):\n    def body(x):\n"
        "        return jnp.where(x > 0, jnp.log(x), 0.0)\n\n    return model(body(xs))\n\n\n"
        "def plain(x):\n    return jnp.sin(x)\n")
    (tmp_path / "tests").mkdir()
    (tmp_path / "tests" / "test_model.py").write_text(
        "import jax.numpy as jnp\n\nfrom pkg.model import total\n\n\n"
        "def test_total():\n    assert total(lambda y: y, jnp.ones(3)).shape == (3,)\n")
    assert "1 passed" in pytest_run(tmp_path).stdout
    run = subprocess.run([sys.executable, "-m", "jaxlint", "check", "--output-format", "json", "pkg"],
                         cwd=tmp_path, env=environment(), capture_output=True, text=True, timeout=600)
    assert "linted 2 of 2 JAX functions: 1 traced here, 1 in the test run of " in run.stderr, run.stderr
    assert [(f["code"], f["origin"]) for f in json.loads(run.stdout)] == [("JX501", "test run")]


METHODS = textwrap.dedent('''\
    import dataclasses

    import jax
    import jax.numpy as jnp


    @dataclasses.dataclass
    class Shift:
        scale: jax.Array

        def apply(self, model, data):
            def moved(x):
                return jnp.log(1 + x * self.scale)  # expect JX703

            model.register(moved)
            return data


    class Plain:  # no instance is built for a plain class's self here: made up from what moved reads
        def __init__(self, scale):
            self.scale = scale

        def apply(self, model, data):
            def moved(x):
                return jnp.log(1 + x * self.scale)  # expect JX703

            model.register(moved)
            return data


    class Unread:  # no instance, and moved reads self by a computed name: not built
        def __init__(self, scale):
            self.scale = scale

        def apply(self, model, data):
            def moved(x):
                return jnp.log(1 + x * getattr(self, "sc" + "ale"))

            model.register(moved)
            return data
    ''')


def test_a_methods_self_is_an_instance_of_its_class(tmp_path: Path) -> None:
    path = write(tmp_path, "methods", METHODS)
    (tmp_path / "pyproject.toml").write_text("[tool.jaxlint]\n")
    result = check_in_process([str(path)], all_rules(), config=load_config([str(path)]))
    assert {(f.code, f.span.start_line) for f in result.findings} == expected_markers(METHODS)
    assert traced_signatures(result)["Shift.apply.<locals>.moved"] == "x=f32[] with its outer's self=Shift(scale=f32[])"
    assert traced_signatures(result)["Plain.apply.<locals>.moved"] == (
        "x=f32[] with its outer's self=<made up: scale=f32[]>")
    [plain] = [u for u in coverage(result).untraced if u.target == "Unread.apply.<locals>.moved"]
    assert plain.reason.startswith("built from its code, not traced: arguments not inferred: parameter self: Unread")


STAND_IN = textwrap.dedent('''\
    import jax.numpy as jnp


    class Space:
        pass


    def integrate(space: Space, shift_fn, dt):
        def step(x):
            return shift_fn(x, jnp.exp(x * dt) - 1)  # expect JX703

        space.register(step)
        return dt
    ''')


def test_an_outer_stand_in_is_shown_as_one(tmp_path: Path) -> None:
    path = write(tmp_path, "stand_in", STAND_IN)
    (tmp_path / "pyproject.toml").write_text("[tool.jaxlint]\n")
    result = check_in_process([str(path)], all_rules(), config=load_config([str(path)]))
    assert {(f.code, f.span.start_line) for f in result.findings} == expected_markers(STAND_IN)
    assert traced_signatures(result)["integrate.<locals>.step"] == (
        "x=f32[] with its outer's shift_fn=<stand-in: its first argument>, dt=f32[]")


DECORATED_SIBLING = textwrap.dedent('''\
    import jax
    import jax.numpy as jnp


    def outer(model, scale):
        @jax.vmap
        def per_row(row):
            return jnp.sum(row) * scale

        def total(x):  # calls the vmapped sibling: its plain code would be another program
            return jnp.where(x.sum() > 0, jnp.log(per_row(x)), 0.0)

        return model.wrap(total)  # an object's method: outer is no factory jaxlint calls
    ''')


def test_a_decorated_sibling_is_not_built_without_its_decorator(tmp_path: Path) -> None:
    path = write(tmp_path, "decorated", DECORATED_SIBLING)
    (tmp_path / "pyproject.toml").write_text("[tool.jaxlint]\n")
    result = check_in_process([str(path)], all_rules(), config=load_config([str(path)]))
    assert result.findings == []
    [total] = [u for u in coverage(result).untraced if u.target == "outer.<locals>.total"]
    assert "its free variable per_row is a decorated (or not a plain) def of outer" in total.reason


def test_nested_functions_are_not_built_when_the_module_time_is_nearly_spent(tmp_path: Path, monkeypatch) -> None:
    """The parent's limit would discard what the module's targets found: the builds stop first."""
    from jaxlint.worker import lifeline

    monkeypatch.setattr(lifeline, "job_time_left", lambda: 3.0)
    result = checked(tmp_path)
    [standalone] = [u for u in coverage(result).untraced if u.target == "no_free.<locals>.standalone"]
    assert standalone.kind == "timeout"
    assert standalone.reason == "not built from its code: the module's time was nearly spent"
