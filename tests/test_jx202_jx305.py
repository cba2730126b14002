"""JX202 python-loop-unrolled and JX305 host-callback-in-loop on real jaxprs, end to end.

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
from jaxlint.rules.jx202_python_loop_unrolled import PythonLoopUnrolled, repetitions

MODULE = '''\
import jax
import jax.numpy as jnp
import numpy as np
from jax.experimental import io_callback


@jax.jit
def unrolled(x):
    for _ in range(300):
        x = x * 2.0 + 1.0  # expect JX202
    return x


@jax.jit
def comprehension(key):
    return jnp.stack([jax.random.normal(jax.random.fold_in(key, i), (3,)) for i in range(30)])  # expect JX202


def step(x):
    return jnp.sin(x) * 2.0  # expect JX202


@jax.jit
def helper_in_loop(x):
    for _ in range(150):
        x = step(x)
    return x


@jax.jit
def grad_of_loop(x):
    def loss(x):
        for _ in range(100):
            x = jnp.tanh(x)  # expect JX202
        return x.sum()
    return jax.grad(loss)(x)


@jax.jit
def loop_in_scan_body(xs):
    def body(c, x):
        for _ in range(200):
            c = c + x  # expect JX202
        return c, None
    return jax.lax.scan(body, 0.0, xs)[0]


@jax.jit
def short_loop(x):
    for _ in range(3):
        x = x * 2.0 + 1.0
    return x


@jax.jit
def rolled(x):
    return jax.lax.fori_loop(0, 1000, lambda _, x: x * 2.0 + 1.0, x)


@jax.jit
def one_big_library_call(m):
    return jax.grad(lambda m: jax.scipy.linalg.expm(m).sum())(m)


@jax.jit
def few_big_iterations(m):
    for _ in range(3):
        m = jax.scipy.linalg.expm(m) / 8.0
    return m


@jax.jit
def growing_blocks(key):
    # Each iteration draws a larger block (numpyro's block-autoregressive init): no one shape
    # for a fori_loop body, so quiet.
    w = jnp.zeros((60, 20))
    keys = jax.random.split(key, 30)
    for i in range(20):
        w = w.at[: (i + 1) * 3, i].set(jax.random.normal(keys[i], ((i + 1) * 3,)))
    return w


def record(c):
    return np.asarray(c)


@jax.jit
def print_in_scan(xs):
    def body(c, x):
        jax.debug.print("c={c}", c=c)  # expect JX305
        return c + x, None
    return jax.lax.scan(body, 0.0, xs)[0]


@jax.jit
def callback_in_cond_in_scan(xs):
    def body(c, x):
        c = jax.lax.cond(x > 0, lambda c: jax.pure_callback(record, jax.ShapeDtypeStruct((), jnp.float32), c),  # expect JX305
                         lambda c: c, c)
        return c + x, None
    return jax.lax.scan(body, jnp.float32(0), xs)[0]


@jax.jit
def io_in_while(x):
    def body(x):
        io_callback(record, jax.ShapeDtypeStruct((), jnp.float32), x)  # expect JX305
        return x + 1.0
    return jax.lax.while_loop(lambda x: x < 10.0, body, x)


@jax.jit
def debug_callback_nested(xs):
    def inner(c, x):
        jax.debug.callback(lambda v: None, c)  # expect JX305
        return c + x, None
    return jax.lax.fori_loop(0, 5, lambda i, c: jax.lax.scan(inner, c, xs)[0], 0.0)


@jax.jit
def print_outside_loop(xs):
    jax.debug.print("xs={xs}", xs=xs)
    total = jax.lax.scan(lambda c, x: (c + x, None), 0.0, xs)[0]
    return jax.lax.cond(total > 0, lambda t: jax.pure_callback(record, jax.ShapeDtypeStruct((), jnp.float32), t),
                        lambda t: t, total)


@jax.jit
def print_in_python_loop(xs):
    for i in range(3):
        jax.debug.print("xs={xs}", xs=xs)
        xs = xs + 1.0
    return xs


x = jnp.ones(3)
xs = jnp.ones(10, jnp.float32)
m = jnp.eye(4)
for fn, arg in [(unrolled, x), (comprehension, jax.random.PRNGKey(0)), (helper_in_loop, x), (grad_of_loop, x),
                (loop_in_scan_body, xs), (short_loop, x), (rolled, x), (one_big_library_call, m),
                (few_big_iterations, m), (print_in_scan, xs), (callback_in_cond_in_scan, xs),
                (io_in_while, jnp.float32(0)), (debug_callback_nested, xs), (print_outside_loop, xs),
                (print_in_python_loop, xs), (growing_blocks, jax.random.PRNGKey(0))]:
    fn.lower(arg)
'''


@pytest.fixture(scope="module")
def result(tmp_path_factory: pytest.TempPathFactory) -> CheckResult:
    path = tmp_path_factory.mktemp("jx202_jx305") / "loops.py"
    path.write_text(MODULE, encoding="utf-8")
    return check_in_process([str(path)], select_rules(["JX202", "JX305"], None), fix=False)


def at(result: CheckResult, code: str, marker: str) -> Finding:
    line = next(n for n, text in enumerate(MODULE.splitlines(), 1) if marker in text)
    [finding] = [f for f in result.findings if f.code == code and f.span.start_line == line]
    return finding


def test_all_traced(result: CheckResult) -> None:
    assert result.skipped == [] and result.traced == 16


def test_exactly_the_marked_lines(result: CheckResult) -> None:
    assert {(f.code, f.span.start_line) for f in result.findings} == expected_markers(MODULE)


def test_jx202_message_and_cost(result: CheckResult) -> None:
    finding = at(result, "JX202", "x = x * 2.0 + 1.0  # expect")
    assert "600 equations" in finding.message and "repeated 300 times" in finding.message
    assert "fori_loop" in finding.message
    assert finding.cost is not None and finding.cost.basis == "shapes" and finding.cost.equations == 600
    # The span is the line itself, without its indentation.
    assert (finding.span.start_col, finding.span.end_col) == (8, len("        x = x * 2.0 + 1.0  # expect JX202"))
    assert "repeated 150 times" in at(result, "JX202", "jnp.sin(x) * 2.0").message
    assert "repeated 30 times" in at(result, "JX202", "jax.random.normal").message


def test_jx305_messages_and_cost(result: CheckResult) -> None:
    scan = at(result, "JX305", 'jax.debug.print("c={c}"')
    assert "scan of 10 steps" in scan.message and "10 times per call" in scan.message
    assert scan.cost is not None and scan.cost.note == "10 host round trips per call"
    assert scan.span.start_col == 8  # the call itself
    cond = at(result, "JX305", "jax.pure_callback(record")
    assert "pure_callback" in cond.message and "up to 10 times" in cond.message
    loop = at(result, "JX305", "io_callback(record")
    assert "while loop" in loop.message and "not known" in loop.message
    nested = at(result, "JX305", "jax.debug.callback")
    assert "nested in 1 more loop" in nested.message and "50 times per call" in nested.message


def test_repetitions() -> None:
    assert repetitions(list("ab" * 50)) == (50, 2)
    assert repetitions(list("xyz" + "ab" * 50)) == (50, 2)  # an irregular first iteration
    assert repetitions(list("ab" * 50 + "q")) == (50, 2)  # an irregular last iteration
    assert repetitions(list("abcdefg")) == (1, 7)
    assert repetitions([]) == (1, 0)
    assert PythonLoopUnrolled.min_equations == 200
