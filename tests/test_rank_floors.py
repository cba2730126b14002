"""Per-parameter rank floors and the error-driven retry of a failed rung (issue 48,
argsources/rank_floors.py): a parameter the body maps with vmap, reduces along an axis, counts an
axis of from the end, or takes a product of gets at least that rank on every rung, while the
others keep the rung's; where a rung fails with an error that says one parameter had too few
dimensions (or a float index), and the failing expression names exactly that parameter (itself
or through locals), the rung is traced once more with it raised, and the later rungs keep what
that retry learned (argsources/rank_retry.py). Each is shown in the signature and linted (a finding at its
line). An error naming two parameters keeps the rung's failure; a floor never lowers a rank an
annotation gives. One project, one check, in the test process.
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
from jaxlint.worker.argsources import rank_floors, rank_retry

# Each function also needs ``t`` a scalar (lax.cond's predicate): before the floors, no rung gave
# its array the rank it needs with ``t`` at rank 0, and the function was not linted.
MODULE = textwrap.dedent('''\
    import jax
    import jax.numpy as jnp
    from jaxtyping import Array, Float


    def _rows(a):
        return jax.vmap(jnp.sum)(a)


    def mapped(x, t):
        z = jax.vmap(lambda r: r * 2.0)(x)
        z = jax.lax.cond(t > 0, lambda: z, lambda: -z)
        return jnp.where(z > 0, jnp.log(z), 0.0)  # expect JX501


    def mapped_axes(x, w, t):
        z = jax.vmap(lambda r, v: r * v, in_axes=(1, None))(x, w)
        z = jax.lax.cond(t > 0, lambda: z, lambda: -z)
        return jnp.where(z > 0, jnp.log(z), 0.0)  # expect JX501


    def mapped_local(x, w, t):
        g = jax.vmap(jnp.multiply, in_axes=(0, None))
        z = jax.lax.cond(t > 0, lambda: g(x, w), lambda: -g(x, w))
        return jnp.where(z > 0, jnp.log(z), 0.0)  # expect JX501


    def last_axis(x, t):
        z = jnp.ones(x.shape[-2]) * t
        z = jax.lax.cond(t > 0, lambda: z, lambda: -z)
        return jnp.where(z > 0, jnp.log(z), 0.0)  # expect JX501


    def reduced(x, y, t):
        z = jnp.sum(x, axis=1) + y.mean(-1)
        z = jax.lax.cond(t > 0, lambda: z, lambda: -z)
        return jnp.where(z > 0, jnp.log(z), 0.0)  # expect JX501


    def joined(x, y, t):
        z = jnp.concatenate([x, y], axis=1)
        z = jax.lax.cond(t > 0, lambda: z, lambda: -z)
        return jnp.where(z > 0, jnp.log(z), 0.0)  # expect JX501


    def product(x, y, t):
        z = jnp.sum(jnp.matmul(x, x)) + jnp.trace(y)
        z = jax.lax.cond(t > 0, lambda: z, lambda: -z)
        return jnp.where(z > 0, jnp.log(z), 0.0)  # expect JX501


    def helped(x, t):  # the body says nothing of x's rank; _rows's vmap error names it
        z = _rows(x)
        z = jax.lax.cond(t > 0, lambda: z, lambda: -z)
        return jnp.where(z > 0, jnp.log(z), 0.0)  # expect JX501


    def aliased_index(x, i):  # i indexes through a local: the index error names it
        j = i
        y = x[j] * j
        return jnp.where(y > 0, jnp.log(y), 0.0)  # expect JX501


    def two_indices(x, i, k):  # one float index each rung: rank 1 keeps rank 0's i32 for i, then fixes k
        j = i
        m = k + 0
        y = x[j] + x[m] * m
        return jnp.where(y > 0, jnp.log(y), 0.0)  # expect JX501


    def deep(x):  # rung 1's retry (rank 2) fails as rung 2 would: rung 2 retries from its error, rank 3
        z = jax.vmap(jax.vmap(jax.vmap(lambda r: r * 2.0)))(x)
        return jnp.where(z > 0, jnp.log(z), 0.0)  # expect JX501


    def never(x):  # one parameter: the retry's x=f32[n] is rung 1's, traced once
        return _rows(x) + jnp.zeros(3) + jnp.zeros(4)


    def helped_two(x, w, t):  # the failing call names x and w: no retry
        z = _rows(x * w)
        z = jax.lax.cond(t > 0, lambda: z, lambda: -z)
        return jnp.where(z > 0, jnp.log(z), 0.0)


    def annotated(x: Float[Array, "a b c"]):  # the annotation's rank 3 stands, not the floor's 1
        return jnp.sum(x, axis=0)
    ''')


@pytest.fixture(scope="module")
def checked(tmp_path_factory: pytest.TempPathFactory):
    pytest.importorskip("jaxtyping")
    root: Path = tmp_path_factory.mktemp("ranks")
    path = write(root, "ranks", MODULE)
    (root / "pyproject.toml").write_text("[tool.jaxlint]\n")
    return check_in_process([str(path)], all_rules(), config=load_config([str(path)]))


def signatures(result) -> dict[str, str]:
    return {t.target: t.signature for fa in result.files for t in fa.result.traced}


@pytest.mark.parametrize(("target", "signature"), [
    ("mapped", "x=f32[n], t=f32[]"),
    ("mapped_axes", "x=f32[n,n], w=f32[], t=f32[]"),
    ("mapped_local", "x=f32[n], w=f32[], t=f32[]"),
    ("last_axis", "x=f32[n,n], t=f32[]"),
    ("reduced", "x=f32[n,n], y=f32[n], t=f32[]"),
    ("joined", "x=f32[n,n], y=f32[n,n], t=f32[]"),
    ("product", "x=f32[n], y=f32[n,n], t=f32[]"),
    ("helped", "x=f32[n], t=f32[]"),
    ("aliased_index", "x=f32[n], i=i32[]"),
    ("two_indices", "x=f32[n], i=i32[n], k=i32[n]"),
    ("deep", "x=f32[n,n,n]"),
    ("annotated", "x=f32[a,b,c]"),
])
def test_a_parameter_gets_the_rank_its_use_needs_shown_in_the_signature(checked, target: str, signature: str) -> None:
    assert signatures(checked)[target] == signature
    assert {f.function: f.linted for f in coverage(checked).functions}[target]


def test_each_function_is_linted_with_a_finding_at_its_line(checked) -> None:
    expected = {number for number, line in enumerate(MODULE.splitlines(), 1) if "# expect JX501" in line}
    assert {f.span.start_line for f in checked.findings if f.code == "JX501"} == expected


def test_an_error_naming_two_parameters_keeps_the_rungs_failure(checked) -> None:
    [entry] = [u for u in coverage(checked).untraced if u.target == "helped_two"]
    assert "x=f32[], w=f32[], t=f32[]: ValueError: vmap" in entry.reason
    assert "x=f32[n], w=f32[]" not in entry.reason and "w=f32[n], t=f32[]" not in entry.reason


def test_a_signature_a_retry_traced_is_not_traced_again(checked) -> None:
    [entry] = [u for u in coverage(checked).untraced if u.target == "never"]
    assert entry.reason.count("x=f32[n]:") == 1 and "x=f32[n,n]:" in entry.reason


@pytest.mark.parametrize(("source", "origins"), [
    ("def f(x, e):\n    s = e[0]\n    v = (s > 0) & (s < x.shape[0]) & (s < len(x))", {"s": {"e"}, "v": {"e"}}),
    ("def f(x, w):\n    def g(t):\n        return t * w\n    z = g(x)", {"g": {"w"}, "z": {"w", "x"}}),
    ("def f(x):\n    s = x\n    s = jnp.clip(s, 0, 3)\n    t = g(h)", {"s": {"x"}, "t": set()}),
    ("def f(x):\n    for row in x:\n        a, b = row", {"row": {"x"}, "a": {"x"}, "b": {"x"}}),
])
def test_a_local_names_the_parameters_its_values_come_from(source: str, origins: dict[str, set[str]]) -> None:
    definition = ast.parse(source).body[0]
    found = rank_retry._origins(definition)  # type: ignore[arg-type]
    assert {name: found.get(name, set()) for name in origins} == origins


def floors_of(source: str) -> dict[str, int]:
    definition = ast.parse(textwrap.dedent(source)).body[0]
    return rank_floors.floors(definition, {a.arg for a in definition.args.args})  # type: ignore[attr-defined]


@pytest.mark.parametrize(("source", "floors"), [
    ("def f(p, q):\n    return jax.vmap(g)(p, q)", {"p": 1, "q": 1}),
    ("def f(p, q):\n    return jax.vmap(g, in_axes=(None, 1))(p, q)", {"q": 2}),
    ("def f(p, q):\n    return vmap(g, (0, None))(p, q)", {"p": 1}),
    ("def f(p):\n    return jax.vmap(g, in_axes=2)(p)", {"p": 3}),
    ("def f(p):\n    h = jax.pmap(g)\n    return h(p)", {"p": 1}),
    ("def f(p):\n    return p.shape[-3]", {"p": 3}),
    ("def f(p):\n    return jnp.sum(p, axis=(0, -3))", {"p": 3}),
    ("def f(p):\n    return p.max(2)", {"p": 3}),
    ("def f(p):\n    return jax.nn.softmax(p, axis=-1)", {"p": 1}),
    ("def f(p, q):\n    return jnp.matmul(p, q)", {"p": 1, "q": 1}),
    ("def f(p):\n    return jnp.linalg.cholesky(p)", {"p": 2}),
    ("def f(p):\n    return len(p)", {"p": 1}),
    ("def f(self):\n    return jax.vmap(g)(self.x)", {"self.x": 1}),
])
def test_each_use_gives_its_floor(source: str, floors: dict[str, int]) -> None:
    assert floors_of(source) == floors


@pytest.mark.parametrize("source", [
    "def f(p):\n    return jax.vmap(g, in_axes=axes)(p)",  # an in_axes jaxlint cannot read
    "def f(p):\n    return jax.vmap(g, in_axes=None)(p)",
    "def f(p):\n    return jnp.sum(p, axis=k)",
    "def f(p):\n    return jnp.sum(p, axis=7)",  # past the ladder's largest rank: not taken
    "def f(p):\n    return jnp.sum(p)",
    "def f(p):\n    return obj.helper.sum(p, 1)",  # an object's method: p is not its array
    "def f(self, x):\n    return jnp.tanh(self.inner(x))",  # a method named like jnp.inner
    "def f(self, x):\n    return self.trace(x)",
    "def f(p, q):\n    return jnp.dot(p, q) + p.dot(q) + jnp.inner(p, q)",  # these take scalars: the rank-0 rung traces
    "def f(p):\n    h = jax.vmap(g)\n    h = other\n    return h(p)",  # a local bound twice
])
def test_a_use_that_says_no_rank_gives_no_floor(source: str) -> None:
    assert floors_of(source) == {}
