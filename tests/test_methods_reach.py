"""Methods traced with an instance jaxlint built (worker/argsources/instances.py), beyond
test_methods.py: a finding whose bad point lies among the instance's fields alone is left out
(analysis/instance_points.py) and listed by ``--show-untraced``, one whose point involves the
method's own argument is reported; a trace that fails only at the symbolic size is retried with
sizes.
"""
from __future__ import annotations

import json
import subprocess
import sys
import textwrap
from pathlib import Path

from helpers import check_in_process, expected_markers, write

from jaxlint.config import load_config
from jaxlint.rules import all_rules

# numpyro's Uniform.cdf: the NaN gradient needs high == low, which the class never holds.
UNIFORM = textwrap.dedent('''\
    import jax
    import jax.numpy as jnp
    from jax.typing import ArrayLike


    @jax.tree_util.register_pytree_node_class
    class Uniform:
        def __init__(self, low: ArrayLike = 0.0, high: ArrayLike = 1.0):
            self.low, self.high = jnp.broadcast_arrays(low, high)

        def tree_flatten(self):
            return (self.low, self.high), None

        @classmethod
        def tree_unflatten(cls, aux, children):
            return cls(*children)

        def cdf(self, value: ArrayLike):
            return jnp.clip((value - self.low) / (self.high - self.low), 0.0, 1.0)

        def log_width(self):  # a where testing the fields itself: the program says the point is reached
            width = self.high - self.low
            return jnp.where(width > 0, jnp.log(width), 0.0)  # expect JX501

        def scaled_cdf(self, value: ArrayLike, width: ArrayLike):  # the point is the argument's
            return jnp.clip((value - self.low) / width, 0.0, 1.0)  # expect JX501

        def relative(self, value: ArrayLike):  # the point mixes a field and the argument
            return jnp.clip(self.low / (value - self.high), -1.0, 1.0)  # expect JX501
    ''')
CDF_LINE = next(n for n, line in enumerate(UNIFORM.splitlines(), 1) if "(self.high - self.low), 0.0" in line)


def test_a_bad_point_of_the_fields_alone_is_left_out(tmp_path: Path) -> None:
    path = write(tmp_path, "uniform", UNIFORM)
    (tmp_path / "pyproject.toml").write_text("[tool.jaxlint]\n")
    result = check_in_process([str(path)], all_rules(), config=load_config([str(path)]))
    assert {(f.code, f.span.start_line) for f in result.findings} == expected_markers(UNIFORM)
    assert result.skipped == []
    [left] = [f for fa in result.files for f in fa.result.left_out]
    assert (left.code, left.target, left.span.start_line) == ("JX501", "Uniform.cdf", CDF_LINE)
    assert "self.high - self.low=0" in left.message


def test_show_untraced_lists_what_was_left_out(tmp_path: Path) -> None:
    (tmp_path / "uniform.py").write_text(UNIFORM)
    run = subprocess.run([sys.executable, "-m", "jaxlint", "check", "--isolated", "--no-cache", "--show-untraced",
                          "--output-format", "json", "uniform.py"], cwd=tmp_path, capture_output=True, text=True,
                         timeout=600)
    assert run.returncode == 1, run.stderr
    assert {(f["code"], f["location"]["row"]) for f in json.loads(run.stdout)} == expected_markers(UNIFORM)
    listed = run.stderr[run.stderr.index("findings left out (1): "):].splitlines()
    assert listed[1].startswith(
        f"  uniform.py:{CDF_LINE}: Uniform.cdf JX501 jnp.clip clamps away self.high - self.low=0")
    assert not listed[2].startswith("  ")  # the summary: one entry


SERIES = textwrap.dedent('''\
    import dataclasses

    import jax
    import jax.numpy as jnp


    @dataclasses.dataclass
    class Series:
        x: jax.Array

        def cumulative_log(self):
            total = jax.lax.associative_scan(jnp.add, self.x)  # fails at the symbolic length n
            return jnp.where(total > 0, jnp.log(total), 0.0)  # expect JX501
    ''')


def test_a_method_that_fails_only_at_the_symbolic_size_is_retried_with_sizes(tmp_path: Path) -> None:
    path = write(tmp_path, "series", SERIES)
    (tmp_path / "pyproject.toml").write_text("[tool.jaxlint]\n")
    result = check_in_process([str(path)], all_rules(), config=load_config([str(path)]))
    assert {(f.code, f.span.start_line) for f in result.findings} == expected_markers(SERIES)
    assert [(t.target, t.signature) for fa in result.files for t in fa.result.traced] == [
        ("Series.cumulative_log", "self=Series(x=f32[8])")]


