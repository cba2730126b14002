"""A trace that fails with the symbolic dimensions jaxlint made up (from jaxtyping annotations, or
inferred) is tried again with concrete sizes before anything is reported (worker/analyze.py,
worker/trace.py ``concrete_arguments``).

dynamax's ``parallel_inference.hmm_filter`` runs under ``jax.jit``, but
``lax.associative_scan`` refuses an axis of symbolic size: traced with the annotation's
``num_timesteps`` it was a JX601 of jaxlint's own doing. One project, one check, in the test
process (helpers.check_in_process), as tests/test_annotations.py does.
"""
from __future__ import annotations

from dataclasses import asdict

import pytest
from helpers import check_in_process

from jaxlint.rules import all_rules

ANNOTATED = """\
import jax
import jax.numpy as jnp
from jaxtyping import Array, Float


def _combine(a, b):
    return a + b


def scanned(x: Float[Array, "T K"], w: Float[Array, "K K"]):
    y = jax.vmap(lambda row: row @ w)(x)
    return jax.lax.associative_scan(_combine, y)


def doubled(x: Float[Array, "T"]):
    y = jax.vmap(lambda v: v * 2.0)(jnp.concatenate([x, x]))
    return jax.lax.associative_scan(_combine, y)


def branches(x: Float[Array, "n"]):
    y = jax.vmap(jnp.sin)(x)
    if y.sum() > 0:  # a traced value in Python control flow: fails at any size
        return y
    return -y


def mismatched(a: Float[Array, "n"], b: Float[Array, "m"]):
    return jax.vmap(lambda u, v: u + v)(a, b)
"""

PLAIN = """\
import jax
import jax.numpy as jnp


def prefix_sums(x):
    return jax.lax.associative_scan(jnp.add, x)


# jaxlint: args x=f32[n]
@jax.jit
def hinted(x):
    return jax.lax.associative_scan(jnp.add, x)
"""

# A pytree that keeps a shape made from its fields in its aux data, as numpyro's distributions keep
# ``_batch_shape``: the trace with sizes makes the instance jaxlint built again from sized fields.
WALKS = """\
import jax
import jax.numpy as jnp


@jax.tree_util.register_pytree_node_class
class Walk:
    '''Keeps its batch shape in the pytree's aux data, as numpyro's distributions do.'''

    def __init__(self, loc):
        self.loc = loc
        self.batch_shape = jnp.shape(loc)

    def tree_flatten(self):
        return (self.loc,), self.batch_shape

    @classmethod
    def tree_unflatten(cls, batch_shape, children):
        walk = cls.__new__(cls)
        walk.loc, walk.batch_shape = children[0], batch_shape
        return walk

    def prefix(self, value):
        shifts = jnp.broadcast_to(value, self.batch_shape)
        return jax.lax.associative_scan(jnp.add, self.loc + shifts)

    def mismatched(self, value):
        shifts = jnp.broadcast_to(value, self.batch_shape)
        return jax.lax.associative_scan(jnp.add, self.loc + shifts) + jnp.ones(3)


@jax.tree_util.register_pytree_node_class
class Scaled:
    '''Holds a Walk: made again with sizes, its walk first.'''

    def __init__(self, walk: Walk, scale):
        self.walk, self.scale = walk, scale

    def tree_flatten(self):
        return (self.walk, self.scale), None

    @classmethod
    def tree_unflatten(cls, _, children):
        return cls(*children)

    def prefix(self, value):
        return self.walk.prefix(value) * jnp.abs(self.scale)
"""


def _checked(root, modules):
    for name, text in modules:
        (root / f"{name}.py").write_text(text)
    result = check_in_process([str(root)], all_rules())
    traced = {(fa.source.path.rsplit("/", 1)[1], t["target"]): t
              for fa in result.files if fa.result for t in map(asdict, fa.result.traced)}
    skipped = {(path.rsplit("/", 1)[1], s.target): s.reason for path, s in result.skipped}
    failures = {(f.path.rsplit("/", 1)[1], f.target): f.message for f in result.findings if f.code == "JX601"}
    return traced, skipped, failures


