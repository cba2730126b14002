"""Fields whose default is None in an instance jaxlint builds (worker/argsources/optional_fields.py):
left None where the class takes exactly one of them, for a method's ``self``, for an instance in
another class's field and for a function's parameter; the choice is tried with concrete sizes
where the class compares a size (``shape[-1] < 2``); a class that refuses every choice is counted
as not linted with why (one that takes every field stays filled: test_methods_reach.py's
``Linear.bias``). An index array field whose default is None is an i32 array.
"""
from __future__ import annotations

import textwrap
from pathlib import Path

from helpers import check_in_process, expected_markers, write

from jaxlint.config import load_config
from jaxlint.rules import all_rules

# distrax's Categorical, Multinomial and MixtureSameFamily, and a KL between two Categoricals.
CATEGORICAL = textwrap.dedent('''\
    from typing import Optional

    import jax
    import jax.numpy as jnp
    from jax.typing import ArrayLike


    @jax.tree_util.register_pytree_node_class
    class Categorical:  # exactly one of logits and probs, of two categories at least
        def __init__(self, logits: Optional[ArrayLike] = None, probs: Optional[ArrayLike] = None):
            if (logits is None) == (probs is None):
                raise ValueError("One and exactly one of `logits` and `probs` should be `None`")
            given = logits if probs is None else probs
            if given.shape[-1] < 2:
                raise ValueError("the last dimension must be greater than 1")
            self.logits = jax.nn.log_softmax(logits) if probs is None else jnp.log(probs)

        def tree_flatten(self):
            return (self.logits,), None

        @classmethod
        def tree_unflatten(cls, aux, children):
            return cls(logits=children[0])

        def log_prob(self, value):
            return jnp.where(value > 0, jnp.log(value), self.logits)  # expect JX501


    @jax.tree_util.register_pytree_node_class
    class Mixture:  # a Categorical in a field
        def __init__(self, mixing: Categorical, loc: ArrayLike):
            self.mixing, self.loc = mixing, loc

        def tree_flatten(self):
            return (self.mixing, self.loc), None

        @classmethod
        def tree_unflatten(cls, aux, children):
            return cls(*children)

        def log_mean(self, value):
            mean = jnp.sum(jnp.exp(self.mixing.logits) * self.loc, axis=-1)
            return jnp.where(value > 0, jnp.log(value) + mean, 0.0)  # expect JX501


    def kl(p: Categorical, q: Categorical):
        return jnp.sum(jnp.exp(p.logits) * (p.logits - q.logits), axis=-1)


    @jax.tree_util.register_pytree_node_class
    class Refusing:  # no choice makes one
        def __init__(self, rate: Optional[ArrayLike] = None, scale: Optional[ArrayLike] = None):
            raise ValueError("Refusing takes no arguments")

        def tree_flatten(self):
            return (), None

        @classmethod
        def tree_unflatten(cls, aux, children):
            return cls()

        def mean(self):
            return jnp.zeros(())
    ''')


def test_a_class_that_takes_exactly_one_of_its_optional_fields(tmp_path: Path) -> None:
    path = write(tmp_path, "categorical", CATEGORICAL)
    (tmp_path / "pyproject.toml").write_text("[tool.jaxlint]\n")
    result = check_in_process([str(path)], all_rules(), config=load_config([str(path)]))
    assert {(f.code, f.span.start_line) for f in result.findings} == expected_markers(CATEGORICAL)
    signatures = {t.target: t.signature for fa in result.files for t in fa.result.traced}
    categorical = "Categorical(logits=f32[8], probs=None)"  # probs left None; 8: `shape[-1] < 2` takes a size
    assert signatures == {
        "Categorical.log_prob": f"self={categorical}, value=f32[8]",
        "Mixture.log_mean": f"self=Mixture(mixing={categorical}, loc=f32[8]), value=f32[8]",
        "kl": f"p={categorical}, q={categorical}",
        "Categorical.__init__": "logits=f32[8], probs=None",  # constructors.py: logits alone
    }
    untraced = {s.target: s.reason for _, s in result.skipped}
    assert set(untraced) == {"Refusing.mean"}
    assert "self=Refusing(rate=f32[], scale=f32[]): ValueError: Refusing takes no arguments" \
        in untraced["Refusing.mean"]


# jax_md's Topology: an index array whose default is None is an array (i32) like any other.
INDEX = textwrap.dedent('''\
    import dataclasses
    from typing import Optional

    import jax
    import jax.numpy as jnp


    @dataclasses.dataclass
    class Topology:
        maps: jax.Array
        map_idx: Optional[jax.Array] = None

        def gathered(self, scale):
            if self.map_idx is None:
                return jnp.zeros(())
            return jnp.where(scale > 0, jnp.sqrt(scale), 0.0) * jnp.take(self.maps, self.map_idx)  # expect JX501
    ''')


def test_an_index_array_field_whose_default_is_none_is_an_array(tmp_path: Path) -> None:
    path = write(tmp_path, "topology", INDEX)
    (tmp_path / "pyproject.toml").write_text("[tool.jaxlint]\n")
    result = check_in_process([str(path)], all_rules(), config=load_config([str(path)]))
    assert {(f.code, f.span.start_line) for f in result.findings} == expected_markers(INDEX)
    signatures = {t.target: t.signature for fa in result.files for t in fa.result.traced}
    assert signatures == {"Topology.gathered": "self=Topology(maps=f32[], map_idx=i32[]), scale=f32[]"}

