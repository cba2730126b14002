"""Inferred arguments from how the body uses a parameter (issue 48, argsources/usage.py), where
its name and annotation decide nothing: an index is an i32 array, a size a static int, a called
parameter a function stand-in, an unpacked or iterated one a tuple of arrays, a truth-tested one
a static flag; each is shown in the signature and linted (a finding at its line). A parameter
used two ways, annotated, or rebound in the body keeps the ladder's value as before. One project,
one check, in the test process.
"""
from __future__ import annotations

import ast
import textwrap
from pathlib import Path

import pytest
from helpers import check_in_process, write

from jaxlint.config import load_config
from jaxlint.report.coverage import coverage
from jaxlint.rules import all_rules
from jaxlint.worker.argsources import usage

MODULE = textwrap.dedent('''\
    from typing import Any, NamedTuple

    import jax
    import jax.numpy as jnp


    def pick(x, i):
        y = x[i]
        return jnp.where(y > 0, jnp.log(y), 0.0)  # expect JX501


    def pick_any(x, i: Any):
        y = jnp.take(x, i)
        return jnp.where(y > 0, jnp.log(y), 0.0)  # expect JX501


    def pair_product(x, pairs):  # the items of pairs index
        y = x[pairs[:, 0]] * x[pairs[:, 1]]
        return jnp.where(y > 0, jnp.log(y), 0.0)  # expect JX501


    def gather_edges(x, edge_index):  # a local takes each item of edge_index: its items index
        sender = edge_index[0]
        receiver = edge_index[1]
        y = x[sender] - x[receiver]
        return jnp.where(y > 0, jnp.log(y), 0.0)  # expect JX501


    def pair_distances(R, pairs):  # unpacked from a tuple of its columns
        i, j = pairs[:, 0], pairs[:, 1]
        y = R[i] - R[j]
        return jnp.where(y > 0, jnp.log(y), 0.0)  # expect JX501


    def tiled(x, m):
        y = jnp.ones((m + 1,)) * jnp.sum(x)
        return jnp.where(y > 0, jnp.log(y), 0.0)  # expect JX501


    def through(g, x):
        y = g(x)
        return jnp.where(y > 0, jnp.log(y), 0.0)  # expect JX501


    def split(pair):
        a, b = pair
        return jnp.where(a > 0, jnp.log(a), b)  # expect JX501


    def total(parts):
        s = 0.0
        for part in parts:
            s = s + part
        return jnp.where(s > 0, jnp.log(s), 0.0)  # expect JX501


    def maybe_clipped(x, clip):
        if clip:
            x = jnp.clip(x, 0.0, None)
        return jnp.where(x > 0, jnp.log(x), 0.0)  # expect JX501


    class Table(NamedTuple):
        values: jax.Array

        def lookup(self, i):
            y = self.values[i]
            return jnp.where(y > 0, jnp.log(y), 0.0)  # expect JX501


    def mixed(x, i):  # an index and an array: f32 as before, which cannot index
        return jnp.log(x[i]) + i


    def annotated(x, i: float):  # the annotation decides: a float as before
        return jnp.log(x[i])


    def lookup(values: jax.Array, pairs: jax.Array):  # an array annotation leaves the dtype to the index
        y = values[pairs[:, 0]]
        return jnp.where(y > 0, jnp.log(y), 0.0)  # expect JX501


    def flagged(x, on: jax.Array):  # an array annotation: only an index may change it
        return jnp.log(x) if on else x


    def rebound(x, i):  # the body's own i is another value: f32 as before
        i = jnp.asarray(i)
        return jnp.log(x[i])


    def clipped_sender(x, edge_index):  # the local is bound again: f32 as before
        sender = edge_index[0]
        sender = jnp.clip(sender, 0, 3)
        return jnp.log(x[sender])


    def scaled_rows(x, pairs):  # the local indexes and is an array: f32 as before
        i = pairs[:, 0]
        return jnp.log(x[i]) * i


    def noisy(x, seed):  # passed as jax.random's key: a key
        y = x + jax.random.normal(seed, jnp.shape(x))
        return jnp.where(y > 0, jnp.log(y), 0.0)  # expect JX501


    def seeded(x, seed: jax.Array):  # a key made from it: an integer seed, not a key
        key = jax.random.PRNGKey(seed)
        return x + jax.random.normal(key, jnp.shape(x))


    def unpacked_twice(pair):  # two lengths: no tuple, rank 1's f32[8] unpacks to neither
        a, b = pair
        c, d, e = pair
        return jnp.log(a + b + c + d + e)


    def weights(n, lamb):  # a size and arithmetic: a static int serves both, an array no size
        y = jnp.ones(2 * n) / (n + lamb)
        return jnp.where(y > 0, jnp.log(y), 0.0)  # expect JX501


    def fifth(n, lamb):  # index 5 is past jaxlint's size (2 * 2), not the user's: no JX503
        return (jnp.ones(2 * n) * lamb)[5]
    ''')


