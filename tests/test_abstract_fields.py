"""A field annotated with an abstract base class (numpyro's ``base_dist: Distribution``) holds the
first concrete subclass, by module and name, defined in the base's package, that jaxlint can
build, shown by its class in the signature; a bad point among its fields alone is left out, as
any built field's is. One check per module, in the test process."""
from __future__ import annotations

import textwrap
from pathlib import Path

from helpers import check_in_process, write

from jaxlint.config import load_config
from jaxlint.rules import all_rules

MODULE = textwrap.dedent('''\
    import abc
    import dataclasses

    import jax
    import jax.numpy as jnp


    class Dist(abc.ABC):
        @abc.abstractmethod
        def cdf(self, value):
            ...


    @dataclasses.dataclass
    class Layers(Dist):  # first by name, but its tuple field cannot be built
        layers: tuple

        def cdf(self, value):
            return jnp.tanh(self.layers[0](value))


    @dataclasses.dataclass
    class Uniform(Dist):
        low: jax.Array
        high: jax.Array

        def cdf(self, value):
            return jnp.clip((value - self.low) / (self.high - self.low), 0.0, 1.0)


    @dataclasses.dataclass
    class Truncated:
        base_dist: Dist

        def cdf(self, value):
            return jnp.sqrt(self.base_dist.cdf(value))

        def ratio(self):  # a point of the subclass's fields alone, which only this method makes
            base = self.base_dist
            return jnp.clip(base.low / (base.high - base.low), 0.0, 1.0)


    class Shape(abc.ABC):
        @abc.abstractmethod
        def area(self):
            ...


    @dataclasses.dataclass
    class Polygon(Shape):
        sides: tuple

        def area(self):
            return len(self.sides)


    @dataclasses.dataclass
    class Holder:
        shape: Shape

        def scaled(self, x):
            return jnp.multiply(self.shape.area(), x)
''')
CDF_LINE = next(n for n, line in enumerate(MODULE.splitlines(), 1) if "(self.high - self.low), 0.0" in line)
RATIO_LINE = next(n for n, line in enumerate(MODULE.splitlines(), 1) if "(base.high - base.low), 0.0" in line)


def _checked(tmp_path: Path):
    path = write(tmp_path, "abstracts", MODULE)
    (tmp_path / "pyproject.toml").write_text("[tool.jaxlint]\n")
    return check_in_process([str(path)], all_rules(), config=load_config([str(path)]))


def test_an_abstract_base_field_holds_a_concrete_subclass(tmp_path: Path) -> None:
    result = _checked(tmp_path)
    signatures = {t.target: t.signature for fa in result.files for t in fa.result.traced}
    assert signatures["Truncated.cdf"] == "self=Truncated(base_dist=Uniform(low=f32[], high=f32[])), value=f32[]"
    # high == low: a point of the guessed subclass's fields alone, through the wrapper too, is left out.
    left = {(f.code, f.target, f.span.start_line) for fa in result.files for f in fa.result.left_out}
    assert ("JX501", "Truncated.ratio", RATIO_LINE) in left
    assert [f for f in result.findings if f.span.start_line in (CDF_LINE, RATIO_LINE)] == []


def test_an_abstract_base_without_a_buildable_subclass_stays_untraced(tmp_path: Path) -> None:
    result = _checked(tmp_path)
    skipped = {s.target: s.reason for _, s in result.skipped}
    assert skipped["Holder.scaled"] == "arguments not inferred: no Holder instance: self.shape: Shape"
