"""Methods and nested functions end to end: the founding pattern inside each is found and located.

test_arguments.py checks the signatures of methods called at import; here each one holds the
founding pattern (a vmap output that depends on no mapped input, used one row at a time) and the
JX101 finding must point at its vmap call. One project, one check, in the test process
(helpers.check_in_process).
"""
from __future__ import annotations

from dataclasses import asdict
from pathlib import Path

import pytest
from helpers import check_in_process

from jaxlint.rules import all_rules

MODULE = """\
import jax
import jax.numpy as jnp


def blackbox(x, y):
    x = x + 1
    return x, x * y


class Plain:
    def __init__(self, k):
        self.k = k  # a plain Python object: self is a static argument

    def apply(self, x, y):
        x, y = jax.vmap(blackbox, in_axes=(None, 0))(x, y)  # PLAIN
        return x[0] * self.k, y

    @staticmethod
    def static(x, y):
        x, y = jax.vmap(blackbox, in_axes=(None, 0))(x, y)  # STATIC
        return x[0], y


@jax.tree_util.register_pytree_node_class
class Params:
    def __init__(self, w, b):
        self.w = w
        self.b = b

    def tree_flatten(self):
        return (self.w, self.b), None

    @classmethod
    def tree_unflatten(cls, aux, children):
        return cls(*children)

    @jax.jit
    def apply(self, y):
        x, y = jax.vmap(blackbox, in_axes=(None, 0))(self.w, y)  # PYTREE
        return x[0] + self.b, y


@jax.jit
def outer(x, y):
    def inner(x, y):
        x, y = jax.vmap(blackbox, in_axes=(None, 0))(x, y)  # NESTED
        return x[0], y

    return inner(x * 2, y)


x = jnp.float32(1.0)
y = jnp.arange(10.0)
Plain(2.0).apply(x, y)
Plain.static(x, y)
Params(jnp.ones(3), jnp.float32(0.5)).apply(jnp.ones((10, 3)))
outer(x, y)
"""


def line_of(marker: str) -> int:
    return next(i for i, line in enumerate(MODULE.splitlines(), 1) if line.endswith(f"# {marker}"))


@pytest.fixture(scope="module")
def checked(tmp_path_factory: pytest.TempPathFactory):
    root: Path = tmp_path_factory.mktemp("methods")
    (root / "methods.py").write_text(MODULE)
    result = check_in_process([str(root)], all_rules())
    traced = {t["target"]: t for fa in result.files if fa.result for t in map(asdict, fa.result.traced)}
    return result, traced


def test_every_target_is_traced_without_failures(checked) -> None:
    result, traced = checked
    assert result.skipped == []
    assert [f for f in result.findings if f.code.startswith("JX9")] == []
    assert set(traced) == {"Plain.apply", "Plain.static", "Params.apply", "outer"}


@pytest.mark.parametrize("target, marker", [
    ("Plain.apply", "PLAIN"),  # self recorded at import: a plain object, static
    ("Plain.static", "STATIC"),
    ("Params.apply", "PYTREE"),  # self is a pytree: its array leaves are abstract inputs
    ("outer", "NESTED"),  # inner is traced through outer and the finding points inside it
])
def test_founding_pattern_found_where_it_is(checked, target: str, marker: str) -> None:
    result, _ = checked
    found = [f for f in result.findings if f.target == target]
    assert [f.code for f in found] == ["JX101"], [f.message for f in found]
    span = found[0].span
    assert (span.start_line, span.start_col) == (line_of(marker), 15)
    assert found[0].fix is not None and found[0].fix.applicability == "safe"


def test_pytree_self_shows_its_abstract_leaves(checked) -> None:
    _, traced = checked
    assert traced["Params.apply"]["signature"] == "Params(f32[3], f32[]), f32[10,3]"
    assert traced["Plain.apply"]["signature"] == "<Plain object>, f32[], f32[10]"
