"""An abstract class's own method, and a function or method whose parameter is annotated with an
abstract base (brax's ``PipelineEnv.pipeline_step``, ``generate_unroll(env: Env)``, lineax's
``compute(..., operator: AbstractLinearOperator)``): traced with an instance of the first concrete
subclass, by module and name, defined in the base's package, that jaxlint builds, named in the
signature; for the method, one that inherits it unchanged, so the method's own code is what runs
(a plain class too, made in the trace by its ``__init__``; never for a parameter). A base that is
no ABC but whose methods raise NotImplementedError (numpyro's ``Distribution``) is abstract in
fact: the subclass that fills more of them is tried first. A method none of whose rungs traces with
the first subclass is tried with the next one (three at most). An abstract base with no subclass
jaxlint builds is counted as not linted, with why. One check, in the test process."""
from __future__ import annotations

import textwrap
from pathlib import Path

import pytest
from helpers import check_in_process, expected_markers, write

from jaxlint.config import load_config
from jaxlint.report.coverage import coverage
from jaxlint.rules import all_rules

MODULE = textwrap.dedent('''\
    import abc
    import dataclasses

    import jax
    import jax.numpy as jnp


    class Env(abc.ABC):
        @abc.abstractmethod
        def step(self, x):
            ...

        def energy(self, x):  # the abstract class's own method
            return jnp.where(x > 0, 1 / jnp.sqrt(x), 0.0) + self.step(x)

        def rollout(self, x):
            return jnp.sum(self.step(x))


    @dataclasses.dataclass
    class Cart(Env):  # first by name, but it overrides rollout: never rollout's self
        mass: float = 2.0

        def step(self, x):
            return x * self.mass

        def rollout(self, x):
            return jnp.cumsum(self.step(x))


    class Pendulum(Env):  # a plain class: made in the trace by its __init__
        def __init__(self, length: float = 1.0):
            self.length = length

        def step(self, x):
            return jnp.sin(x) * self.length


    def unroll(env: Env, x):
        def body(carry, _):  # runs in unroll's trace: linted with it
            return jnp.tanh(env.step(carry)), carry

        return jax.lax.scan(body, x, None, length=3)


    @dataclasses.dataclass
    class Solver:
        tol: float

        def solve(self, env: Env, x):  # a method's parameter annotated with the base
            return jnp.sum(env.step(x)) / self.tol


    class Sim(abc.ABC):
        @abc.abstractmethod
        def run(self, x):
            ...


    class Box(Sim):  # its only subclass, a plain class
        def __init__(self, width: float = 1.0):
            self.width = width

        def run(self, x):
            return jnp.minimum(x, self.width)


    @dataclasses.dataclass
    class Recorder:
        sim: Sim  # a field: a plain subclass is made in the trace

        def record(self, x):
            return jnp.sum(self.sim.run(x))


    def simulate(sim: Sim, x):  # a parameter: never a plain subclass (no attribute read: no made-up one)
        return jnp.sum(type(sim).run(sim, x))


    class Distribution:  # no ABC, but abstract in fact: its methods raise NotImplementedError
        def log_prob(self, value):
            raise NotImplementedError

        def cdf(self, value):
            """The cumulative distribution function."""
            raise NotImplementedError()


    @dataclasses.dataclass
    class Exponential(Distribution):  # first by name, but it fills log_prob only
        rate: jax.Array

        def log_prob(self, value):
            return jnp.log(self.rate) - self.rate * value


    @dataclasses.dataclass
    class Logistic(Distribution):  # fills both: tried first
        loc: jax.Array

        def log_prob(self, value):
            return -jnp.logaddexp(0.0, value - self.loc)

        def cdf(self, value):
            return jax.nn.sigmoid(value - self.loc)


    @dataclasses.dataclass
    class Censored:
        base_dist: Distribution

        def log_survival(self, value):
            return jnp.log1p(-self.base_dist.cdf(value))


    class Interval(abc.ABC):
        @abc.abstractmethod
        def bounds(self):
            ...

        def ratio(self):  # a point of the chosen subclass's fields alone
            low, high = self.bounds()
            return jnp.clip(low / (high - low), 0.0, 1.0)


    @dataclasses.dataclass
    class Uniform(Interval):
        low: jax.Array
        high: jax.Array

        def bounds(self):
            return self.low, self.high


    class Shape(abc.ABC):
        @abc.abstractmethod
        def area(self):
            ...

        def scaled(self, x):
            return jnp.multiply(self.area(), x)


    @dataclasses.dataclass
    class Polygon(Shape):  # its only subclass: a tuple field jaxlint cannot fill
        sides: tuple

        def area(self):
            return len(self.sides)


    def total(shape: Shape, x):  # no attribute read of shape: no made-up one either (made_up.py)
        return jnp.sum(Shape.scaled(shape, x))
''')
RATIO_LINE = next(n for n, line in enumerate(MODULE.splitlines(), 1) if "low / (high - low)" in line)
ENERGY_LINE = next(n for n, line in enumerate(MODULE.splitlines(), 1) if "1 / jnp.sqrt(x)" in line)


