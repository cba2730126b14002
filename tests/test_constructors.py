"""Constructors (``__init__``, ``__post_init__``, ``__check_init__``) are traced by making an
instance inside the trace from the field values the instance builder gives
(worker/argsources/constructors.py): their own operations are linted, and a finding there is
reported at its line. One check per module, in the test process.
"""
from __future__ import annotations

import textwrap
from pathlib import Path

import pytest
from helpers import check_in_process, expected_markers, write

from jaxlint.config import load_config
from jaxlint.report.coverage import coverage
from jaxlint.rules import all_rules

CONSTRUCTORS = textwrap.dedent('''\
    import abc
    import dataclasses
    from typing import Optional

    import jax
    import jax.numpy as jnp


    @jax.tree_util.register_pytree_node_class
    class Scale:
        def __init__(self, loc, scale):
            self.loc = jnp.asarray(loc)
            self.scale = jnp.where(scale > 0, jnp.sqrt(scale), 0.0)  # expect JX501

        def tree_flatten(self):
            return (self.loc, self.scale), None

        @classmethod
        def tree_unflatten(cls, aux, children):
            return cls(*children)


    @dataclasses.dataclass
    class Box:
        lo: jax.Array
        hi: jax.Array

        def __post_init__(self):
            self.log_width = jnp.log1p(jnp.exp(self.hi - self.lo))  # expect JX708


    class Categorical:  # exactly one of logits and probs: given one at a time, the other None
        def __init__(self, logits: Optional[jax.Array] = None, probs: Optional[jax.Array] = None):
            if (logits is None) == (probs is None):
                raise ValueError("One and exactly one of logits and probs should be None")
            self.logits = jnp.log(probs) if logits is None else jnp.log1p(jnp.exp(logits))  # expect JX708


    class Base(abc.ABC):  # abstract: its constructor runs through a concrete subclass that inherits it
        def __init__(self, rate: jax.Array):
            self.rate = jnp.where(rate > 0, 1.0 / rate, 0.0)  # expect JX501

        @abc.abstractmethod
        def mean(self):
            ...


    class Exponential(Base):
        def mean(self):
            return self.rate
    ''')

NEAR_MISSES = textwrap.dedent('''\
    import dataclasses

    import jax.numpy as jnp


    class Config:  # a field no guess gives: counted with why
        def __init__(self, name: str, steps: int = 3):
            self.name = name
            self.table = jnp.arange(steps)


    @dataclasses.dataclass
    class Clean:
        x: jnp.ndarray

        def __post_init__(self):
            self.y = jnp.sqrt(jnp.abs(self.x) + 1.0)


    class Plain:
        def __init__(self, x: jnp.ndarray):
            self.x = x

        def __post_init__(self):  # not a dataclass: making a Plain never runs it
            self.y = jnp.log(1 + self.x)
    ''')


def _checked(tmp_path: Path, name: str, text: str):
    path = write(tmp_path, name, text)
    (tmp_path / "pyproject.toml").write_text("[tool.jaxlint]\n")
    return check_in_process([str(path)], all_rules(), config=load_config([str(path)]))


def test_constructors_are_traced_by_making_an_instance(tmp_path: Path) -> None:
    result = _checked(tmp_path, "constructors", CONSTRUCTORS)
    assert {(f.code, f.span.start_line) for f in result.findings} == expected_markers(CONSTRUCTORS)
    assert {f.target for f in result.findings} == {"Scale.__init__", "Box.__post_init__", "Categorical.__init__",
                                                   "Base.__init__"}
    signatures = {t.target: t.signature for fa in result.files for t in fa.result.traced}
    assert signatures == {
        "Scale.__init__": "loc=f32[], scale=f32[]",
        "Box.__post_init__": "lo=f32[], hi=f32[]",
        "Categorical.__init__": "logits=f32[], probs=None",
        "Base.__init__": "rate=f32[]",
    }
    linted = {f.function: f.linted for f in coverage(result).functions}
    assert all(linted.values()), linted


def test_constructors_without_arrays_or_findings_stay_quiet(tmp_path: Path) -> None:
    result = _checked(tmp_path, "near", NEAR_MISSES)
    assert result.findings == []
    skipped = {s.target: s.reason for _, s in result.skipped}
    assert skipped == {"Config.__init__": "arguments not inferred: no Config instance: self.name: str",
                       "Plain.__post_init__": "arguments not inferred: no Plain instance: not a dataclass: making an "
                                              "instance does not run its __post_init__"}
    [config] = [u for u in coverage(result).untraced if u.target == "Config.__init__"]
    assert config.note == ("a hint cannot give `self`: make a Config(...) once while the module is imported, "
                           "or register one in an examples file")
    assert [t.target for fa in result.files for t in fa.result.traced] == ["Clean.__post_init__"]


EQUINOX = textwrap.dedent('''\
    import equinox as eqx
    import jax
    import jax.numpy as jnp


    class Positive(eqx.Module):
        x: jax.Array

        def __check_init__(self):
            eqx.error_if(self.x, jnp.any(self.x < 0), "negative")
    ''')


def test_an_equinox_check_init_runs_in_the_trace(tmp_path: Path) -> None:
    pytest.importorskip("equinox")
    result = _checked(tmp_path, "checked", EQUINOX)
    signatures = {t.target: t.signature for fa in result.files for t in fa.result.traced}
    assert signatures == {"Positive.__check_init__": "x=f32[]"}
    assert {f.function: f.linted for f in coverage(result).functions} == {"Positive.__check_init__": True}
