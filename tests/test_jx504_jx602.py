"""JX504 discarded-functional-update and JX602 python-side-effect-in-jit on real jaxprs, end to end.

One module holds the triggers and the near misses of both rules; it is checked once, in the test
process (helpers.check_in_process: the worker's analysis without a worker process). A line
marked ``# expect JXnnn`` must give that finding, and no other line may give one. Functions are
lowered, not run: nothing is compiled at import.
"""
from __future__ import annotations

import pytest
from helpers import check_in_process, expected_markers

from jaxlint.config.selection import select_rules
from jaxlint.engine.results import CheckResult
from jaxlint.model import Finding

MODULE = '''\
from functools import partial

import jax
import jax.numpy as jnp


class FakeAt:
    """A non-JAX object with an ``.at[...].set`` API that mutates in place."""

    def __init__(self):
        self.data = {}
        self.at = self

    def __getitem__(self, key):
        self.key = key
        return self

    def set(self, value):
        self.data[self.key] = value


@jax.jit
def discarded(x, i):
    x.at[i].set(0.0)  # expect JX504
    x.at[0].add(1.0)  # expect JX504
    x.at[1:3].multiply(2.0)  # expect JX504
    x.at[i].divide(2.0)  # expect JX504
    x.at[i].max(0.5)  # expect JX504
    return x * 2


def eager_discarded(x):
    x.at[0].set(5.0)  # expect JX504
    return jax.vmap(jnp.sin)(x)


@jax.jit
def discarded_in_scan(xs):
    def body(c, x):
        c.at[0].add(x.sum())  # expect JX504
        return c, x
    return jax.lax.scan(body, jnp.zeros(3), xs)


@jax.jit
def discarded_under_vmap(xs):
    def row(x):
        x.at[0].set(1.0)  # expect JX504
        return x + 1
    return jax.vmap(row)(xs)


@jax.jit
def assigned(x, i):
    x = x.at[i].set(0.0)
    y = x.at[0].add(1.0)
    return x.at[1].get() + y


@jax.jit
def returned(x):
    return x.at[0].set(3.0)


@jax.jit
def not_jax_at(x):
    fake = FakeAt()
    fake.at[0].set(x)
    return x + 1


@jax.jit
def chained(x):
    x = x.at[0].set(1.0).at[1].set(2.0)
    return x


LOG = []
CACHE = {}
state = None


class Model:
    def __init__(self):
        self.last = None

    @partial(jax.jit, static_argnums=0)
    def step(self, x):
        y = x * 2
        self.last = y  # expect JX602
        return y

    @partial(jax.jit, static_argnums=0)
    def quiet_step(self, x):
        self.calls = 1
        return x * 2


@jax.jit
def prints(x, y):
    print(x)  # expect JX602
    z = jnp.sin(y) + 1
    print("z is", z)  # expect JX602
    print(f"mean {x.mean()}")  # expect JX602
    for row in x:
        print(row)  # expect JX602
    return z


@jax.jit
def stores(x):
    global state
    y = jnp.cos(x)
    LOG.append(y)  # expect JX602
    state = y  # expect JX602
    CACHE["x"] = x  # expect JX602
    return y


@partial(jax.jit, static_argnums=1)
def quiet_prints(x, n):
    print(x.shape, x.dtype, len(x), jnp.shape(x))
    print(f"shape {x.shape[0]} n={n}")
    print(n)
    print("tracing")
    jax.debug.print("x = {}", x)
    for i, v in enumerate(x):
        print(i)
    x = 3
    print(x)
    return n


@jax.jit
def local_lists(xs):
    out = []
    for x in xs:
        out.append(x * 2)
    seen = {}
    seen["a"] = xs
    return jnp.stack(out), seen["a"]


@jax.jit
def quiet_static_global(x):
    LOG.append(x.shape)
    CACHE["n"] = x.ndim
    return x


W = jnp.ones(3)


class Box:
    pass


@jax.tree_util.register_pytree_node_class
class Params:
    def __init__(self, w):
        self.w = w

    def tree_flatten(self):
        return (self.w,), None

    @classmethod
    def tree_unflatten(cls, aux, children):
        return cls(*children)

    @jax.jit
    def apply(self, x):
        self.w = self.w * x  # a traced pytree self: rebuilt for the trace, nothing leaks
        return self.w


@jax.jit
def quiet_locals(x):
    box = Box()
    box.v = x
    print(W)
    def print_shape(v):
        print(v)
    print_shape(x.shape)
    return box.v


@jax.jit
def discarded_under_grad(x):
    def loss(x):
        x.at[0].mul(2.0)  # expect JX504
        return (x ** 2).sum()
    return jax.grad(loss)(x)


def not_jitted(x):
    print(x)
    LOG.append(x)
    return jax.vmap(jnp.sin)(x)


def plain(x):
    print(x)  # expect JX602
    return x


jitted_plain = jax.jit(plain)


def bound_target(x):
    LOG.append(x + 1)  # expect JX602
    return x


bound = jax.jit(bound_target)


x = jnp.ones(5)
xs = jnp.ones((4, 3))
discarded.lower(x, 1)
eager_discarded(x)
discarded_in_scan.lower(xs)
discarded_under_vmap.lower(xs)
assigned.lower(x, 1)
returned.lower(x)
not_jax_at.lower(x)
chained.lower(x)
Model.step.lower(Model(), x)
Model.quiet_step.lower(Model(), x)
prints.lower(x, x)
stores.lower(x)
quiet_prints.lower(x, 2)
local_lists.lower(xs)
quiet_static_global.lower(x)
not_jitted(x)
Params.apply.lower(Params(x), x)
quiet_locals.lower(x)
discarded_under_grad.lower(x)
jitted_plain.lower(x)
bound.lower(x)
'''


