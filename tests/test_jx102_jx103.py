"""JX102 vmap-cond-to-select and JX103 vmap-while-batched-predicate on real jaxprs, end to end.

Each module is written to a temporary folder and checked once, in the test process
(helpers.check_in_process: the worker's analysis without a worker process).
"""
from __future__ import annotations

from pathlib import Path

import pytest
from helpers import check_in_process

from jaxlint.config.selection import select_rules
from jaxlint.engine.results import CheckResult
from jaxlint.model import Finding

HELPERS = '''\
import jax
import jax.numpy as jnp
from jax import lax


def heavy(x):
    return jnp.tanh(x @ x)


def light(x):
    return x + 1.0


def step(p, x):
    return lax.cond(p > 0, heavy, light, x)


def count(n, x):
    return lax.while_loop(lambda c: c[0] < n, lambda c: (c[0] + 1, heavy(c[1])), (0, x))[1]
'''

# heavy on f32[4, 4]: a 4x4x4 dot (128 FLOPs) and a tanh (16); light: an add (16). A batch of 8.
TRIGGERS = HELPERS + '''

@jax.jit
def helper_cond(ps, xs):
    return jax.vmap(step)(ps, xs)


@jax.jit
def inline_switch(idx, xs):
    def one(i, x):
        return lax.switch(
            i,
            [heavy, light, lambda x: x * 2.0],
            x,
        )
    return jax.vmap(one)(idx, xs)


def pytree_cond(ps, xs):
    def one(p, x):
        return lax.cond(p > 0, lambda x: (heavy(x), x.sum()), lambda x: (light(x), x.max()), x)
    return jax.vmap(one)(ps, xs)


@jax.jit
def twice(ps, xs):
    for _ in range(2):
        xs = jax.vmap(step)(ps, xs)
    return xs


@jax.jit
def in_scan(ps, xs):
    def body(c, _):
        return jax.vmap(step)(ps, c), None
    return lax.scan(body, xs, None, length=5)[0]


@jax.jit
def batched_while(ns, xs):
    return jax.vmap(count)(ns, xs)


@jax.jit
def batched_fori(ns, xs):
    return jax.vmap(lambda n, x: lax.fori_loop(0, n, lambda i, x: heavy(x), x))(ns, xs)


ps, xs, ns = jnp.linspace(-1.0, 1.0, 8), jnp.ones((8, 4, 4)), jnp.arange(8)
step(1.0, xs[0]), count(3, xs[0])
helper_cond(ps, xs), inline_switch(ns % 3, xs), pytree_cond(ps, xs), twice(ps, xs), in_scan(ps, xs)
batched_while(ns, xs), batched_fori(ns, xs)
'''

QUIET = HELPERS + '''
from jax.scipy.optimize import minimize


@jax.jit
def unbatched_predicate(p, xs):
    return jax.vmap(step, in_axes=(None, 0))(p, xs)


@jax.jit
def predicate_from_closure(p, xs):
    return jax.vmap(lambda x: lax.cond(p.sum() > 0, heavy, light, x))(xs)


@jax.jit
def user_where(ps, xs):
    return jax.vmap(lambda p, x: jnp.where(p > 0, heavy(x), light(x)))(ps, xs)


@jax.jit
def where_inside_cond(p, xs):
    return jax.vmap(lambda x: lax.cond(p > 0, lambda x: jnp.where(x > 0, x, -x), light, x))(xs)


@jax.jit
def cond_without_vmap(p, x):
    return lax.cond(p > 0, heavy, light, x)


@jax.jit
def lax_map_cond(ps, xs):
    return lax.map(lambda a: step(*a), (ps, xs))


@jax.jit
def unbatched_while(n, xs):
    return jax.vmap(count, in_axes=(None, 0))(n, xs)


@jax.jit
def static_fori(xs):
    return jax.vmap(lambda x: lax.fori_loop(0, 3, lambda i, x: heavy(x), x))(xs)


@jax.jit
def library_while(x0s):
    return jax.vmap(lambda x0: minimize(lambda x: jnp.sum((x - 1.0) ** 2), x0, method="BFGS").x)(x0s)


ps, xs = jnp.linspace(-1.0, 1.0, 8), jnp.ones((8, 4, 4))
step(1.0, xs[0]), count(3, xs[0])
unbatched_predicate(1.0, xs), predicate_from_closure(ps, xs), user_where(ps, xs), where_inside_cond(1.0, xs)
cond_without_vmap(1.0, xs[0]), lax_map_cond(ps, xs), unbatched_while(3, xs), static_fori(xs)
library_while(jnp.ones((4, 3)))
'''


