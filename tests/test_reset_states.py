"""A method's ``state`` made by its class's ``reset`` (issue 48, argsources/made_state.py): an
environment's ``step(state, action)`` is traced with the state its own ``reset(rng)`` returns,
made in the trace, before the ladder's guess of an annotated ``state: State``, whose fields of
guessed shapes the environment's own arrays do not fit. A reset whose return annotation is not
the parameter's, or whose own parameters cannot be guessed, makes no state: those methods stay
not linted, with the ladder's error. One project, one check, in the test process.
"""
from __future__ import annotations

import textwrap

import pytest
from helpers import check_project, skip_reasons, traced_signatures

MODULE = textwrap.dedent('''\
    import dataclasses
    from typing import NamedTuple

    import jax
    import jax.numpy as jnp
    import numpy as np


    class State(NamedTuple):
        pos: jax.Array
        vel: jax.Array


    class Observation(NamedTuple):
        pos: jax.Array


    class Pendulum:  # a plain class: its __init__ makes the system's concrete arrays
        def __init__(self, damping: float = 0.1):
            self.coupling = np.eye(3, dtype=np.float32)
            self.damping = damping

        def reset(self, rng: jax.Array) -> State:
            return State(pos=jnp.zeros(3), vel=jax.random.normal(rng, (3,)))

        def step(self, state: State, action: jax.Array) -> State:
            vel = self.coupling @ state.vel - self.damping * state.vel + action
            y = state.pos + vel
            return State(pos=jnp.where(y > 0, jnp.log(y), 0.0), vel=vel)  # expect JX501


    @dataclasses.dataclass
    class Cart:  # a dataclass, its state unannotated
        size: int = 2

        def reset(self, rng):
            return State(pos=jnp.zeros(self.size), vel=jax.random.uniform(rng, (self.size,)))

        def step(self, state, action):
            y = jnp.eye(self.size) @ state.pos + state.vel * action
            return jnp.where(y > 0, jnp.log(y), 0.0)  # expect JX501


    @dataclasses.dataclass
    class Track:  # its fields guessed do not fit its reset's state: the ladder's guess is kept
        coupling: jax.Array

        def reset(self, rng):
            return State(pos=jnp.zeros(2), vel=jax.random.uniform(rng, (2,)))

        def step(self, state, action):
            y = self.coupling @ state.pos + action
            return jnp.where(y > 0, jnp.log(y), 0.0)  # expect JX501


    class Counter:  # its reset clears the object and returns nothing: no state made
        def __init__(self):
            self.scale = np.float32(2.0)

        def reset(self) -> None:
            self.count = 0

        def step(self, state, action):
            y = state.pos * self.scale + action
            return jnp.where(y > 0, jnp.log(y), 0.0)  # expect JX501


    class Observed:  # its reset returns another class than step takes: no state made
        def __init__(self):
            self.coupling = np.eye(3, dtype=np.float32)

        def reset(self, rng: jax.Array) -> Observation:
            return Observation(pos=jnp.zeros(3))

        def step(self, state: State, action: jax.Array) -> State:
            y = self.coupling @ state.vel + action
            return State(pos=jnp.where(y > 0, jnp.log(y), 0.0), vel=y)


    class Configured:  # its reset needs a name no guess gives: no state made
        def __init__(self):
            self.coupling = np.eye(3, dtype=np.float32)

        def reset(self, rng: jax.Array, task: str) -> State:
            return State(pos=jnp.zeros(3), vel=jnp.ones(3))

        def step(self, state: State, action: jax.Array) -> State:
            y = self.coupling @ state.vel + action
            return State(pos=jnp.where(y > 0, jnp.log(y), 0.0), vel=y)
''')


@pytest.fixture(scope="module")
def checked(tmp_path_factory: pytest.TempPathFactory):
    result = check_project(tmp_path_factory.mktemp("resets"), {"envs": MODULE})
    signatures, skipped = traced_signatures(result), skip_reasons(result)
    findings = {(f.code, f.span.start_line) for fa in result.files for f in fa.findings}
    return signatures, skipped, findings


def _line(text: str, after: str) -> int:
    lines = MODULE.splitlines()
    start = next(i for i, line in enumerate(lines) if after in line)
    return next(i for i, line in enumerate(lines) if i >= start and text in line) + 1


@pytest.mark.parametrize("owner", ["Pendulum", "Cart"])
def test_a_step_takes_the_state_its_reset_makes(checked, owner: str) -> None:
    signatures, _, findings = checked
    assert f"state={owner}.reset(rng=key<fry>[])" in signatures[f"{owner}.step"]
    assert ("JX501", _line("# expect JX501", f"class {owner}")) in findings


def test_the_ladders_guess_follows_a_reset_state_that_fails(checked) -> None:
    signatures, _, findings = checked
    assert signatures["Track.step"].startswith("self=Track(coupling=f32[n]), state=<made up: pos=f32[n]>")
    assert ("JX501", _line("# expect JX501", "class Track")) in findings


def test_a_reset_that_returns_nothing_makes_no_state(checked) -> None:
    signatures, _, findings = checked
    assert signatures["Counter.step"].startswith("self=Counter(), state=<made up: pos=f32[]>")
    assert ("JX501", _line("# expect JX501", "class Counter")) in findings


@pytest.mark.parametrize("owner", ["Observed", "Configured"])
def test_a_reset_that_makes_no_such_state_is_not_used(checked, owner: str) -> None:
    signatures, skipped, findings = checked
    assert f"{owner}.step" not in signatures
    assert "state=State(pos=f32[], vel=f32[])" in skipped[f"{owner}.step"]  # the ladder's guess, which fails
    assert ".reset(" not in skipped[f"{owner}.step"]
    assert not {line for _, line in findings if line > _line("def step", f"class {owner}")
                and line < _line("return", f"class {owner}") + 1}
