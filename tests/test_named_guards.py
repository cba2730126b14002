"""Rules read the program, not the spelling: a guard, mask or predicate named on a line of its own
gives the findings its inline twin gives (same code, count, and line of the op they point at).

Each twin is traced with ``jaxlint.lint`` from a real module file (the rules read its source for
where to point). JX501's where guard is checked as a property over generated functions (the unsafe
op, a predicate that excludes its bad point or keeps it, which intermediates are named, the branch,
a vmap); the other rules that match a guard, mask or predicate by a table of twins, triggers and
near misses alike.
"""
from __future__ import annotations

import importlib.util
import itertools
import sys
import textwrap
from pathlib import Path
from typing import Any

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

import jaxlint

_COUNTER = itertools.count()


def _module(folder: Path, source: str) -> Any:
    """``source`` (with the usual imports) written to a fresh module in ``folder`` and imported."""
    name = f"jaxlint_twins_{next(_COUNTER)}"
    path = folder / f"{name}.py"
    path.write_text("import jax\nimport jax.numpy as jnp\nfrom jax import lax\n\n\n" + source, encoding="utf-8")
    spec = importlib.util.spec_from_file_location(name, path)
    module = importlib.util.module_from_spec(spec)
    sys.modules[name] = module  # lint reads the function's file through its module
    spec.loader.exec_module(module)
    return module


def _findings(module: Any, name: str, code: str, args: tuple, anchor: str) -> list[tuple[str, int]]:
    """(code, line relative to the anchor's line) of each finding of ``module.name``, sorted."""
    import inspect

    function = getattr(module, name)
    lines, first = inspect.getsourcelines(function)
    anchor_line = first + next(i for i, line in enumerate(lines) if anchor in line)
    return sorted((f.code, f.span.start_line - anchor_line)
                  for f in jaxlint.lint_with(select=[code]).lint(function, *args))


def _assert_twins(folder: Path, code: str, inline: str, named: str, args: tuple, anchor: str) -> list:
    module = _module(folder, textwrap.dedent(inline) + "\n\n" + textwrap.dedent(named))
    found = _findings(module, "inline", code, args, anchor)
    assert _findings(module, "named", code, args, anchor) == found, (inline, named)
    return found


# -- JX501's where guard, as a property ----------------------------------------------------------

# (the unsafe op of x, a predicate excluding one of its bad points, one excluding none)
_UNSAFE = [
    ("jnp.log({x})", "{x} > 0", "{x} > -1"),
    ("jnp.sqrt({x})", "{x} >= 0", "{x} < 5"),  # sqrt's derivative is inf at 0 and NaN below
    ("1.0 / {x}", "{x} != 0", "{x} > -2"),
    ("jnp.arcsin({x})", "jnp.abs({x}) < 1", "jnp.abs({x}) > 0.5"),
    ("jnp.log1p({x})", "{x} > -1", "{x} > -2"),
    ("{x} ** 0.5", "({x} > 0) & ({x} < 5)", "{x} < 5"),
]


# How the predicate is joined with another boolean ``ok`` (an argument: no comparison of x), if at all
_JOINED = {
    None: "{test}",
    "and": "({test}) & ok",
    "and-right": "ok & ({test})",
    "logical_and": "jnp.logical_and({test}, ok)",
    "or": "({test}) | ok",
}


@st.composite
def _where_twins(draw: Any) -> tuple[str, str, int]:
    """(inline source, named source, findings expected) of one where guard."""
    unsafe, excluding, keeping = draw(st.sampled_from(_UNSAFE))
    excludes = draw(st.booleans())
    on_false = draw(st.booleans())  # the op in the where's third argument, under the negated test
    joined = draw(st.sampled_from(list(_JOINED)))
    predicate = (excluding if excludes else keeping).format(x="v")
    core = f"~({predicate})" if on_false else predicate
    op = unsafe.format(x="v")
    name_mask, name_core, name_op, name_out, helper = (draw(st.booleans()) for _ in range(5))
    vmapped = draw(st.booleans())

    def where(test_text: str, op_text: str) -> str:
        cases = f"0.0, {op_text} + 1.0" if on_false else f"{op_text} + 1.0, 0.0"
        return f"jnp.where({test_text}, {cases})"

    def body(lines: list[str], result: str) -> str:
        inner = "\n".join(["    def one(v, ok):", *[f"        {line}" for line in lines], f"        return {result}"])
        call = "jax.vmap(one)(x, valid)" if vmapped else "one(x, valid)"
        return f"{inner}\n    return {call}\n"

    inline = "def inline(x, valid):\n" + body([], where(_JOINED[joined].format(test=core), op))
    lines = []
    if name_core and joined is not None:
        lines.append(f"core = {core}")
    test = _JOINED[joined].format(test="core" if name_core and joined is not None else core)
    if name_mask:
        lines.append(f"mask = {test}")
    if name_op:
        lines.append(f"y = {'unsafe_of(v)' if helper else op}")
    text = where("mask" if name_mask else test, "y" if name_op else ("unsafe_of(v)" if helper else op))
    if name_out:
        lines.append(f"out = {text}")
    named = f"def unsafe_of(v):\n    return {op}\n\n\ndef named(x, valid):\n" + body(lines, "out" if name_out else text)
    # Joined by and, the where still discards x's bad point whatever ok is (by or, not: ok may keep
    # it); under the negated test the where discards its third argument where the test holds: the
    # other way round.
    decided = joined is None or (joined != "or") != on_false
    return inline, named, int(excludes and decided)


