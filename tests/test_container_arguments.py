"""Parameters and fields annotated with a bare container or ``Any`` (issue 48,
argsources/containers.py): a dict read with ``.get`` or with keys the body does without is ``{}``,
one subscripted with constant keys a dict of arrays, a tuple or NamedTuple unpacked or indexed
with constants a tuple of arrays, an ``Any`` field an array; each is shown in the signature and
linted (a finding at its line). A dict subscripted with a key that is not a constant, a field read
by an attribute no array has, and a jaxtyping array keep the old values or reasons. One project,
one check, in the test process.
"""
from __future__ import annotations

import textwrap
from pathlib import Path

import pytest
from helpers import check_in_process, write

from jaxlint.config import load_config
from jaxlint.rules import all_rules

MODULE = textwrap.dedent('''\
    import dataclasses
    from typing import Any, Dict, NamedTuple, Sequence

    import jax
    import jax.numpy as jnp
    from jaxtyping import Array, Float


    def solve(x: jax.Array, options: dict[str, Any]):
        scale = options.get("scale", 1.0)
        try:
            y0 = options["y0"]
        except KeyError:
            y0 = jnp.zeros_like(x)
        y = x * scale + y0
        return jnp.where(y > 0, jnp.log(y), 0.0)  # expect JX501


    def bounded(x: jax.Array, options: Dict):
        options["seen"] = True  # a key the body sets is no key it needs
        y = x - options["lower"]
        return jnp.where(y > 0, jnp.log(y), 0.0)  # expect JX501


    def by_name(x: jax.Array, options: dict, name: str):
        y = x - options[name]
        return jnp.where(y > 0, jnp.log(y), 0.0)


    def process(x: jax.Array, msg: dict[str, Any]):
        if msg["type"] not in ["sample", "plate"]:  # a string: no array guessed for it
            return x
        y = x * msg["value"]
        return jnp.where(y > 0, jnp.log(y), 0.0)


    def iterated(x: jax.Array, options: dict):
        scale = options.get("scale", 1.0)
        for key, value in options.items():
            x = x + value
        return jnp.where(x > 0, jnp.log(x), 0.0)


    def padded(x: jax.Array, factors: tuple[int, ...]):
        low, high = factors
        y = jnp.pad(x, (low, high))
        return jnp.where(y > 0, jnp.log(y), 0.0)


    @dataclasses.dataclass
    class Stack:
        layers: tuple
        bias: jax.Array

        def __call__(self, x):
            first, second = self.layers
            y = first * x + second + self.bias
            return jnp.where(y > 0, jnp.log(y), 0.0)  # expect JX501


    @dataclasses.dataclass
    class Sampler:
        inner: Any
        scale: float

        def step(self, x):
            y = self.inner * x * self.scale
            return jnp.where(y > 0, jnp.log(y), 0.0)  # expect JX501


    @dataclasses.dataclass
    class Posterior:
        prior: Any

        def predict(self, x):
            y = self.prior.kernel(x)
            return jnp.where(y > 0, jnp.log(y), 0.0)


    class Solver:
        def __init__(self, tol: float = 1e-3):
            self.tol = tol

        def update(self, params: jax.Array, state: NamedTuple):
            value, error = state
            y = params * value - error * self.tol
            return jnp.where(y > 0, jnp.log(y), 0.0)  # expect JX501

        def compute(self, vector: jax.Array, state: Sequence, options: dict):
            y = vector * state[0] + state[2]
            return jnp.where(y > 0, jnp.log(y), 0.0)  # expect JX501

        def read(self, vector: jax.Array, state: NamedTuple):
            y = vector * state.value
            return jnp.where(y > 0, jnp.log(y), 0.0)


    class DescentState(NamedTuple):
        velocity: jax.Array
        count: jax.Array


    @dataclasses.dataclass
    class Descent:
        rate: float

        def init_state(self, init_params: jax.Array) -> DescentState:
            return DescentState(velocity=jnp.zeros_like(init_params), count=jnp.asarray(0))

        def update(self, params: jax.Array, state: NamedTuple):
            y = params - self.rate * state.velocity
            return jnp.where(y > 0, jnp.log(y), 0.0), state.count + 1  # expect JX501


    @dataclasses.dataclass
    class Scale:
        factor: jax.Array


    @dataclasses.dataclass
    class Direct:
        def init(self, operator: Scale, options: dict[str, Any]):
            return (operator.factor, jnp.abs(operator.factor))

        def compute(self, state: tuple[Scale, Any], vector: jax.Array, options: dict[str, Any]):
            factor, magnitude = state
            y = vector / magnitude
            return jnp.where(y > 0, jnp.log(y), 0.0)  # expect JX501


    @dataclasses.dataclass
    class Named:
        scale: jax.Array

        def init(self, y: jax.Array, label: str):
            return (y, y)

        def step(self, y: jax.Array, state: NamedTuple):
            z = y * state.value  # the init needs a label no guess gives: the state is not made
            return jnp.where(z > 0, jnp.log(z), 0.0)


    def annotated(x: Float[Array, "n"], stats: dict[str, Float[Array, "n"]]):
        y = x * stats["mean"]
        return jnp.where(y > 0, jnp.log(y), 0.0)  # expect JX501
''')