NESTED = textwrap.dedent('''\
    import dataclasses
    from typing import Optional, Union

    import jax
    import jax.numpy as jnp
    from jax.typing import ArrayLike


    @jax.tree_util.register_pytree_node_class
    class Gamma:  # its __init__ refuses abstract values: built inside the trace
        def __init__(self, concentration: ArrayLike, rate: ArrayLike = 1.0):
            self.concentration, self.rate = jnp.broadcast_arrays(concentration, rate)

        def tree_flatten(self):
            return (self.concentration, self.rate), None

        @classmethod
        def tree_unflatten(cls, aux, children):
            return cls(*children)

        def log_normalizer(self):
            return jax.scipy.special.gammaln(self.concentration) - self.concentration * jnp.log(self.rate)

        def kl(self, other: "Gamma"):  # another instance of a class jaxlint builds
            ratio = other.rate / self.rate
            return jnp.where(ratio > 0, jnp.log(ratio), 0.0) * self.concentration  # expect JX501


    @jax.tree_util.register_pytree_node_class
    class Truncated:  # a field holding another distribution (a union: its first member jaxlint builds)
        def __init__(self, base_dist: Union[Gamma, str], low: ArrayLike = 0.0):
            self.base_dist, self.low = base_dist, low

        def tree_flatten(self):
            return (self.base_dist, self.low), None

        @classmethod
        def tree_unflatten(cls, aux, children):
            return cls(*children)

        def log_tail(self):
            tail = self.base_dist.rate * self.low
            return jnp.where(tail > 0, jnp.log(tail), 0.0) - self.base_dist.log_normalizer()  # expect JX501


    @dataclasses.dataclass
    class Linear:
        weight: jax.Array
        bias: Optional[jax.Array]
        in_features: Union[int, str] = dataclasses.field(metadata={"static": True})  # a static union: 2


    @dataclasses.dataclass
    class Attention:  # a dataclass of dataclasses (an equinox module of Linear layers)
        query: Linear
        key: Linear

        def scores(self, x):
            q = self.query.weight @ x
            k = self.key.weight @ x
            return jnp.where(q > 0, jnp.sqrt(q) / k, 0.0)  # expect JX501


    @jax.tree_util.register_pytree_node_class
    class Affine:  # exactly one of scale and log_scale
        def __init__(self, shift: ArrayLike, scale: Optional[ArrayLike] = None, log_scale: Optional[ArrayLike] = None):
            if (scale is None) == (log_scale is None):
                raise ValueError("exactly one of `scale` and `log_scale` must be given")
            self.shift = shift
            self.scale = jnp.exp(log_scale) if scale is None else scale

        def tree_flatten(self):
            return (self.shift, self.scale), None

        @classmethod
        def tree_unflatten(cls, aux, children):
            return cls(*children)

        def inverse(self, y):
            return jnp.where(self.scale != 0, (y - self.shift) / self.scale, 0.0)  # expect JX501
    ''')


def test_fields_and_parameters_that_hold_instances_are_built(tmp_path: Path) -> None:
    path = write(tmp_path, "nested", NESTED)
    (tmp_path / "pyproject.toml").write_text("[tool.jaxlint]\n")
    result = check_in_process([str(path)], all_rules(), config=load_config([str(path)]))
    assert {(f.code, f.span.start_line) for f in result.findings} == expected_markers(NESTED)
    assert result.skipped == []
    signatures = {t.target: t.signature for fa in result.files for t in fa.result.traced}
    assert signatures == {
        "Gamma.log_normalizer": "self=Gamma(concentration=f32[], rate=f32[])",
        "Gamma.kl": "self=Gamma(concentration=f32[], rate=f32[]), other=Gamma(concentration=f32[], rate=f32[])",
        "Truncated.log_tail": "self=Truncated(base_dist=Gamma(concentration=f32[], rate=f32[]), low=f32[])",
        "Attention.scores": "self=Attention(query=Linear(weight=f32[n], bias=f32[n], in_features=2), "
                            "key=Linear(weight=f32[n], bias=f32[n], in_features=2)), x=f32[n]",
        "Affine.inverse": "self=Affine(shift=f32[], scale=f32[]), y=f32[]",  # log_scale None
        # Constructors, by making an instance in the trace (argsources/constructors.py):
        "Gamma.__init__": "concentration=f32[], rate=f32[]",
        "Affine.__init__": "shift=f32[], scale=f32[], log_scale=None",
    }


CHECKED = textwrap.dedent('''\
    import dataclasses

    import jax
    import jax.numpy as jnp


    @jax.tree_util.register_pytree_node_class
    @dataclasses.dataclass
    class Dataset:  # its unflatten checks the shapes (gpjax's): the retry's sizes are refused at rank 1
        X: jax.Array

        def __post_init__(self):
            if self.X.ndim != 2:
                raise ValueError(f"X must be 2-D, got X.ndim={self.X.ndim}")

        def tree_flatten(self):
            return (self.X,), None

        @classmethod
        def tree_unflatten(cls, aux, children):
            return cls(*children)

        def total(self):
            return jnp.sum(jax.lax.associative_scan(jnp.add, self.X))
    ''')


def test_a_pytree_that_refuses_the_retry_sizes_is_no_crash(tmp_path: Path) -> None:
    path = write(tmp_path, "dataset", CHECKED)
    (tmp_path / "pyproject.toml").write_text("[tool.jaxlint]\n")
    result = check_in_process([str(path)], all_rules(), config=load_config([str(path)]))
    assert result.findings == [] and result.skipped == []
    assert [t.signature for fa in result.files for t in fa.result.traced] == ["self=Dataset(X=f32[8,8])"]