def run(folder: Path, name: str, text: str) -> CheckResult:
    path = folder / f"{name}.py"
    path.write_text(text, encoding="utf-8")
    return check_in_process([str(path)], select_rules(["JX102", "JX103"], None))


def position(text: str, snippet: str) -> tuple[int, int]:
    """(1-based line, 0-based character column) of ``snippet`` in ``text``."""
    index = text.index(snippet)
    return text.count("\n", 0, index) + 1, index - (text.rfind("\n", 0, index) + 1)


@pytest.fixture(scope="module")
def found(tmp_path_factory: pytest.TempPathFactory) -> dict[str, Finding]:
    result = run(tmp_path_factory.mktemp("triggers"), "jx102_triggers", TRIGGERS)
    assert result.skipped == [] and result.traced == 9
    by_target: dict[str, Finding] = {}
    for finding in result.findings:
        assert finding.target not in by_target, f"two findings for {finding.target}"
        by_target[finding.target] = finding
    return by_target


def test_every_trigger_is_reported(found) -> None:
    assert set(found) == {"helper_cond", "inline_switch", "pytree_cond", "twice", "in_scan",
                          "batched_while", "batched_fori"}
    for target, finding in found.items():
        expected = "JX103" if "while" in target or "fori" in target else "JX102"
        assert finding.code == expected, target
        assert finding.fix is None and finding.severity == "warning"
        assert finding.cost is not None and finding.cost.basis == "shapes"


def test_cond_in_a_helper_points_at_the_cond_call(found) -> None:
    finding = found["helper_cond"]
    call = "lax.cond(p > 0, heavy, light, x)"
    line, col = position(TRIGGERS, call)
    assert (finding.span.start_line, finding.span.start_col, finding.span.end_col) == (line, col, col + len(call))
    message = finding.message
    assert message.startswith("lax.cond predicate is batched under vmap (8 elements)")
    assert "all 2 branches" in message and "branch FLOPs for the batch: 1152, 128" in message
    assert "up to 1152 FLOPs per call go to branches whose result is discarded" in message
    assert "(128 if every element takes the most expensive branch)" in message
    assert "lax.map" in message
    assert found["helper_cond"].cost.flops == 1152 and found["helper_cond"].cost.equations == 3


def test_multiline_switch_with_three_branches(found) -> None:
    finding = found["inline_switch"]
    assert (finding.span.start_line, finding.span.start_col) == position(TRIGGERS, "lax.switch(")
    assert finding.span.end_line == finding.span.start_line + 4
    assert finding.message.startswith("lax.switch predicate is batched under vmap (8 elements)")
    assert "all 3 branches" in finding.message and "1152, 128, 128" in finding.message
    assert finding.cost.flops == 1408 - 128  # all three minus the cheapest


def test_pytree_output_and_repeated_and_looped_conds(found) -> None:
    assert found["pytree_cond"].span.start_line == position(TRIGGERS, "lax.cond(p > 0, lambda x: (heavy")[0]
    assert found["twice"].cost.flops == 2 * 1152  # the one call site traced twice: one finding
    assert found["in_scan"].cost.flops == 5 * 1152  # inside a scan of length 5


def test_batched_while_and_fori(found) -> None:
    finding = found["batched_while"]
    call = "lax.while_loop(lambda c: c[0] < n, lambda c: (c[0] + 1, heavy(c[1])), (0, x))"
    assert (finding.span.start_line, finding.span.start_col) == position(TRIGGERS, call)
    message = finding.message
    assert message.startswith("lax.while_loop predicate is batched under vmap (8 elements, predicate bool[8])")
    assert "every element runs max(trip) iterations" in message and "unknown statically" in message
    assert "(1168 FLOPs" in message  # heavy for the batch (1152), the counter add (8), the predicate (8)
    assert finding.cost.flops is None
    fori = found["batched_fori"]
    assert fori.message.startswith("lax.fori_loop bounds are batched under vmap (8 elements")
    assert (fori.span.start_line, fori.span.start_col) == position(TRIGGERS, "lax.fori_loop(0, n,")


def test_near_misses_are_quiet(tmp_path: Path) -> None:
    result = run(tmp_path, "jx102_quiet", QUIET)
    assert result.skipped == [] and result.traced == 11
    assert result.findings == [], [f.message for f in result.findings]
