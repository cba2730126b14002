"""JX203 recompilation-hazard and JX204 non-hashable-static-arg, end to end.

Both rules read the source (``ast``), but run like every rule: once per traced target. One module
holds the triggers and near misses of both; a line marked ``# expect JXnnn`` must give that
finding (once, although the module has several traced targets) and no other line may give one.
The bad static arguments sit in a function that is neither run at import nor traced (tracing it
would fail with a JX904 trace error instead).
"""
from __future__ import annotations

from pathlib import Path

import pytest

from jaxlint.check import CheckResult, check
from jaxlint.model import Finding
from jaxlint.rules import select_rules
from helpers import expected_markers

MODULE = '''\
import functools
from functools import partial

import jax
import jax.numpy as jnp
import numpy as np
from jax import jit as J


# jaxlint: args x=f32[3], shape=(3,)
@partial(jax.jit, static_argnums=(1,))
def resize(x, shape):
    return jnp.broadcast_to(x.sum(), shape)


def scale(x, factor):
    return x * factor


# jaxlint: args x=f32[3], factor=2.0
scaled = jax.jit(scale, static_argnames="factor")


def add_one(v):
    return v + 1.0


# jaxlint: args x=f32[3]
def train(x):
    for i in range(3):
        step = jax.jit(lambda v: v * 2.0)  # expect JX203
        x = step(x)
    for i in range(3):
        x = J(lambda v: v + i)(x)  # expect JX203
    for i in range(3):
        x = jax.jit(functools.partial(scale, factor=2.0))(x)  # expect JX203
    for i in range(3):
        def inner(v):
            return v - 1.0
        x = jax.jit(inner)(x)  # expect JX203
    ys = [jax.jit(lambda v: v * k)(x) for k in range(3)]  # expect JX203
    n = 0
    while n < 3:
        x = jax.jit(lambda v: v / 2.0)(x)  # expect JX203
        n += 1
    for i in range(3):
        x = jax.jit(add_one)(x)
    f = jax.jit(lambda v: v * 3.0)
    for i in range(3):
        x = f(x)
    for i in range(2):
        pass
    else:
        x = jax.jit(lambda v: v)(x)
    for v in [jax.jit(lambda v: v + 1.0)(x)]:
        x = v
    for i in range(2):
        g = lambda v: v * 4.0
    for i in range(2):
        @partial(jax.jit, static_argnums=())  # expect JX203
        def doubled(v):
            return v * 2.0 + i
        x = doubled(x)
    return x + sum(ys) + g(x)


# jaxlint: args x=f32[3]
@jax.jit
def traced_loop(x):
    for i in range(3):
        x = jax.jit(lambda v: v * 2.0)(x)

        @jax.jit
        def halved(v):
            return v / 2.0
        x = halved(x)
    return x


def bad_calls(x, items):
    a = resize(x, [2, 3])  # expect JX204
    b = resize(x, shape=[2, 3])  # expect JX204
    c = scaled(x, factor=np.array(2.0))  # expect JX204
    d = scaled(x, {"a": 1})  # expect JX204
    e = resize.lower(x, ([2], 3))  # expect JX204
    f = resize(x, {2, 3})  # expect JX204
    g = resize(x, [n for n in items])  # expect JX204
    h = resize(x, jnp.asarray([2]))  # expect JX204
    ok = resize(x, (2, 3))
    ok2 = resize([1.0, 2.0], (2,))
    ok3 = scaled(x, 2.0)
    ok4 = scaled([x], factor=(1, 2))
    ok5 = resize(x, tuple([2, 3]))
    return a, b, c, d, e, f, g, h, ok, ok2, ok3, ok4, ok5


def shadowed(resize, x):
    return resize(x, [2, 3])


def local_function(x):
    def scaled(x, factor):
        return x
    return scaled(x, [1])
'''


@pytest.fixture(scope="module")
def result(tmp_path_factory: pytest.TempPathFactory) -> CheckResult:
    path = tmp_path_factory.mktemp("jx203_jx204") / "hazards.py"
    path.write_text(MODULE, encoding="utf-8")
    return check([str(path)], select_rules(["JX203", "JX204"], None), fix=False)


def at(result: CheckResult, code: str, marker: str) -> Finding:
    line = next(n for n, text in enumerate(MODULE.splitlines(), 1) if marker in text)
    [finding] = [f for f in result.findings if f.code == code and f.span.start_line == line]
    return finding


def test_all_traced(result: CheckResult) -> None:
    # resize, scaled, traced_loop; ``train`` (only jit calls in its body) is no target: the rules
    # read the whole file whichever target they run for.
    assert result.skipped == [] and result.traced == 3


def test_exactly_the_marked_lines_once(result: CheckResult) -> None:
    found = [(f.code, f.span.start_line) for f in result.findings]
    assert sorted(found) == sorted(expected_markers(MODULE))  # three targets, each finding once


