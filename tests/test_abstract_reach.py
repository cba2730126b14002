"""Abstract classes and the instances that stood in for them, reached further (issue 48):
an abstract class's method whose only inheriting subclass lives in a module of its package that
nothing imported (dynamax's ``SSM.sample``, its models in other modules), or is private
(diffrax's ``_Dopri5Interpolation``); a parameter annotated with a type variable whose bound is a
string (gpjax's ``kernel: K``, bound to ``"gpjax.kernels.base.AbstractKernel"``); a field whose
class's type hints do not all resolve; a field annotated with a generic abstract class (diffrax's
``term: AbstractTerm[_VF, _Control]``); a field annotated ``Any`` set from an annotated
``__init__`` parameter (gpjax's ``constant: Any``). Near misses: a method every subclass overrides
stays not linted, with why. Only ``base.py`` is checked: the package's other modules are imported
by jaxlint alone, to find the subclasses. One check, in the test process."""
from __future__ import annotations

import textwrap
from pathlib import Path

import pytest
from helpers import check_in_process, expected_markers, write

from jaxlint.config import load_config
from jaxlint.rules import all_rules

PACKAGE = "reach_abstract_pkg"  # unique: the test process keeps what it imported

BASE = textwrap.dedent(f'''\
    from __future__ import annotations

    import abc
    import dataclasses
    from typing import TYPE_CHECKING, Any, Generic, Optional, TypeVar

    import jax
    import jax.numpy as jnp
    from jaxtyping import PyTree

    if TYPE_CHECKING:
        from {PACKAGE}.cache import Cache  # never resolves at run time

    K = TypeVar("K", bound="{PACKAGE}.base.Kernel")
    S = TypeVar("S", bound="{PACKAGE}.extra.Special")  # a module nothing imports
    C = TypeVar("C")


    class Model(abc.ABC):
        @abc.abstractmethod
        def drift(self, x):
            ...

        def energy(self, x):  # inherited by Spring alone, defined in models.py
            return jnp.where(x > 0, 1 / jnp.sqrt(x), 0.0) + self.drift(x)  # expect JX501

        def rollout(self, x):  # every subclass overrides it: never reached
            return jnp.sum(self.drift(x))


    class Interpolation(abc.ABC):
        @abc.abstractmethod
        def coefficients(self):
            ...

        def evaluate(self, t):  # inherited by a private subclass alone
            return jnp.where(t > 0, 1 / jnp.sqrt(t), 0.0) * self.coefficients()  # expect JX501


    class Kernel(abc.ABC):
        @abc.abstractmethod
        def diagonal(self, x):
            ...


    class Term(abc.ABC, Generic[C]):
        @abc.abstractmethod
        def vf(self, y):
            ...


    @dataclasses.dataclass
    class Computation:
        jitter: float = 1e-6

        def gram(self, kernel: K, x: jax.Array):  # K: a type variable bound by a string
            return jnp.where(x > 0, 1 / jnp.sqrt(x), 0.0) * kernel.diagonal(x)  # expect JX501

        def features(self, kernel: S, x: jax.Array):
            return jnp.where(x > 0, 1 / jnp.sqrt(x), 0.0) * kernel.weight  # expect JX501


    @dataclasses.dataclass
    class Solver:
        kernel: Kernel  # Cache cannot resolve: typing.get_type_hints fails for every field
        cache: Optional[Cache] = None

        def solve(self, x):
            return jnp.where(x > 0, 1 / jnp.sqrt(x), 0.0) + self.kernel.diagonal(x)  # expect JX501


    @dataclasses.dataclass
    class Wrapped:
        term: Term[int]  # a generic abstract class

        def vf(self, y):
            return jnp.where(y > 0, 1 / jnp.sqrt(y), 0.0) * self.term.vf(y)  # expect JX501


    @dataclasses.dataclass
    class Sum(Term):
        terms: tuple[Term, ...]  # a tuple of an abstract base's instances

        def vf(self, y):
            return jnp.where(y > 0, 1 / jnp.sqrt(y), 0.0) * sum(t.vf(y) for t in self.terms)  # expect JX501


    def total_drift(terms: PyTree[Term], y: jax.Array):  # one instance is such a tree
        return jnp.where(y > 0, 1 / jnp.sqrt(y), 0.0) * terms.vf(y)  # expect JX501


    @dataclasses.dataclass(init=False)
    class Scaled(Kernel):
        scale: Any  # set by __init__ from its annotated parameter

        def __init__(self, scale: jax.Array):
            self.scale = jnp.asarray(scale)

        def diagonal(self, x):
            return self.scale * jnp.ones_like(x)

        def inverse(self, x):
            return jnp.where(x > 0, 1 / jnp.sqrt(x), 0.0) * self.scale  # expect JX501

''')