@pytest.fixture(scope="module")
def checked(tmp_path_factory: pytest.TempPathFactory):
    root: Path = tmp_path_factory.mktemp("abstract_bases")
    path = write(root, "envs", MODULE)
    (root / "pyproject.toml").write_text("[tool.jaxlint]\n")
    return check_in_process([str(path)], all_rules(), config=load_config([str(path)]))


def _signatures(result) -> dict[str, str]:
    return {t.target: t.signature for fa in result.files for t in fa.result.traced}


def test_an_abstract_class_method_runs_with_a_subclass_that_inherits_it(checked) -> None:
    signatures = _signatures(checked)
    assert signatures["Env.energy"] == "self=Cart(mass=f32[]), x=f32[]"
    assert signatures["Env.rollout"] == "self=Pendulum(length=f32[]), x=f32[]"


def test_the_abstract_class_method_is_linted_where_its_code_is(checked) -> None:
    found = [(f.code, f.span.start_line) for f in checked.findings]
    assert ("JX501", ENERGY_LINE) in found  # x is the method's own argument: a caller may pass 0


def test_a_point_of_the_chosen_subclass_fields_alone_is_left_out(checked) -> None:
    assert _signatures(checked)["Interval.ratio"] == "self=Uniform(low=f32[], high=f32[])"
    left = {(f.code, f.target, f.span.start_line) for fa in checked.files for f in fa.result.left_out}
    assert ("JX501", "Interval.ratio", RATIO_LINE) in left
    assert [f for f in checked.findings if f.span.start_line == RATIO_LINE] == []


def test_a_parameter_annotated_with_an_abstract_base_gets_a_subclass(checked) -> None:
    signatures = _signatures(checked)
    assert signatures["unroll"] == "env=Cart(mass=f32[]), x=f32[]"
    assert signatures["Solver.solve"] == "self=Solver(tol=f32[]), env=Cart(mass=f32[]), x=f32[]"
    assert signatures["Recorder.record"] == "self=Recorder(sim=Box(width=f32[])), x=f32[]"
    linted = {f.function: f.linted for f in coverage(checked).functions}
    assert linted["unroll.<locals>.body"] and linted["Solver.solve"]


def test_a_base_whose_methods_raise_not_implemented_gets_the_subclass_that_fills_most(checked) -> None:
    assert _signatures(checked)["Censored.log_survival"] == "self=Censored(base_dist=Logistic(loc=f32[])), value=f32[]"


def test_an_abstract_base_without_a_buildable_subclass_is_counted_with_why(checked) -> None:
    skipped = {s.target: s.reason for _, s in checked.skipped}
    assert skipped["Shape.scaled"] == ("arguments not inferred: no Shape instance: an abstract class, and none of "
                                       "its concrete subclasses that inherit the method can be built "
                                       "(Polygon: self.sides: tuple (no use shows its length))")
    assert skipped["total"] == ("arguments not inferred: parameter shape: Shape (no instance: an abstract class, "
                                "and no concrete subclass in its package can be built for a parameter (a "
                                "dataclass, NamedTuple or pytree class))")
    assert skipped["simulate"].startswith("arguments not inferred: parameter sim: Sim (no instance: an abstract class")


