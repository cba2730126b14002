"""A method's parameter its own class makes (argsources/made_params.py): dynamax's models take the
``params`` their ``initialize(key)`` returns (``-> Tuple[Params, Params]``: the parameters and
their properties), annotated with the params class or an empty Protocol. The trace calls the
maker on the built instance first, and the method's other arrays take the instance's sizes."""
from __future__ import annotations

import textwrap

import pytest
from helpers import check_in_process, write

from jaxlint.config import load_config
from jaxlint.rules import all_rules

MODULE = textwrap.dedent('''\
    from abc import ABC, abstractmethod
    from typing import NamedTuple, Optional, Protocol, Tuple

    import jax
    import jax.numpy as jnp
    import jax.random as jr
    from jax import lax


    class ParameterSet(Protocol):
        pass


    class PropertySet(Protocol):
        pass


    class ParamsLinear(NamedTuple):
        weights: jax.Array
        scale: jax.Array


    class Trainable(NamedTuple):
        trainable: bool


    class PropsLinear(NamedTuple):
        weights: Trainable
        scale: Trainable


    class Model(ABC):
        @abstractmethod
        def step(self, params: ParameterSet, x: jax.Array) -> jax.Array:
            ...

        def run(self, params: ParameterSet, xs: jax.Array) -> jax.Array:
            def body(x, _):
                return self.step(params, x), None
            y, _ = lax.scan(body, xs, None, length=3)
            return jnp.where(y > 0, jnp.log(y), 0.0)  # expect JX501

        def fit(self, params: ParameterSet, props: PropertySet, xs: jax.Array) -> jax.Array:
            kept = params.weights if props.weights.trainable else jax.lax.stop_gradient(params.weights)
            return jnp.sum(kept @ xs)


    class Linear(Model):
        def __init__(self, state_dim: int):
            self.state_dim = state_dim

        def initialize(self, key: Optional[jax.Array] = None) -> Tuple[ParamsLinear, PropsLinear]:
            if key is None:
                raise ValueError("a key is needed")
            weights = jr.normal(key, (self.state_dim, self.state_dim))
            return ParamsLinear(weights, jnp.ones(self.state_dim)), PropsLinear(Trainable(True), Trainable(False))

        def step(self, params: ParamsLinear, x: jax.Array) -> jax.Array:
            return params.weights @ jnp.ones(self.state_dim) * params.scale + x


    class ParamsScale(NamedTuple):
        scale: jax.Array


    class Unmade:
        """Its maker needs what no guess gives, and its other maker returns no class: not made."""

        def __init__(self, size: int):
            self.size = size

        def initialize(self, source: "Unmade") -> ParamsScale:
            return ParamsScale(jnp.ones(self.size))

        def init_params(self):
            return ParamsScale(jnp.ones(self.size))

        def apply(self, params: ParamsScale, x: jax.Array) -> jax.Array:
            return jnp.ones(self.size) * params.scale.sum() @ x


    class ParamsMixture(NamedTuple):
        weights: jax.Array


    class Mixture:
        """Its maker draws the weights through a softmax: that is no part of the method's program."""

        def __init__(self, num_components: int):
            self.num_components = num_components

        def initialize(self, key: jax.Array) -> ParamsMixture:
            return ParamsMixture(jax.nn.softmax(jr.normal(key, (self.num_components,))))

        def log_weights(self, params: ParamsMixture, x: jax.Array) -> jax.Array:
            return jnp.log(params.weights) + x


    class SolverState(NamedTuple):
        velocity: jax.Array
        count: jax.Array


    class Solver:
        """Its state is made from the method's own params (made_state.py's, where needed)."""

        def __init__(self, rate: float):
            self.rate = rate

        def init_state(self, init_params: jax.Array) -> SolverState:
            return SolverState(jnp.zeros_like(init_params), jnp.asarray(0))

        def update(self, params: jax.Array, state: SolverState):
            return params - self.rate * jnp.sign(state.velocity), state.count + 1


    class Broken:
        """Its maker raises in the trace: the method is not linted, and nothing crashes."""

        def __init__(self, size: int):
            self.size = size

        def init(self, key: jax.Array) -> ParamsScale:
            raise RuntimeError("not today")

        def apply(self, params: ParamsScale, x: jax.Array) -> jax.Array:
            return jnp.ones(self.size) * params.scale.sum() @ x
''')


@pytest.fixture(scope="module")
def checked(tmp_path_factory: pytest.TempPathFactory):
    root = tmp_path_factory.mktemp("made_params")
    path = write(root, "models", MODULE)
    (root / "pyproject.toml").write_text("[tool.jaxlint]\n")
    result = check_in_process([str(path)], all_rules(), config=load_config([str(path)]))
    signatures = {t.target: t.signature for fa in result.files for t in fa.result.traced}
    skipped = {s.target: s.reason for _, s in result.skipped}
    findings = [(f.code, f.span.start_line, f.message) for fa in result.files for f in fa.findings]
    return signatures, skipped, findings


def _line(text: str) -> int:
    return next(i for i, line in enumerate(MODULE.splitlines()) if text in line) + 1


def test_a_protocol_parameter_is_made_by_the_subclass_initialize(checked) -> None:
    signatures, _, findings = checked
    assert signatures["Model.run"] == \
        "self=Linear(state_dim=2), params=ParamsLinear(weights=f32[2,2], scale=f32[2]), xs=f32[2]"
    assert [code for code, line, _ in findings if line == _line("# expect JX501")] == ["JX501"]


def test_parameters_annotated_alike_take_the_tuple_items_in_turn(checked) -> None:
    signatures, _, _ = checked
    assert signatures["Model.fit"].startswith(
        "self=Linear(state_dim=2), params=ParamsLinear(weights=f32[2,2], scale=f32[2]), "
        "props=PropsLinear(weights=Trainable(trainable=True), scale=Trainable(trainable=False)), xs=")


def test_a_params_class_the_ladder_would_size_apart_is_made(checked) -> None:
    signatures, _, _ = checked
    # The ladder's ParamsLinear(weights=f32[n,n], ...) disagrees with jnp.ones(state_dim) at any n.
    assert signatures["Linear.step"] == \
        "self=Linear(state_dim=2), params=ParamsLinear(weights=f32[2,2], scale=f32[2]), x=f32[]"


def test_the_makers_own_code_is_no_part_of_the_program(checked) -> None:
    signatures, _, findings = checked
    # In the trace, log(softmax(...)) would be a JX702: the user passes the weights made before.
    assert signatures["Mixture.log_weights"] == \
        "self=Mixture(num_components=2), params=ParamsMixture(weights=f32[2]), x=f32[]"
    assert not [code for code, line, _ in findings if line == _line("return jnp.log(params.weights) + x")]


def test_a_state_made_from_the_methods_own_values_is_not_made_apart(checked) -> None:
    signatures, _, _ = checked
    # init_state(init_params) takes the method's params: made_state.py's (in the trace, where the
    # ladder cannot guess it), never a maker's run with a params of its own (count=i32[]).
    assert signatures["Solver.update"] == \
        "self=Solver(rate=f32[]), params=f32[], state=SolverState(velocity=f32[], count=f32[])"


def test_makers_that_cannot_make_it_leave_the_method_unlinted(checked) -> None:
    signatures, skipped, _ = checked
    assert "Unmade.apply" not in signatures and "Unmade.initialize" not in skipped["Unmade.apply"]
    assert "Broken.apply" not in signatures and "init: RuntimeError: not today" in skipped["Broken.apply"]
    assert not [line for _, line, _ in checked[2] if line > _line("class Unmade")]
