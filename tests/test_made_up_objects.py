"""Parameters read by attribute (issue 48, argsources/made_up.py): a parameter without an
annotation (or ``Any``), or named like a pytree, whose body reads attributes of it gets a made-up
object with exactly those attributes (arrays, nested objects, a stand-in for a called method,
``replace``), shown in the signature and linted (a finding at its line). A parameter used as an
array, annotated with a class jaxlint builds, whose attributes are only written, or read by a name
that is not a constant stays as before. One project, one check, in the test process.
"""
from __future__ import annotations

import textwrap
from pathlib import Path

import pytest
from helpers import check_in_process, expected_markers, write

from jaxlint.config import load_config
from jaxlint.rules import all_rules

MODULE = textwrap.dedent('''\
    from typing import Any, NamedTuple

    import jax
    import jax.numpy as jnp


    def log_weight(state):
        y = state.position - state.logdensity
        return jnp.where(y > 0, jnp.log(y), 0.0)  # expect JX501


    def emission_mean(params, x):
        y = params.emissions.weights @ x + params.emissions.bias
        return jnp.where(y > 0, jnp.log(y), 0.0)  # expect JX501


    def kinetic(metric, momentum):
        y = metric.kinetic_energy(momentum)
        return jnp.where(y > 0, jnp.log(y), 0.0)  # expect JX501


    def step(state: Any, grad):
        new = state.replace(position=state.position - 0.1 * grad)
        return jnp.where(new.position > 0, jnp.log(new.position), 0.0)  # expect JX501


    def keep_finite(previous_state, next_state):  # one class for both: a cond returns either
        ok = jnp.isfinite(next_state.logdensity)
        kept = jax.lax.cond(ok, lambda: next_state, lambda: previous_state)
        y = kept.logdensity - previous_state.position
        return jnp.where(y > 0, jnp.log(y), 0.0)  # expect JX501


    def _kinetic_energy(state):
        return 0.5 * jnp.sum(state.momentum ** 2 / state.mass)


    def total_energy(state):  # a callee reads attributes the body does not: added from its AttributeError
        y = state.potential + _kinetic_energy(state)
        return jnp.where(y > 0, jnp.log(y), 0.0)  # expect JX501


    def _drift_of(s):
        return s.a - s.b


    def drift(p, x):  # passed whole to a callee that reads its attributes: made up from the callee's error
        y = _drift_of(p) * x
        return jnp.where(y > 0, jnp.log(y), 0.0)  # expect JX501


    def drift_by_keyword(p, x):
        y = _drift_of(s=p) + x
        return jnp.where(y > 0, jnp.log(y), 0.0)  # expect JX501


    def drift_and_array(p, x):  # used as an array too: keeps its array (the trace fails)
        y = p * x + _drift_of(p)
        return jnp.where(y > 0, jnp.log(y), 0.0)


    def drift_of_computed(x):  # the tracer the callee reads is no parameter's: the trace fails, as before
        y = _drift_of(x + 1)
        return jnp.where(y > 0, jnp.log(y), 0.0)


    def gather(graph):  # an attribute that indexes is an i32 array
        y = graph.nodes[graph.senders]
        return jnp.where(y > 0, jnp.log(y), 0.0)  # expect JX501


    class Sampler(NamedTuple):
        step_size: jax.Array

        def update(self, state):
            y = state.position + self.step_size
            return jnp.where(y > 0, jnp.log(y), 0.0)  # expect JX501


    def volume(grid):  # named like a count and a key: a static size and a typed key, as parameters are
        noise = jax.random.normal(grid.rng_key, grid.cell_data.shape)
        y = (grid.cell_data + noise) ** grid.num_dims
        return jnp.where(y > 0, jnp.log(y), 0.0)  # expect JX501


    def tempered(state):  # position takes the rung's rank, logdensity (a scalar's name) rank 0 on every rung
        y = jax.vmap(jnp.exp)(state.position) * state.logdensity
        z = jax.lax.cond(state.logdensity > 0, lambda: y, lambda: -y)
        return jnp.where(z > 0, jnp.log(z), 0.0)  # expect JX501


    def merged_turning(tree, new_tree):  # an operand of | is a boolean array, in both as they share a class
        turning = new_tree.turning | (tree.weight > 0)
        turning = jnp.logical_or(turning, tree.turning)
        y = jnp.where(turning, tree.weight, new_tree.weight)
        return jnp.where(y > 0, jnp.log(y), 0.0)  # expect JX501


    def as_array(x):  # used as an array: keeps its array
        y = x.sum() + x
        return jnp.where(y > 0, jnp.log(y), 0.0)  # expect JX501


    class Point(NamedTuple):
        position: jax.Array
        velocity: jax.Array


    def advance(point: Point):  # a class jaxlint builds: its instance
        y = point.position + point.velocity
        return jnp.where(y > 0, jnp.log(y), 0.0)  # expect JX501


    class Metric:  # a plain class: jaxlint builds none for a parameter
        def __init__(self, kinetic_energy, scale):
            self.kinetic_energy = kinetic_energy
            self.scale = scale


    def scaled_energy(metric: Metric, momentum):  # its class not built: made up from what the body reads
        y = metric.kinetic_energy(momentum) * metric.scale
        return jnp.where(y > 0, jnp.log(y), 0.0)  # expect JX501


    def unread(metric: Metric, momentum):  # its class not built, no attribute read: not guessed
        return jnp.log(momentum) + jnp.sum(jnp.asarray(id(metric)))


    def applied(model, x):  # no annotation, a name that says an object: not guessed, as before
        y = model.scale * x
        return jnp.where(y > 0, jnp.log(y), 0.0)


    def written(box, x):  # only written: not made up
        box.value = x
        return jnp.log(x)


    def by_name(state, attr):  # read by a name that is not a constant: not made up
        y = getattr(state, attr)
        return jnp.where(y > 0, jnp.log(y), 0.0)


    def dict_like(params):  # a method called without arguments: a dict's, not made up
        total = sum(jnp.sum(v) for v in params.values())
        return jnp.where(total > 0, jnp.log(total), 0.0)
    ''')