@pytest.fixture(scope="module")
def annotated(tmp_path_factory):
    pytest.importorskip("jaxtyping")  # the worker imports it with the module
    return _checked(tmp_path_factory.mktemp("symbolic"), [("annotated", ANNOTATED)])


@pytest.fixture(scope="module")
def walks(tmp_path_factory):
    return _checked(tmp_path_factory.mktemp("walks"), [("walks", WALKS)])


@pytest.fixture(scope="module")
def plain(tmp_path_factory):
    return _checked(tmp_path_factory.mktemp("inferred"), [("plain", PLAIN)])


def test_an_annotated_function_that_fails_only_with_symbols_is_traced_with_sizes(annotated):
    traced, skipped, failures = annotated
    assert ("annotated.py", "scanned") not in failures
    assert traced[("annotated.py", "scanned")]["signature"] == "x=f32[8,16], w=f32[16,16]", skipped
    assert traced[("annotated.py", "scanned")]["source"] == "annotations"
    assert traced[("annotated.py", "scanned")]["failed_signatures"] == 0


def test_the_same_name_keeps_one_size(annotated):
    traced, _, failures = annotated
    assert ("annotated.py", "doubled") not in failures
    assert traced[("annotated.py", "doubled")]["signature"] == "x=f32[8]"


def test_an_error_about_a_traced_value_is_reported_without_a_retry(annotated):
    """A traced value in Python control flow fails at any size: reported with the symbols."""
    traced, skipped, failures = annotated
    assert ("annotated.py", "branches") not in traced
    assert "TracerBoolConversionError" in failures[("annotated.py", "branches")]
    assert "x=f32[n]" in failures[("annotated.py", "branches")]
    assert "x=f32[8]" not in skipped[("annotated.py", "branches")]


def test_a_failure_with_the_sizes_too_is_reported_with_them(annotated):
    _, skipped, failures = annotated
    assert "a=f32[8], b=f32[16]" in failures[("annotated.py", "mismatched")]
    assert "a=f32[n], b=f32[m]" in skipped[("annotated.py", "mismatched")]  # the failure with symbols


def test_inferred_arguments_that_fail_only_with_the_symbol_are_traced_with_a_size(plain):
    traced, skipped, failures = plain
    assert traced[("plain.py", "prefix_sums")]["signature"] == "x=f32[8]", skipped
    assert traced[("plain.py", "prefix_sums")]["source"] == "inferred"
    assert ("plain.py", "prefix_sums") not in failures


def test_a_hint_s_symbols_are_the_user_s_and_not_retried(plain):
    _, _, failures = plain
    assert "non-constant size" in failures[("plain.py", "hinted")]


def test_a_built_instance_is_made_again_with_the_sizes(walks):
    """Its aux data's batch shape is the sizes' (8,), not the symbol's (n,): the trace with sizes runs."""
    traced, skipped, _ = walks
    signature = "self=Walk(loc=f32[8], batch_shape=(8,)), value=f32[8]"
    assert traced[("walks.py", "Walk.prefix")]["signature"] == signature, skipped
    assert traced[("walks.py", "Walk.prefix")]["source"] == "inferred"


def test_a_built_instance_inside_one_is_made_again_too(walks):
    traced, skipped, _ = walks
    signature = "self=Scaled(walk=Walk(f32[8]), scale=f32[8]), value=f32[8]"
    assert traced[("walks.py", "Scaled.prefix")]["signature"] == signature, skipped


def test_a_built_instance_s_failure_with_the_sizes_too_stays_not_linted(walks):
    traced, skipped, _ = walks
    assert ("walks.py", "Walk.mismatched") not in traced
    reason = skipped[("walks.py", "Walk.mismatched")]
    assert "batch_shape=(8,)), value=f32[8]: TypeError: add got incompatible shapes" in reason