def test_jx203_messages_and_fixes(result: CheckResult) -> None:
    moved = at(result, "JX203", "step = jax.jit")
    assert moved.severity == "warning" and "a lambda inside a `for` loop" in moved.message
    assert "traced and compiled again each iteration" in moved.message
    assert moved.fix is not None and moved.fix.applicability == "safe"
    line = MODULE.splitlines()[moved.span.start_line - 1]
    assert line[moved.span.start_col:moved.span.end_col] == "jax.jit(lambda v: v * 2.0)"
    captured = at(result, "JX203", "J(lambda v: v + i)")
    assert "it uses `i`, set in the loop" in captured.message and captured.fix is None
    assert "functools.partial object" in at(result, "JX203", "functools.partial(scale").message
    assert "`inner`, a function defined in the loop body" in at(result, "JX203", "jax.jit(inner)").message
    decorated = at(result, "JX203", "@partial(jax.jit, static_argnums=())")
    assert decorated.message.startswith("`doubled` is decorated with jax.jit inside a `for` loop")
    assert "it uses `i`, set in the loop" in decorated.message and decorated.fix is None
    line = MODULE.splitlines()[decorated.span.start_line - 1]
    assert line[decorated.span.start_col:decorated.span.end_col] == "partial(jax.jit, static_argnums=())"
    comprehension = at(result, "JX203", "for k in range(3)")
    assert "comprehension" in comprehension.message and comprehension.fix is None
    renamed = at(result, "JX203", "v / 2.0")
    assert "`while` loop" in renamed.message
    assert renamed.fix is not None and renamed.fix.applicability == "safe"
    assert [e.content for e in renamed.fix.edits][1] == f"jitted_{renamed.span.start_line}"


def test_jx204_messages(result: CheckResult) -> None:
    listed = at(result, "JX204", "resize(x, [2, 3])")
    assert listed.severity == "error"
    assert listed.message.startswith("`resize` is jitted with static_argnums=(1,), but static argument 1 "
                                     "(`shape`) is a list, `[2, 3]`")
    assert "ValueError: Non-hashable static arguments are not supported" in listed.message
    line = MODULE.splitlines()[listed.span.start_line - 1]
    assert line[listed.span.start_col:listed.span.end_col] == "resize(x, [2, 3])"  # the call
    assert listed.fix is not None and listed.fix.applicability == "unsafe"
    assert [e.content for e in listed.fix.edits] == ["(2, 3)"]
    assert "static argument `shape` is a list" in at(result, "JX204", "shape=[2, 3]").message
    array = at(result, "JX204", "np.array(2.0)")
    assert "static_argnames=('factor',)" in array.message and "an array (numpy.array)" in array.message
    assert array.fix is None
    assert "argument 1 (`factor`) is a dict" in at(result, "JX204", '{"a": 1}').message
    nested = at(result, "JX204", "resize.lower")
    assert "is a list, `[2]`" in nested.message and [e.content for e in nested.fix.edits] == ["(2,)"]
    assert "is a set" in at(result, "JX204", "{2, 3}").message
    assert "list comprehension" in at(result, "JX204", "[n for n in items]").message
    assert "an array (jax.numpy.asarray)" in at(result, "JX204", "jnp.asarray([2])").message


FIX_MODULE = '''\
import jax
import jax.numpy as jnp


# jaxlint: args x=f32[3]
def train(x):
    for i in range(3):
        step = jax.jit(lambda v: v * 2.0)  # one step
        x = step(x)
    n = 0
    while n < 2:
        for j in range(2):
            x = jax.jit(lambda v: v + 1.0)(x)
        n += 1
    return x


# jaxlint: args x=f32[3], shape=f32[2]
@jax.jit
def helper(x, shape):
    return x


def bad(x):
    return helper(x, [1])
'''

FIXED_MODULE = '''\
import jax
import jax.numpy as jnp


# jaxlint: args x=f32[3]
def train(x):
    step = jax.jit(lambda v: v * 2.0)  # one step
    for i in range(3):
        x = step(x)
    n = 0
    jitted_13 = jax.jit(lambda v: v + 1.0)
    while n < 2:
        for j in range(2):
            x = jitted_13(x)
        n += 1
    return x


# jaxlint: args x=f32[3], shape=f32[2]
@jax.jit
def helper(x, shape):
    return x


def bad(x):
    return helper(x, [1])
'''


def test_fix_hoists_out_of_the_loops(tmp_path: Path) -> None:
    path = tmp_path / "fixme.py"
    path.write_text(FIX_MODULE, encoding="utf-8")
    fixed = check([str(path)], select_rules(["JX203", "JX204"], None), fix=True)
    assert fixed.fix_rejected == []
    assert path.read_text(encoding="utf-8") == FIXED_MODULE
    assert fixed.findings == []  # helper has no static arguments: the list is a pytree, fine


FAILING_IMPORT = '''\
from functools import partial

import jax
import jax.numpy as jnp


@partial(jax.jit, static_argnums=(1,))
def tile(x, reps):
    return jnp.tile(x, reps)


tile(jnp.ones(3), [2])
'''


def test_explain_the_import_failure(tmp_path: Path) -> None:
    """For the pipeline: JX204 can explain the failure an import (or a trace) stops at."""
    import importlib.util
    import traceback

    from jaxlint.model import Span
    from jaxlint.rules.jx204_non_hashable_static_arg import NonHashableStaticArg

    path = tmp_path / "fails.py"
    path.write_text(FAILING_IMPORT, encoding="utf-8")
    spec = importlib.util.spec_from_file_location("jx204_fails", path)
    module = importlib.util.module_from_spec(spec)
    with pytest.raises(ValueError) as raised:
        spec.loader.exec_module(module)
    line = [f for f in traceback.extract_tb(raised.value.__traceback__) if f.filename == str(path)][-1].lineno
    assert line == 12
    [finding] = NonHashableStaticArg.explain(str(path), FAILING_IMPORT, None, raised.value,
                                             Span(line, 0, line, 0))
    assert finding.code == "JX204" and finding.span == Span(12, 0, 12, 22)
    assert "static argument 1 (`reps`) is a list, `[2]`" in finding.message
    # Another failure, or another line, is not this rule's to explain.
    assert NonHashableStaticArg.explain(str(path), FAILING_IMPORT, None, TypeError("x"), Span(12, 0, 12, 0)) == []
    assert NonHashableStaticArg.explain(str(path), FAILING_IMPORT, None, raised.value, Span(8, 0, 8, 0)) == []
