"""JX201 loop-invariant-in-loop on real jaxprs, through the whole pipeline (analyzed in the test
process: helpers.check_in_process)."""
from __future__ import annotations

import pytest
from helpers import check_in_process

from jaxlint.config.selection import select_rules
from jaxlint.engine.results import CheckResult
from jaxlint.model import Finding

CASES = '''\
import jax
import jax.numpy as jnp
from jax import lax


@jax.jit
def t_grad_scan(W, xs):
    def loss(W):
        def body(c, x):
            A = jnp.tanh(W @ W)
            return jnp.tanh(A @ c + x), None
        return lax.scan(body, jnp.zeros(W.shape[0]), xs)[0].sum()
    return jax.grad(loss)(W)


@jax.jit
def t_value_and_grad(W, xs):
    def loss(W):
        def body(c, x):
            return c + (W @ W.T) @ x, None
        return lax.scan(body, jnp.zeros(W.shape[0]), xs)[0].sum()
    return jax.value_and_grad(loss)(W)


@jax.jit
def t_fori_grad(W, c0):
    def loss(W):
        return lax.fori_loop(0, 6, lambda i, c: jnp.sin((W @ W) @ c), c0).sum()
    return jax.grad(loss)(W)


@jax.jit
def t_cond_scan(W, xs):
    def body(c, x):
        c = lax.cond(x[0] > 0, lambda c: c + (W @ W)[0], lambda c: c, c)
        return c + x, None
    return lax.scan(body, jnp.zeros(W.shape[0]), xs)[0]


@jax.jit
def t_cond_while(W, c0, n):
    def body(i, c):
        return lax.cond(c[0] > 0, lambda c: c - (W @ W)[0], lambda c: c * 0.5, c)
    return lax.fori_loop(0, n, body, c0)


@jax.jit
def q_forward(W, xs):
    def body(c, x):
        A = jnp.tanh(W @ W)
        return jnp.tanh(A @ c + x), None
    return lax.scan(body, jnp.zeros(W.shape[0]), xs)[0]


@jax.jit
def q_carry(W, xs):
    def loss(W):
        def body(c, x):
            return jnp.tanh(W @ c + x), None
        return lax.scan(body, jnp.zeros((W.shape[0], W.shape[0])), xs)[0].sum()
    return jax.grad(loss)(W)


@jax.jit
def q_xs(W, ms):
    def loss(W):
        def body(c, m):
            return c + jnp.tanh(W @ m), None
        return lax.scan(body, jnp.zeros_like(W), ms)[0].sum()
    return jax.grad(loss)(W)


@jax.jit
def q_hoisted(W, xs):
    def loss(W):
        A = jnp.tanh(W @ W)
        def body(c, x):
            return jnp.tanh(A @ c + x), None
        return lax.scan(body, jnp.zeros(W.shape[0]), xs)[0].sum()
    return jax.grad(loss)(W)


@jax.jit
def q_small(w, xs):
    def loss(w):
        def body(c, x):
            return jnp.tanh(jnp.tanh(w @ w) @ c + x), None
        return lax.scan(body, jnp.zeros(w.shape[0]), xs)[0].sum()
    return jax.grad(loss)(w)


@jax.jit
def q_not_differentiated(W, xs):
    def loss(xs):
        def body(c, x):
            return jnp.tanh(jnp.tanh(W @ W) @ c + x), None
        return lax.scan(body, jnp.zeros(W.shape[0]), xs)[0].sum()
    return jax.grad(loss)(xs)


@jax.jit
def q_recurrence(W, xs):
    def loss(W):
        def body(c, x):
            return W @ c + x, None
        return lax.scan(body, jnp.zeros((W.shape[0], W.shape[0])), xs)[0].sum()
    return jax.grad(loss)(W)


@jax.jit
def q_invariant_predicate(W, xs, flag):
    def body(c, x):
        c = lax.cond(flag, lambda c: c + (W @ W)[0], lambda c: c, c)
        return c + x, None
    return lax.scan(body, jnp.zeros(W.shape[0]), xs)[0]


@jax.jit
def q_jvp(W, xs):
    def f(W):
        def body(c, x):
            return jnp.tanh(jnp.tanh(W @ W) @ c + x), None
        return lax.scan(body, jnp.zeros(W.shape[0]), xs)[0]
    return jax.jvp(f, (W,), (W,))


W = jnp.ones((64, 64)) / 64
xs = jnp.ones((5, 64))
c0 = jnp.ones(64)
t_grad_scan.lower(W, xs)
t_value_and_grad.lower(W, xs)
t_fori_grad.lower(W, c0)
t_cond_scan.lower(W, xs)
t_cond_while.lower(W, c0, 3)
q_forward.lower(W, xs)
q_carry.lower(W, jnp.ones((5, 64, 64)))
q_xs.lower(W, jnp.ones((5, 64, 64)))
q_hoisted.lower(W, xs)
q_small.lower(jnp.ones((8, 8)), jnp.ones((5, 8)))
q_not_differentiated.lower(W, xs)
q_recurrence.lower(W, jnp.ones((5, 64, 64)))
q_invariant_predicate.lower(W, xs, True)
q_jvp.lower(W, xs)
'''