MODELS = textwrap.dedent(f'''\
    import dataclasses

    import jax
    import jax.numpy as jnp

    from {PACKAGE}.base import Interpolation, Kernel, Model, Term


    @dataclasses.dataclass
    class Damped(Model):  # first by name, but it overrides energy
        mass: jax.Array

        def drift(self, x):
            return x * self.mass

        def energy(self, x):
            return jnp.sum(x)

        def rollout(self, x):
            return jnp.cumsum(x)


    @dataclasses.dataclass
    class Spring(Model):
        stiffness: jax.Array

        def drift(self, x):
            return -self.stiffness * x

        def rollout(self, x):
            return jnp.cumsum(self.drift(x))


    @dataclasses.dataclass
    class _Quartic(Interpolation):
        coeffs: jax.Array

        def coefficients(self):
            return self.coeffs


    @dataclasses.dataclass
    class White(Kernel):
        variance: jax.Array

        def diagonal(self, x):
            return self.variance * jnp.ones_like(x)


    @dataclasses.dataclass
    class Linear(Term):
        slope: jax.Array

        def vf(self, y):
            return self.slope * y
''')


EXTRA = textwrap.dedent('''\
    import dataclasses

    import jax


    @dataclasses.dataclass
    class Special:
        weight: jax.Array
''')


@pytest.fixture(scope="module")
def checked(tmp_path_factory: pytest.TempPathFactory):
    root: Path = tmp_path_factory.mktemp("abstract_reach")
    package = root / PACKAGE
    package.mkdir()
    (package / "__init__.py").write_text("")
    write(package, "models", MODELS)
    write(package, "extra", EXTRA)
    path = write(package, "base", BASE)
    (root / "pyproject.toml").write_text("[tool.jaxlint]\n")
    return check_in_process([str(path)], all_rules(), config=load_config([str(path)]))


def _signatures(result) -> dict[str, str]:
    return {t.target: t.signature for fa in result.files for t in fa.result.traced}


def test_the_findings_are_at_the_abstract_classes_lines(checked) -> None:
    assert {(f.code, f.span.start_line) for f in checked.findings} == expected_markers(BASE)


def test_a_subclass_in_a_module_nothing_imported_is_found(checked) -> None:
    assert _signatures(checked)["Model.energy"] == "self=Spring(stiffness=f32[]), x=f32[]"


def test_a_private_subclass_that_inherits_the_method_is_its_self(checked) -> None:
    assert _signatures(checked)["Interpolation.evaluate"] == "self=_Quartic(coeffs=f32[]), t=f32[]"


def test_a_type_variable_bound_by_a_string_gets_a_subclass(checked) -> None:
    assert _signatures(checked)["Computation.gram"] == \
        "self=Computation(jitter=f32[]), kernel=Scaled(scale=f32[]), x=f32[]"


def test_a_bound_in_a_module_of_the_package_nothing_imported_is_imported(checked) -> None:
    assert _signatures(checked)["Computation.features"] == \
        "self=Computation(jitter=f32[]), kernel=Special(weight=f32[]), x=f32[]"


def test_a_tuple_of_an_abstract_base_holds_its_subclass(checked) -> None:
    assert _signatures(checked)["Sum.vf"] == "self=Sum(terms=(Linear(slope=f32[]), Linear(slope=f32[]))), y=f32[]"


def test_a_pytree_of_an_abstract_base_is_one_instance_of_its_subclass(checked) -> None:
    assert _signatures(checked)["total_drift"] == "terms=Linear(slope=f32[]), y=f32[]"


def test_a_field_resolves_when_another_does_not(checked) -> None:
    assert _signatures(checked)["Solver.solve"] == "self=Solver(kernel=Scaled(scale=f32[]), cache=None), x=f32[]"


def test_a_generic_abstract_field_gets_a_subclass(checked) -> None:
    assert _signatures(checked)["Wrapped.vf"] == "self=Wrapped(term=Linear(slope=f32[])), y=f32[]"


def test_an_any_field_takes_its_init_parameters_annotation(checked) -> None:
    assert _signatures(checked)["Scaled.inverse"] == "self=Scaled(scale=f32[]), x=f32[]"


def test_a_method_every_subclass_overrides_stays_not_linted_with_why(checked) -> None:
    skipped = {s.target: s.reason for _, s in checked.skipped}
    assert skipped["Model.rollout"] == ("arguments not inferred: no Model instance: an abstract class, and no "
                                        "concrete subclass in its package inherits the method")