@pytest.fixture(scope="module")
def checked(tmp_path_factory: pytest.TempPathFactory):
    root: Path = tmp_path_factory.mktemp("usage")
    path = write(root, "usage", MODULE)
    (root / "pyproject.toml").write_text("[tool.jaxlint]\n")
    return check_in_process([str(path)], all_rules(), config=load_config([str(path)]))


def signatures(result) -> dict[str, str]:
    return {t.target: t.signature for fa in result.files for t in fa.result.traced}


def finding_lines(result) -> dict[int, str]:
    return {f.span.start_line: f.code for f in result.findings}


def expected_lines() -> dict[int, str]:
    return {number: "JX501" for number, line in enumerate(MODULE.splitlines(), 1) if "# expect JX501" in line}


@pytest.mark.parametrize(("target", "signature"), [
    ("pick", "x=f32[n], i=i32[]"),
    ("pick_any", "x=f32[], i=i32[]"),
    ("pair_product", "x=f32[n], pairs=i32[n,n]"),
    ("lookup", "values=f32[n], pairs=i32[n,n]"),
    ("gather_edges", "x=f32[n], edge_index=i32[n]"),
    ("pair_distances", "R=f32[n], pairs=i32[n,n]"),
    ("tiled", "x=f32[], m=2"),
    ("through", "g=<stand-in: its first argument>, x=f32[]"),
    ("split", "pair=(f32[], f32[])"),
    ("total", "parts=(f32[], f32[])"),
    ("maybe_clipped", "x=f32[], clip=False"),
    ("Table.lookup", "self=Table(values=f32[n]), i=i32[]"),
    ("noisy", "x=f32[], seed=key<fry>[]"),
    ("seeded", "x=f32[], seed=i32[]"),
    ("weights", "n=2, lamb=f32[]"),
    ("fifth", "n=2, lamb=f32[]"),
])
def test_a_use_gives_the_value_it_needs_shown_in_the_signature(checked, target: str, signature: str) -> None:
    assert signatures(checked)[target] == signature
    assert {f.function: f.linted for f in coverage(checked).functions}[target]


def test_each_use_is_linted_with_a_finding_at_its_line(checked) -> None:
    assert finding_lines(checked) == expected_lines()


@pytest.mark.parametrize("target", ["annotated", "unpacked_twice", "flagged"])
def test_two_uses_an_annotation_or_a_rebinding_keep_the_value_as_before(checked, target: str) -> None:
    [entry] = [u for u in coverage(checked).untraced if u.target == target]
    assert "i32" not in entry.reason and "(f32" not in entry.reason and "=False" not in entry.reason
    assert "f32[]" in entry.reason


@pytest.mark.parametrize(("target", "parameter"), [("mixed", "i"), ("rebound", "i"), ("scaled_rows", "pairs"),
                                                   ("clipped_sender", "edge_index")])
def test_a_local_bound_again_or_used_two_ways_gives_no_use(target: str, parameter: str) -> None:
    """The body's uses disagree: no value from usage.py (the rung's float index then fails, and
    rank_floors.py's retry, which reads the error, may make it i32: tests/test_rank_floors.py)."""
    [definition] = [node for node in ast.parse(MODULE).body if getattr(node, "name", None) == target]
    parents = {child: node for node in ast.walk(definition) for child in ast.iter_child_nodes(node)}
    assert usage.agreed_use(usage._uses(definition, parameter, parents)) is None