@pytest.fixture(scope="module")
def checked(tmp_path_factory: pytest.TempPathFactory):
    pytest.importorskip("jaxtyping")
    root = tmp_path_factory.mktemp("containers")
    path = write(root, "containers", MODULE)
    (root / "pyproject.toml").write_text("[tool.jaxlint]\n")
    result = check_in_process([str(path)], all_rules(), config=load_config([str(path)]))
    signatures = {t.target: t.signature for fa in result.files for t in fa.result.traced}
    skipped = {s.target: s.reason for _, s in result.skipped}
    findings = {(f.code, f.span.start_line) for fa in result.files for f in fa.findings}
    return signatures, skipped, findings


def _line(text: str, after: str = "") -> int:
    lines = MODULE.splitlines()
    start = next(i for i, line in enumerate(lines) if after in line) if after else 0
    return next(i for i, line in enumerate(lines) if i >= start and text in line) + 1


@pytest.mark.parametrize("function", ["def solve", "def bounded", "class Stack", "class Sampler",
                                      "def update", "def compute", "def annotated", "class Descent",
                                      "class Direct"])
def test_a_container_the_body_reads_is_linted(checked, function: str) -> None:
    _, _, findings = checked
    assert ("JX501", _line("# expect JX501", function)) in findings


def test_the_values_are_shown(checked) -> None:
    signatures, _, _ = checked
    assert signatures["solve"].startswith("x=f32[], options={}")
    assert signatures["bounded"].startswith("x=f32[], options={'lower': f32[]}")
    assert signatures["Stack.__call__"].startswith("self=Stack(layers=(f32[], f32[]), bias=f32[])")
    assert signatures["Sampler.step"].startswith("self=Sampler(inner=f32[], scale=f32[])")
    assert "state=(f32[], f32[])" in signatures["Solver.update"]
    assert "state=(f32[n], f32[n], f32[n]), options={}" in signatures["Solver.compute"]  # state[0]: rank 1 at least
    assert signatures["Descent.update"] == \
        "self=Descent(rate=f32[]), params=f32[], state=Descent.init_state(init_params=params)"
    assert signatures["Direct.compute"] == \
        "self=Direct(), state=Direct.init(options=options, operator=Scale(factor=f32[])), vector=f32[], options={}"
    assert signatures["annotated"] == "x=f32[], stats={'mean': f32[]}"  # the jaxtyping array stays an array


def test_uses_that_decide_nothing_keep_their_reasons(checked) -> None:
    signatures, skipped, findings = checked
    assert "by_name" not in signatures and "subscripted with a key that is not a constant" in skipped["by_name"]
    assert "process" not in signatures and "its key 'type' holds a string, by its comparison" in skipped["process"]
    assert "iterated" not in signatures and "iterates over its .items()" in skipped["iterated"]
    assert "padded" not in signatures and skipped["padded"].endswith("parameter factors: tuple")  # ints
    assert "Posterior.predict" not in signatures and "reads .kernel" in skipped["Posterior.predict"]
    assert "Named.step" not in signatures and skipped["Named.step"].endswith(
        "parameter state: NamedTuple (its code reads .value)")
    assert "Solver.read" not in signatures and "reads .value" in skipped["Solver.read"]
    assert not {line for code, line in findings if line in (_line("return", "def by_name"),
                                                                 _line("return", "def read"))}


STRING_ANNOTATIONS = textwrap.dedent('''\
    from __future__ import annotations

    from typing import Any, Callable, Dict

    import jax
    import jax.numpy as jnp


    def solve(x: jax.Array, options: Dict[str, Any]):
        y = x - options["lower"]
        return jnp.where(y > 0, jnp.log(y), 0.0)  # expect JX501


    def called(x: jax.Array, options: dict[str, Callable]):
        y = x - jnp.sum(options["lower"])
        return jnp.where(y > 0, jnp.log(y), 0.0)


    def padded(x: jax.Array, factors: tuple[int, ...]):
        low, high = factors
        y = jnp.pad(x, (low, high))
        return jnp.where(y > 0, jnp.log(y), 0.0)
''')


def test_string_annotations_read_the_same(tmp_path: Path) -> None:
    path = write(tmp_path, "postponed", STRING_ANNOTATIONS)
    (tmp_path / "pyproject.toml").write_text("[tool.jaxlint]\n")
    result = check_in_process([str(path)], all_rules(), config=load_config([str(path)]))
    signatures = {t.target: t.signature for fa in result.files for t in fa.result.traced}
    skipped = {s.target: s.reason for _, s in result.skipped}
    assert signatures["solve"] == "x=f32[], options={'lower': f32[]}"
    assert "its values are not arrays" in skipped["called"]  # a dict of functions gets no keys
    assert skipped["padded"].endswith("parameter factors: tuple[int, ...]")
    line = STRING_ANNOTATIONS.splitlines().index("    return jnp.where(y > 0, jnp.log(y), 0.0)  # expect JX501") + 1
    assert [(f.code, f.span.start_line) for fa in result.files for f in fa.findings] == [("JX501", line)]