@pytest.fixture(scope="module")
def checked(tmp_path_factory: pytest.TempPathFactory):
    root: Path = tmp_path_factory.mktemp("made_up")
    path = write(root, "objects", MODULE)
    (root / "pyproject.toml").write_text("[tool.jaxlint]\n")
    return check_in_process([str(path)], all_rules(), config=load_config([str(path)]))


def signatures(result) -> dict[str, str]:
    return {t.target: t.signature for fa in result.files for t in fa.result.traced}


def skipped(result) -> dict[str, str]:
    return {s.target: s.reason for _, s in result.skipped}


def test_the_findings_are_the_marked_ones(checked) -> None:
    assert {(f.code, f.span.start_line) for f in checked.findings} == expected_markers(MODULE)


def test_attributes_read_as_values_are_arrays(checked) -> None:
    assert signatures(checked)["log_weight"] == "state=<made up: position=f32[], logdensity=f32[]>"
    finding = next(f for f in checked.findings if f.target == "log_weight")
    assert "seen with arguments jaxlint inferred: state=<made up: position=f32[], logdensity=f32[]>" in finding.message


def test_attributes_of_attributes_are_nested_objects_of_the_bodys_rank(checked) -> None:
    assert signatures(checked)["emission_mean"] == (
        "params=<made up: emissions=<made up: weights=f32[n], bias=f32[]>>, x=f32[n]")


def test_a_called_attribute_is_a_stand_in(checked) -> None:
    assert signatures(checked)["kinetic"] == (
        "metric=<made up: kinetic_energy=<stand-in: -0.5*sum(x**2)>>, momentum=f32[]")


def test_replace_returns_a_copy_with_the_fields_changed(checked) -> None:
    assert signatures(checked)["step"] == "state=<made up: position=f32[]>, grad=f32[]"


def test_parameters_named_alike_share_one_made_up_class(checked) -> None:
    assert signatures(checked)["keep_finite"] == ("previous_state=<made up: position=f32[], logdensity=f32[]>, "
                                                 "next_state=<made up: position=f32[], logdensity=f32[]>")


def test_an_attribute_a_callee_reads_is_added_on_its_error(checked) -> None:
    assert signatures(checked)["total_energy"] == "state=<made up: potential=f32[], momentum=f32[], mass=f32[]>"


def test_a_parameter_passed_whole_to_a_callee_that_reads_attributes_is_made_up(checked) -> None:
    assert signatures(checked)["drift"] == "p=<made up: a=f32[], b=f32[]>, x=f32[]"
    assert signatures(checked)["drift_by_keyword"] == "p=<made up: a=f32[], b=f32[]>, x=f32[]"


def test_a_callees_attribute_error_on_an_array_used_as_one_or_on_no_parameter_stays(checked) -> None:
    found, reasons = signatures(checked), skipped(checked)
    assert "drift_and_array" not in found and "drift_of_computed" not in found
    assert "has no attribute a" in reasons["drift_and_array"]
    assert "has no attribute a" in reasons["drift_of_computed"]


def test_an_attribute_that_indexes_is_an_index_array(checked) -> None:
    assert signatures(checked)["gather"] == "graph=<made up: nodes=f32[n], senders=i32[]>"


def test_a_methods_parameter_is_made_up_too(checked) -> None:
    assert signatures(checked)["Sampler.update"] == "self=Sampler(step_size=f32[]), state=<made up: position=f32[]>"


def test_a_class_jaxlint_does_not_build_is_made_up_from_the_attributes_read(checked) -> None:
    assert signatures(checked)["scaled_energy"] == (
        "metric=<made up: kinetic_energy=<stand-in: -0.5*sum(x**2)>, scale=f32[]>, momentum=f32[]")
    assert skipped(checked)["unread"].startswith("arguments not inferred: parameter metric: Metric (no instance: ")


def test_attributes_named_like_counts_and_keys_are_as_the_ladder_names_them(checked) -> None:
    assert signatures(checked)["volume"] == "grid=<made up: rng_key=key<fry>[], cell_data=f32[], num_dims=2>"


def test_an_attribute_named_like_a_scalar_stays_rank_0(checked) -> None:
    assert signatures(checked)["tempered"] == "state=<made up: position=f32[n], logdensity=f32[]>"


def test_an_attribute_used_in_a_logical_operation_is_a_boolean_array(checked) -> None:
    assert signatures(checked)["merged_turning"] == ("tree=<made up: weight=f32[], turning=bool[]>, "
                                                    "new_tree=<made up: weight=f32[], turning=bool[]>")


def test_near_misses_keep_their_values(checked) -> None:
    found, reasons = signatures(checked), skipped(checked)
    assert found["as_array"] == "x=f32[]"
    assert found["advance"] == "point=Point(position=f32[], velocity=f32[])"
    assert "box=f32[]" in reasons["written"]
    assert reasons["applied"] == "arguments not inferred: parameter model (a function, pytree or object, by its name)"
    assert "state=f32[] (a one-leaf pytree)" in reasons["by_name"]
    assert reasons["dict_like"] == ("arguments not inferred: parameter params (a pytree: its code reads "
                                    "params.values, which a one-leaf pytree has not)")