def uses_of(source: str, name: str) -> object:
    definition = ast.parse(textwrap.dedent(source)).body[0]
    parents = {child: node for node in ast.walk(definition) for child in ast.iter_child_nodes(node)}
    return usage.agreed_use(usage._uses(definition, name, parents))


@pytest.mark.parametrize(("source", "use"), [
    ("def f(x, p):\n    return x.at[p].set(0.0)", usage.INDEX),
    ("def f(x, p):\n    return x[p, :]", usage.INDEX),
    ("def f(x, p):\n    return x.at[p[:, 0], p[:, 1]].set(x[p[0]])", usage.INDEX),  # its items index
    ("def f(x, p):\n    return jnp.zeros(p[0]) + x[p[1]]", usage.INDEX),  # an item, and an index
    ("def f(x, p):\n    return jax.ops.segment_sum(x, p, 3)", usage.INDEX),
    ("def f(x, p):\n    return [x for _ in range(p)]", usage.SIZE),
    ("def f(x, p):\n    return x.reshape(p, -1)", usage.SIZE),
    ("def f(x, p):\n    return x[:p] + jnp.arange(p)", usage.SIZE),
    ("def f(x, p):\n    return jnp.ones(2 * p) / (p + x)", usage.SIZE),  # a size and arithmetic: an int's
    ("def f(x, p):\n    return [x for _ in range(p)] + x[p]", None),  # a size and an index
    ("def f(x, p):\n    a, b = p\n    return jnp.ones(p)", None),  # a size and a tuple
    ("def f(x, p):\n    return x if not p or p is None else -x", usage.FLAG),
    ("def f(x, p):\n    return x * sum(p) if p else f(*p)", None),  # a flag and an iteration
    ("def f(x, p):\n    a, *b = p\n    return a", 2),  # iterated, no length
    ("def f(x, p):\n    g = lambda p: p * 2\n    return g(x)[p]", usage.INDEX),  # the lambda's p is its own
    ("def f(x, p):\n    return x[p] if p is not None else x[p > 0]", None),  # an index and an array
    ("def f(x, p):\n    return x * len(p)", None),  # neutral only
    ("def f(x, p):\n    s = p[0]\n    return x.at[s].set(0.0)", usage.INDEX),  # a local takes an item: it indexes
    ("def f(x, p):\n    i, j = p[:, 0], p[:, 1]\n    return x[i] * x[j]", usage.INDEX),
    ("def f(x, p):\n    s = p[0]\n    return jax.ops.segment_sum(x, s - 1, 3)", usage.INDEX),
    ("def f(x, p):\n    s = p[0]\n    s = jnp.clip(s, 0, 3)\n    return x[s]", None),  # the local bound again
    ("def f(x, p, s):\n    s = p[0]\n    return x[s]", None),  # the local is a parameter
    ("def f(x, p):\n    s = p[:, 0]\n    return x[s] * s", None),  # the local is an index and an array
    ("def f(x, p):\n    s = p[0]\n    return x[s] + p * 2", None),  # p is an array too
    ("def f(x, p):\n    s = p[0]\n    return s * 2.0", None),  # an item, neutral only
    ("def f(x, p):\n    s = p + 1\n    return x[s]", None),  # arithmetic, no item: p is an array
    ("def f(x, p):\n    i, j = p[:, 0]\n    return x[i]", None),  # one item unpacked: not a name per item
    ("def f(x, p):\n    return x + jax.random.normal(p, x.shape)", "key"),
    ("def f(x, p):\n    a, b = random.split(p)\n    return jr.uniform(key=b) + x", "key"),
    ("def f(x, p):\n    return x + np.random.normal(p)", None),  # NumPy's: its loc, an array
    ("def f(x, p):\n    return x * p + jax.random.normal(p)", None),  # a key and an array
])
def test_the_table_of_uses(source: str, use: object) -> None:
    assert uses_of(source, "p") == use