@pytest.fixture(scope="module")
def found(tmp_path_factory: pytest.TempPathFactory) -> dict[str, Finding]:
    path = tmp_path_factory.mktemp("jx201") / "jx201_cases.py"
    path.write_text(CASES, encoding="utf-8")
    result: CheckResult = check_in_process([str(path)], select_rules(["JX201"], None), fix=False)
    assert result.skipped == [] and result.traced == 14
    by_target: dict[str, Finding] = {}
    for finding in result.findings:
        assert finding.target not in by_target, f"two findings for {finding.target}"
        by_target[finding.target] = finding
    return by_target


def line_of(text: str) -> int:
    return next(i for i, line in enumerate(CASES.splitlines(), 1) if text in line)


def test_only_the_triggers_are_reported(found: dict[str, Finding]) -> None:
    assert sorted(found) == ["t_cond_scan", "t_cond_while", "t_fori_grad", "t_grad_scan", "t_value_and_grad"]


def test_differentiated_scan_points_at_the_invariant_expression(found: dict[str, Finding]) -> None:
    finding = found["t_grad_scan"]
    line = line_of("A = jnp.tanh(W @ W)")
    assert (finding.span.start_line, finding.span.start_col) == (line, CASES.splitlines()[line - 1].index("W @ W"))
    assert "differentiated scan" in finding.message and "5 iterations" in finding.message
    assert "2 x dot_general -> f32[64,64]" in finding.message and "before the scan" in finding.message
    # Two 64x64x64 matmuls (the backward of W @ W) per iteration, four iterations too many.
    assert finding.cost is not None and finding.cost.basis == "shapes"
    assert finding.cost.flops == pytest.approx(4 * 2 * 2 * 64**3, rel=0.02)
    assert finding.fix is None


def test_value_and_grad_and_fori_loop(found: dict[str, Finding]) -> None:
    assert found["t_value_and_grad"].span.start_line == line_of("(W @ W.T) @ x")
    assert found["t_fori_grad"].span.start_line == line_of("jnp.sin((W @ W) @ c)")
    assert "6 iterations" in found["t_fori_grad"].message


def test_invariant_work_in_a_cond(found: dict[str, Finding]) -> None:
    scan = found["t_cond_scan"]
    assert scan.span.start_line == line_of("lambda c: c + (W @ W)[0]")
    assert "inside a cond in a scan body" in scan.message
    assert scan.cost.flops == pytest.approx(4 * 2 * 64**3, rel=0.02)
    loop = found["t_cond_while"]
    assert "while_loop" in loop.message and "trip count unknown" in loop.message
    assert loop.cost.flops is None