@settings(max_examples=40, deadline=None, derandomize=True,
          suppress_health_check=[HealthCheck.function_scoped_fixture, HealthCheck.too_slow])
@given(_where_twins())
def test_jx501_where_named_or_inline_gives_the_same_finding(tmp_path: Path, twins: tuple[str, str, int]) -> None:
    import jax.numpy as jnp

    inline, named, expected = twins
    args = (jnp.arange(3.0), jnp.array([True, False, True]))
    found = _assert_twins(tmp_path, "JX501", inline, named, args, "jnp.where(")
    assert found == [("JX501", 0)] * expected, (inline, found)


@pytest.mark.parametrize("joined", list(_JOINED))
@pytest.mark.parametrize("on_false", [False, True])
def test_jx501_where_joined_with_another_boolean(tmp_path: Path, joined: str | None, on_false: bool) -> None:
    """Every way of joining the guard with another boolean, on either branch (the property above
    draws only some): and keeps the finding on the where's second argument, or on its third."""
    import jax.numpy as jnp

    core = "~(x > 0)" if on_false else "x > 0"
    cases = "0.0, jnp.log(x)" if on_false else "jnp.log(x), 0.0"
    test = _JOINED[joined].format(test=core)
    module = _module(tmp_path, f"def joined(x, ok):\n    return jnp.where({test}, {cases})\n")
    found = _findings(module, "joined", "JX501", (jnp.arange(3.0), jnp.array([True, False, True])), "jnp.where(")
    decided = joined is None or (joined != "or") != on_false
    assert found == [("JX501", 0)] * decided, found


# -- The other guard rules, by twins -------------------------------------------------------------

def _floats(*shape: int) -> Any:
    import jax.numpy as jnp

    return jnp.ones(shape, jnp.float32)