@pytest.fixture(scope="module")
def result(tmp_path_factory: pytest.TempPathFactory) -> CheckResult:
    path = tmp_path_factory.mktemp("jx504_jx602") / "effects.py"
    path.write_text(MODULE, encoding="utf-8")
    return check_in_process([str(path)], select_rules(["JX504", "JX602"], None), fix=False)


def at(result: CheckResult, code: str, marker: str) -> Finding:
    line = next(n for n, text in enumerate(MODULE.splitlines(), 1) if marker in text)
    [finding] = [f for f in result.findings if f.code == code and f.span.start_line == line]
    return finding


def test_all_traced(result: CheckResult) -> None:
    assert result.skipped == []


def test_exactly_the_marked_lines(result: CheckResult) -> None:
    assert sorted({(f.code, f.span.start_line) for f in result.findings}) == sorted(expected_markers(MODULE))


def test_jx504_message_span_and_fix(result: CheckResult) -> None:
    finding = at(result, "JX504", "x.at[i].set(0.0)  # expect")
    assert "`x.at[i].set(0.0)` is discarded" in finding.message and "(float32[5])" in finding.message
    assert finding.severity == "error"
    assert (finding.span.start_col, finding.span.end_col) == (4, 4 + len("x.at[i].set(0.0)"))
    assert finding.fix is not None and finding.fix.applicability == "display-only"
    assert [e.content for e in finding.fix.edits] == ["x = x.at[i].set(0.0)"]
    assert "`c = c.at[0].add(x.sum())`" in at(result, "JX504", "c.at[0].add(x.sum())").message
    assert ".at[...].divide" in at(result, "JX504", "x.at[i].divide").message


def test_jx602_messages(result: CheckResult) -> None:
    printed = at(result, "JX602", "print(x)  # expect")
    assert printed.severity == "warning" and "print(x) prints a traced value" in printed.message
    assert "jax.debug.print" in printed.message and "`prints`" in printed.message
    assert (printed.span.start_col, printed.span.end_col) == (4, len("    print(x)"))
    assert "print(z)" in at(result, "JX602", 'print("z is", z)').message
    assert "`LOG.append(...)`" in at(result, "JX602", "LOG.append(y)").message
    assert "the global `state`" in at(result, "JX602", "state = y").message
    assert "`CACHE['x']`" in at(result, "JX602", 'CACHE["x"] = x').message
    assert "`self.last`" in at(result, "JX602", "self.last = y").message
    assert "`bound`" in at(result, "JX602", "LOG.append(x + 1)").message