# tinygp's Kernel.__call__: its first subclass, Constant, holds a scalar, which the rank-1 rung the
# vmap needs is not; the next subclass's rungs are tried.
KERNELS = textwrap.dedent('''\
    import abc
    import dataclasses

    import jax
    import jax.numpy as jnp


    class Kernel(abc.ABC):
        @abc.abstractmethod
        def evaluate(self, X1, X2):
            ...

        def __call__(self, X1):
            values = jax.vmap(lambda x: self.evaluate(x, x))(X1)
            return jnp.where(X1 > 0, jnp.sqrt(X1), 0.0) * values  # expect JX501


    @dataclasses.dataclass
    class Constant(Kernel):
        value: jax.Array

        def evaluate(self, X1, X2):  # fails on every rung (a scalar value and a vector X1 would trace)
            if not isinstance(self.value, float):
                raise ValueError("The value of a constant kernel must be a Python float")
            return self.value


    @dataclasses.dataclass
    class Linear(Kernel):
        scale: jax.Array

        def evaluate(self, X1, X2):
            return self.scale * X1 * X2


    @dataclasses.dataclass
    class Polynomial(Kernel):  # a third subclass: tried only where the first two fail
        order: jax.Array

        def evaluate(self, X1, X2):
            return (X1 * X2) ** self.order
    ''')


def test_an_abstract_class_method_tries_the_next_subclass(tmp_path: Path) -> None:
    path = write(tmp_path, "kernels", KERNELS)
    (tmp_path / "pyproject.toml").write_text("[tool.jaxlint]\n")
    result = check_in_process([str(path)], all_rules(), config=load_config([str(path)]))
    assert {(f.code, f.span.start_line) for f in result.findings} == expected_markers(KERNELS)
    signatures = {t.target: t.signature for fa in result.files for t in fa.result.traced}
    assert signatures["Kernel.__call__"] == "self=Linear(scale=f32[]), X1=f32[n]"  # X1 vmapped: rank 1 at rank 0


# diffrax's AbstractPath.derivative: its first two subclasses (Brownian paths) refuse the jvp; the
# third, a linear interpolation, traces. A fourth is not tried.
PATHS = textwrap.dedent('''\
    import abc
    import dataclasses

    import jax
    import jax.numpy as jnp


    class Path(abc.ABC):
        @abc.abstractmethod
        def evaluate(self, t):
            ...

        def derivative(self, t):
            return jax.jvp(self.evaluate, (t,), (jnp.ones_like(t),))[1]


    @dataclasses.dataclass
    class Bridge(Path):
        key: jax.Array

        def evaluate(self, t):
            raise RuntimeError("a Brownian path cannot be differentiated")


    @dataclasses.dataclass
    class Brownian(Path):
        key: jax.Array

        def evaluate(self, t):
            raise RuntimeError("a Brownian path cannot be differentiated")


    @dataclasses.dataclass
    class Linear(Path):
        y0: jax.Array
        y1: jax.Array

        def evaluate(self, t):
            return self.y0 + t * (self.y1 - self.y0)


    class Curve(abc.ABC):
        @abc.abstractmethod
        def evaluate(self, t):
            ...

        def slope(self, t):
            return jax.jvp(self.evaluate, (t,), (jnp.ones_like(t),))[1]


    @dataclasses.dataclass
    class Arc(Curve):
        key: jax.Array

        def evaluate(self, t):
            raise RuntimeError("no slope")


    @dataclasses.dataclass
    class Bend(Curve):
        key: jax.Array

        def evaluate(self, t):
            raise RuntimeError("no slope")


    @dataclasses.dataclass
    class Coil(Curve):
        key: jax.Array

        def evaluate(self, t):
            raise RuntimeError("no slope")


    @dataclasses.dataclass
    class Line(Curve):  # a fourth subclass: not tried
        y0: jax.Array

        def evaluate(self, t):
            return self.y0 * t
    ''')


def test_an_abstract_class_method_tries_a_third_subclass_not_a_fourth(tmp_path: Path) -> None:
    path = write(tmp_path, "paths", PATHS)
    (tmp_path / "pyproject.toml").write_text("[tool.jaxlint]\n")
    result = check_in_process([str(path)], all_rules(), config=load_config([str(path)]))
    signatures = {t.target: t.signature for fa in result.files for t in fa.result.traced}
    assert signatures["Path.derivative"] == "self=Linear(y0=f32[], y1=f32[]), t=f32[]"
    assert "Curve.slope" not in signatures