# (code, inline, named, arguments as shapes, the anchor: the op's text in both forms, expected count)
TWINS = [
    ("JX501", """
        def inline(p):
            return jnp.clip(jnp.log(p), -100.0)
        """, """
        def named(p):
            y = jnp.log(p)
            floor = -100.0
            return jnp.clip(y, floor)
        """, [(3,)], "jnp.clip(", 1),
    ("JX501", """
        def inline(p):
            return jnp.maximum(-2.0 * jnp.log10(p), 100.0) + jnp.minimum(jnp.log(p), 0.0)
        """, """
        def named(p):
            scaled = -2.0 * jnp.log10(p)
            kept = jnp.log(p)
            return jnp.maximum(scaled, 100.0) + jnp.minimum(kept, 0.0)
        """, [(3,)], "jnp.maximum(", 0),  # the bounds keep log's value at 0: quiet
    ("JX501", """
        def inline(p, q, n):
            return jnp.where(n > 0, p * q / jnp.sum(jnp.where(n > 0, p, 0.0)), 0.0)
        """, """
        def named(p, q, n):
            kept = n > 0
            s = jnp.sum(jnp.where(kept, p, 0.0))
            ratio = p * q / s
            return jnp.where(n > 0, ratio, 0.0)
        """, [(3,), (3,), (3,)], "return jnp.where(", 1),
    ("JX501", """
        def inline(p, q, n):
            return jnp.where(n > 0, p * q / jnp.sum((n > 0).astype(jnp.float32) * p), 0.0)
        """, """
        def named(p, q, n):
            mask = (n > 0).astype(jnp.float32)
            s = jnp.sum(mask * p)
            return jnp.where(n > 0, p * q / s, 0.0)
        """, [(3,), (3,), (3,)], "return jnp.where(", 1),
    ("JX501", """
        def inline(p, q, n):
            return jnp.where(n > 0, p * q / jnp.sum(p * (n > 0)), 0.0)
        """, """
        def named(p, q, n):
            mask = n > 0
            s = jnp.sum(p * mask)
            return jnp.where(mask, p * q / s, 0.0)
        """, [(3,), (3,), (3,)], "return jnp.where(", 1),
    ("JX501", """
        def inline(p, m, n):
            return jnp.where(n > 0, p / jnp.sum(p * (m > 0)), 0.0)
        """, """
        def named(p, m, n):
            mask = m > 0
            s = jnp.sum(p * mask)
            return jnp.where(n > 0, p / s, 0.0)
        """, [(3,), (3,), (3,)], "return jnp.where(", 0),  # a sum over another variable's mask
    ("JX501", """
        def inline(p, n):
            return jnp.where(n > 0, p / jnp.sum(jnp.where(n > 0, p, 0.0) + 1e-6), 0.0)
        """, """
        def named(p, n):
            s = jnp.sum(jnp.where(n > 0, p, 0.0) + 1e-6)
            return jnp.where(n > 0, p / s, 0.0)
        """, [(3,), (3,)], "return jnp.where(", 0),
    ("JX704", """
        def inline(a, b):
            return jax.grad(lambda a: jnp.sqrt(jnp.sum((a - b) ** 2)))(a)
        """, """
        def named(a, b):
            def distance(a):
                d = a - b
                s = jnp.sum(d ** 2)
                return jnp.sqrt(s)
            return jax.grad(distance)(a)
        """, [(3,), (3,)], "jnp.sqrt(", 1),
    ("JX704", """
        def inline(x):
            return jax.grad(lambda x: jnp.linalg.norm(jnp.where(jnp.linalg.norm(x) <= 0, jnp.ones_like(x), x)))(x)
        """, """
        def named(x):
            def safe_norm(x):
                small = jnp.linalg.norm(x) <= 0
                y = jnp.where(small, jnp.ones_like(x), x)
                return jnp.linalg.norm(y)
            return jax.grad(safe_norm)(x)
        """, [(3,)], "jnp.linalg.norm(", 0),
    ("JX703", """
        def inline(x):
            return jnp.log(1 + x) + jnp.log(1 + jnp.exp(x))
        """, """
        def named(x):
            t = 1 + x
            e = jnp.exp(x)
            u = 1 + e
            return jnp.log(t) + jnp.log(u)
        """, [(3,)], "return jnp.log(", 2),
    ("JX707", """
        def inline(x):
            return 1 / (1 + jnp.exp(-x))
        """, """
        def named(x):
            e = jnp.exp(-x)
            d = 1 + e
            return 1 / d
        """, [(3,)], "return 1 / ", 1),
    ("JX708", """
        def inline(x):
            return jnp.log(jax.nn.sigmoid(x)) + jnp.log(1 - jax.nn.sigmoid(x)) + jnp.log1p(jnp.exp(-x))
        """, """
        def named(x):
            s = jax.nn.sigmoid(x)
            q = 1 - s
            e = jnp.exp(-x)
            return jnp.log(s) + jnp.log(q) + jnp.log1p(e)
        """, [(3,)], "return jnp.log(", 3),
    ("JX708", """
        def inline(x):
            return jnp.log(jax.nn.sigmoid(x) + 1e-7) + jnp.log1p(jnp.exp(-jnp.abs(x)))
        """, """
        def named(x):
            s = jax.nn.sigmoid(x) + 1e-7
            z = -jnp.abs(x)
            return jnp.log(s) + jnp.log1p(jnp.exp(z))
        """, [(3,)], "return jnp.log(", 0),
    ("JX102", """
        def inline(xs):
            return jax.vmap(lambda x: lax.cond(x > 0, jnp.sin, jnp.cos, x))(xs)
        """, """
        def named(xs):
            def one(x):
                positive = x > 0
                return lax.cond(positive, jnp.sin, jnp.cos, x)
            return jax.vmap(one)(xs)
        """, [(8,)], "lax.cond(", 1),
    ("JX103", """
        def inline(ns, xs):
            return jax.vmap(lambda n, x: lax.while_loop(lambda c: c[0] < n, lambda c: (c[0] + 1, jnp.tanh(c[1])),
                                                        (0, x))[1])(ns, xs)
        """, """
        def named(ns, xs):
            def one(n, x):
                def going(c):
                    done = c[0] >= n
                    return ~done
                return lax.while_loop(going, lambda c: (c[0] + 1, jnp.tanh(c[1])), (0, x))[1]
            return jax.vmap(one)(ns, xs)
        """, [(4,), (4, 3)], "lax.while_loop(", 1),
    ("JX505", """
        def inline(scale, x):
            return jax.grad(lambda s: jnp.sum((x > s).astype(jnp.float32) * x))(scale)
        """, """
        def named(scale, x):
            def loss(s):
                above = x > s
                weights = above.astype(jnp.float32)
                return jnp.sum(weights * x)
            return jax.grad(loss)(scale)
        """, [(), (3,)], "x > s", 1),
]


@pytest.mark.parametrize("code, inline, named, shapes, anchor, count", TWINS,
                         ids=[f"{t[0]}-{i}" for i, t in enumerate(TWINS)])
def test_named_twin_gives_the_inline_findings(tmp_path: Path, code: str, inline: str, named: str,
                                               shapes: list[tuple[int, ...]], anchor: str, count: int) -> None:
    import jax.numpy as jnp

    args = tuple(jnp.arange(4, dtype=jnp.int32) if code == "JX103" and i == 0 else _floats(*shape)
                 for i, shape in enumerate(shapes))
    found = _assert_twins(tmp_path, code, inline, named, args, anchor)
    assert len(found) == count and all(c == code for c, _ in found), found
