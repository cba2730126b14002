"""JX203 recompilation-hazard and JX204 non-hashable-static-arg, end to end.

Both rules read the source (``ast``), but run like every rule: once per traced target. One module
holds the triggers and near misses of both; a line marked ``# expect JXnnn`` must give that
finding (once, although the module has several traced targets) and no other line may give one.
The bad static arguments sit in a function that is neither run at import nor traced (tracing it
would fail with a JX904 trace error instead).
"""
from __future__ import annotations

import importlib.util
import json
import os
import re
import subprocess
import sys
from pathlib import Path

import pytest
from helpers import expected_markers, write

from jaxlint.config.selection import select_rules
from jaxlint.engine.check import check
from jaxlint.engine.results import CheckResult
from jaxlint.model import Finding

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
    # resize, scaled, traced_loop, and ``train``, which only its hint makes a target (its body
    # calls no transform but jit): the rules read the whole file whichever target they run for.
    assert result.skipped == [] and result.traced == 4


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


MUTATING_LOOPS = '''\
import jax
import jax.numpy as jnp


def predict(w, x):
    return x @ w


class Schedule:
    lr = 0.1

    def update(self, lr):
        self.lr = lr


def train_item(w, x):
    hp = [0.1]
    for step in range(3):
        hp[0] = 0.1 * 0.5 ** step
        w = jax.jit(lambda w: w - hp[0] * predict(w, x).sum())(w)  # item
    return w


def train_attribute(w, x):
    opt = Schedule()
    for step in range(3):
        opt.lr = 0.1 * 0.5 ** step
        w = jax.jit(lambda w: w - opt.lr * predict(w, x).sum())(w)  # attribute
    return w


def train_method(w, x):
    sched = Schedule()
    for step in range(3):
        sched.update(lr=0.1 * 0.5 ** step)
        w = jax.jit(lambda w: w - sched.lr * predict(w, x).sum())(w)  # method
    return w


def train_passed(w, x):
    hp = {"lr": 0.1}
    for step in range(3):
        decay(hp, step)
        w = jax.jit(lambda w: w - hp["lr"] * predict(w, x).sum())(w)  # passed
    return w


def decay(hp, step):
    hp["lr"] = 0.1 * 0.5 ** step


# jaxlint: args w=f32[3], x=f32[2,3]
def train_constant(w, x):
    lr = 0.1
    for step in range(3):
        w = jax.jit(lambda w: w - lr * jnp.sum(predict(w, x)))(w)  # constant
    return w
'''


def test_no_hoist_when_the_loop_changes_what_the_function_reads(tmp_path: Path) -> None:
    """Hoisted, the lambda is traced once and keeps the learning rate of the first iteration:
    the training gives other numbers. Each way a loop changes an object in place withholds the
    fix and says what to do; a value the loop leaves alone is still hoisted."""
    path = tmp_path / "mutating.py"
    path.write_text(MUTATING_LOOPS, encoding="utf-8")
    result = check([str(path)], select_rules(["JX203"], None))
    by_marker = {MUTATING_LOOPS.splitlines()[f.span.start_line - 1].rsplit("# ", 1)[1]: f for f in result.findings}
    assert sorted(by_marker) == ["attribute", "constant", "item", "method", "passed"]
    for marker, name in [("item", "hp"), ("attribute", "opt"), ("method", "sched"), ("passed", "hp")]:
        finding = by_marker[marker]
        assert finding.fix is None, marker
        assert f"it reads `{name}`, which the loop changes in place: pass the values it needs as arguments" \
            in finding.message
    assert by_marker["constant"].fix is not None and by_marker["constant"].fix.applicability == "safe"
    # Why: the same loop with the jitted lambda made once before it gives another result.
    namespace: dict = {}
    exec(compile(MUTATING_LOOPS, str(path), "exec"), namespace)
    hoisted = MUTATING_LOOPS.replace(
        "    for step in range(3):\n        hp[0] = 0.1 * 0.5 ** step\n        w = jax.jit(lambda w: w - hp[0] * "
        "predict(w, x).sum())(w)  # item",
        "    once = jax.jit(lambda w: w - hp[0] * predict(w, x).sum())\n    for step in range(3):\n"
        "        hp[0] = 0.1 * 0.5 ** step\n        w = once(w)")
    assert hoisted != MUTATING_LOOPS
    moved: dict = {}
    exec(compile(hoisted, str(path), "exec"), moved)
    import numpy as np
    w, x = np.array([1.0, 2.0, 3.0], np.float32), np.ones((2, 3), np.float32)
    assert not np.allclose(namespace["train_item"](w, x), moved["train_item"](w, x))


CRLF_MODULE = '''\
import jax
import jax.numpy as jnp


# jaxlint: args x=f32[3]
@jax.jit
def double(x):  # the target jaxlint traces; train is not one
    return x * 2.0


def train(x):
    for i in range(3):
        x = jax.jit(lambda v: v * 2.0)(x)
    return x
'''.replace("\n", "\r\n")

CRLF_FIXED = '''\
import jax
import jax.numpy as jnp


# jaxlint: args x=f32[3]
@jax.jit
def double(x):  # the target jaxlint traces; train is not one
    return x * 2.0


def train(x):
    jitted = jax.jit(lambda v: v * 2.0)
    for i in range(3):
        x = jitted(x)
    return x
'''.replace("\n", "\r\n")


def test_fix_keeps_crlf_line_endings(tmp_path: Path) -> None:
    """`jaxlint check --fix` on a CRLF file: the hoisted line ends in \\r\\n like the others."""
    import jax.numpy as jnp

    path = tmp_path / "crlf.py"
    path.write_bytes(CRLF_MODULE.encode("utf-8"))
    env = {**os.environ, "JAX_PLATFORMS": "cpu"}
    jaxlint = [sys.executable, "-m", "jaxlint", "check", "--select", "JX203"]
    # train is not traced: its fix cannot be proven on values, so it is unsafe (test_fix_values.py).
    run = subprocess.run([*jaxlint, "--fix", "--unsafe-fixes", str(path)], cwd=tmp_path, env=env,
                         capture_output=True, text=True, timeout=600)
    assert run.returncode == 0, run.stdout + run.stderr
    data = path.read_bytes()
    assert re.search(rb"(?<!\r)\n", data) is None and b"\r\r" not in data, data  # no bare \n
    assert data.decode("utf-8") == CRLF_FIXED
    again = subprocess.run([*jaxlint, str(path)], cwd=tmp_path, env=env, capture_output=True, text=True,
                           timeout=600)
    assert again.returncode == 0, again.stdout + again.stderr  # no finding left
    assert float(load(path).train(jnp.ones(3))[0]) == 8.0  # the fixed file runs: three doublings


COMMENTED_MODULE = '''\
import jax
import jax.numpy as jnp


# jaxlint: args x=f32[3]
@jax.jit
def double(x):  # the target jaxlint traces; train is not one
    return x * 2.0


def train(x):
    x = x + 1.0

    # Three doubling steps.
    for i in range(3):
        x = jax.jit(lambda v: v * 2.0)(x)
    # Then halve twice.
    for i in range(2):
        # jitted once
        halve = jax.jit(lambda v: v / 2.0)  # the halving step
        x = halve(x)
    return x
'''

COMMENTED_FIXED = '''\
import jax
import jax.numpy as jnp


# jaxlint: args x=f32[3]
@jax.jit
def double(x):  # the target jaxlint traces; train is not one
    return x * 2.0


def train(x):
    x = x + 1.0

    jitted_16 = jax.jit(lambda v: v * 2.0)
    # Three doubling steps.
    for i in range(3):
        x = jitted_16(x)
    # jitted once
    halve = jax.jit(lambda v: v / 2.0)  # the halving step
    # Then halve twice.
    for i in range(2):
        x = halve(x)
    return x
'''


def test_fix_keeps_the_loop_comment_above_the_loop(tmp_path: Path) -> None:
    """The comment lines directly above a loop describe it: the hoisted assignment goes above
    them. A moved ``name = jax.jit(...)`` takes its own comment lines along."""
    path = write(tmp_path, "commented", COMMENTED_MODULE)
    fixes = {f.span.start_line: f.fix for f in check([str(path)], select_rules(["JX203"], None)).findings}
    assert sorted(fixes) == [16, 20]
    # Plain text edits that leave the rest of the loop alone: an insertion above the comment, then
    # the call replaced by the name (or the moved lines deleted).
    assert [e.span.to_json() for e in fixes[16].edits] == [[14, 0, 14, 0], [16, 12, 16, 38]]
    assert [e.content for e in fixes[16].edits] == ["    jitted_16 = jax.jit(lambda v: v * 2.0)\n", "jitted_16"]
    assert [e.span.to_json() for e in fixes[20].edits] == [[17, 0, 17, 0], [19, 0, 21, 0]]
    fixed = check([str(path)], select_rules(["JX203"], None), fix=True, unsafe_fixes=True)  # nothing traced
    assert fixed.fix_rejected == []
    assert path.read_text(encoding="utf-8") == COMMENTED_FIXED
    assert fixed.findings == []


TABBED_MODULE = '''\
import jax
import jax.numpy as jnp


# jaxlint: args x=f32[3]
@jax.jit
def double(x):  # the target jaxlint traces; train is not one
    return x * 2.0


def train(x):
\tn = 0
\t# both loops
\twhile n < 2:
\t\t# the inner loop
\t\tfor j in range(2):
\t\t\tx = jax.jit(
\t\t\t\tlambda v: v + 1.0)(x)
\t\tn += 1
\treturn x
'''

TABBED_FIXED = '''\
import jax
import jax.numpy as jnp


# jaxlint: args x=f32[3]
@jax.jit
def double(x):  # the target jaxlint traces; train is not one
    return x * 2.0


def train(x):
\tn = 0
\tjitted = jax.jit(
\t\tlambda v: v + 1.0)
\t# both loops
\twhile n < 2:
\t\t# the inner loop
\t\tfor j in range(2):
\t\t\tx = jitted(x)
\t\tn += 1
\treturn x
'''


def test_fix_hoists_out_of_tab_indented_nested_loops(tmp_path: Path) -> None:
    """Tabs stay tabs, and the call's continuation line keeps its indentation relative to the
    statement (libcst re-indents it for the outer block)."""
    path = write(tmp_path, "tabbed", TABBED_MODULE)
    fixed = check([str(path)], select_rules(["JX203"], None), fix=True, unsafe_fixes=True)  # nothing traced
    assert fixed.fix_rejected == []
    assert path.read_text(encoding="utf-8") == TABBED_FIXED
    assert fixed.findings == []


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
    from jaxlint.rules.base import SourceContext
    from jaxlint.rules.jx204_non_hashable_static_arg import NonHashableStaticArg
    from jaxlint.scan.index import SourceIndex

    path = tmp_path / "fails.py"
    path.write_text(FAILING_IMPORT, encoding="utf-8")
    spec = importlib.util.spec_from_file_location("jx204_fails", path)
    module = importlib.util.module_from_spec(spec)
    with pytest.raises(ValueError) as raised:
        spec.loader.exec_module(module)
    line = [f for f in traceback.extract_tb(raised.value.__traceback__) if f.filename == str(path)][-1].lineno
    assert line == 12
    context = SourceContext(str(path), FAILING_IMPORT, SourceIndex(str(path), FAILING_IMPORT))
    [finding] = NonHashableStaticArg.explain(context, None, raised.value, Span(line, 0, line, 0))
    assert finding.code == "JX204" and finding.span == Span(12, 0, 12, 22)
    assert "static argument 1 (`reps`) is a list, `[2]`" in finding.message
    # Another failure, or another line, is not this rule's to explain.
    assert NonHashableStaticArg.explain(context, None, TypeError("x"), Span(12, 0, 12, 0)) == []
    assert NonHashableStaticArg.explain(context, None, raised.value, Span(8, 0, 8, 0)) == []


# ---------------------------------------------------------------------------------------------
# JX203's second half: a static argument fed float values that change (one compile per value)

STATIC_FLOATS = '''\
import math
from functools import partial

import jax
import jax.numpy as jnp
import numpy as np

HALF = 0.5


# jaxlint: args x=f32[3], lr=0.1
@partial(jax.jit, static_argnums=(1,))
def step(x, lr):
    return x - lr * jnp.tanh(x)


# jaxlint: args x=f32[3], temperature=0.5
@partial(jax.jit, static_argnames=("temperature",))
def sample(x, temperature):
    if temperature > 0:
        return x / temperature
    return x


def decay(x, scale):
    return x * (1.0 - scale)


# jaxlint: args x=f32[3], scale=0.5
decayed = jax.jit(decay, static_argnames="scale")


# jaxlint: args x=f32[3], rate=0.5
@partial(jax.jit, static_argnums=1)
def damp(x, rate):
    return x * jnp.exp(-rate)


# jaxlint: args x=f32[3], lr=0.5, n=2, mode='a'
@partial(jax.jit, static_argnums=(1, 2, 3))
def quiet(x, lr, n, mode):
    return jnp.tile(x * lr, n)


# jaxlint: args x=f32[3], eps=0.5
@partial(jax.jit, static_argnums=1)
def nudge(x, eps):
    if isinstance(eps, float):  # Python looks at the static value's type: other operations traced
        return x + eps
    return jnp.sin(x) + eps


@partial(jax.jit, static_argnums=1)
def unhinted(x, lr):
    return x * lr


@partial(jax.jit, static_argnums=1)
def unhinted_sites(x, lr):
    return x * lr


unhinted.lower(jnp.ones(3), 0.5)
unhinted_sites.lower(jnp.ones(3), 0.5)


def train(x, steps, base_lr):
    for i in range(steps):
        x = step(x, 0.1 * 0.99 ** i)  # expect JX203
    for t in np.linspace(0.1, 1.0, 5):
        x = sample(x, temperature=t)  # expect JX203
    lr = 0.5
    for _ in range(3):
        x = step(x, lr)  # expect JX203
        lr *= 0.9
    for i in range(steps):
        x = decayed(x, scale=i / steps)  # expect JX203
    for i, lr in enumerate([0.1, 0.01, 0.001]):
        x = step(x, lr)  # expect JX203
    for epoch in range(10):
        x = step(x, base_lr * math.cos(epoch))  # expect JX203
    xs = [decayed(x, float(k) / 4) for k in range(4)]  # expect JX203
    t = 0.0
    while t < 1.0:
        x = sample(x, t)  # expect JX203
        t += 0.25
    schedule = np.linspace(0.0, 1.0, 8)
    for i in range(8):
        x = step(x, schedule[i])  # expect JX203
    for i in range(steps):
        x = unhinted(x, 1.0 / (i + 1))  # expect JX203
    return x, xs


def near_misses(x, steps, base_lr, n):
    for i in range(steps):
        x = quiet(x, 0.5, 2, "a")  # one constant everywhere: one compile
        x = quiet(x, HALF, i, "b" * i)  # ints and strings: out of scope
        x = quiet(x, base_lr, (i, i), "a")
        x = quiet(x, lr=base_lr * 0.5, n=2, mode="a")  # loop-invariant
    fixed = 0.3 * 0.99 ** 10
    for i in range(steps):
        x = quiet(x, fixed, 2, "a")
        lr2 = 0.5
        x = quiet(x, lr2, 2, "a")
        x = quiet(x, 0.5 if i < 0 else 0.5, 2, "a")
    for lr in [0.5, 0.5]:
        x = quiet(x, lr, 2, "a")
    for row in x:
        x = quiet(x, 0.5, 2, "a")
    for i in range(steps):
        x = jnp.tanh(x) * (0.1 * i)
        x = quiet(x * (0.1 * i), 0.5, 2, "a")  # a changing float at a traced position
    for xi in jnp.linspace(0.0, 1.0, 4):
        x = quiet(x, 0.5, n, "a")
    return x


# jaxlint: args x=f32[3]
@jax.jit
def traced_schedule(x):
    for i in range(3):
        x = step(x, 0.1 * i)  # traced into traced_schedule: compiled once, with it
    return helper(x)


def helper(x):
    for i in range(3):
        x = step(x, 0.1 * i)  # runs only under traced_schedule's trace
    return x


def evaluate(x):
    a = damp(x, 0.5)  # expect JX203
    b = damp(x, rate=0.25)
    c = damp(x, 0.125)
    d = sample(x, 0.0)  # temperature picks a code path: two values, two programs, by design
    e = sample(x, 1.0)
    f = quiet(x, 0.5, 2, "a")
    g = quiet(x, HALF * 5, 2, "a")
    for temperature in (0.0, 1.0):
        e = sample(x, temperature)
    for i in range(3):
        f = sample(x, 0.0 if i == 0 else 1.0)
    h = unhinted_sites(x, 0.1)  # not verified by a trace (no hint, no record): not reported
    k = unhinted_sites(x, 0.2)
    m = nudge(x, 0.1) + nudge(x, 0.2)  # traced, eps gives other operations: not verified either
    return a, b, c, d, e, f, g, h, k, m
'''


@pytest.fixture(scope="module")
def floats(tmp_path_factory: pytest.TempPathFactory) -> CheckResult:
    path = tmp_path_factory.mktemp("jx203_floats") / "schedules.py"
    path.write_text(STATIC_FLOATS, encoding="utf-8")
    return check([str(path)], select_rules(["JX203", "JX204", "JX906"], None), fix=False)


def floats_at(result: CheckResult, marker: str) -> Finding:
    line = next(n for n, text in enumerate(STATIC_FLOATS.splitlines(), 1) if marker in text)
    [finding] = [f for f in result.findings if f.span.start_line == line]
    return finding


def test_static_floats_exactly_the_marked_calls_once(floats: CheckResult) -> None:
    assert floats.skipped == [] and floats.traced == 9
    found = [(f.code, f.span.start_line) for f in floats.findings]
    assert sorted(found) == sorted(expected_markers(STATIC_FLOATS))
    assert all(f.fix is None and f.severity == "warning" for f in floats.findings)


def test_static_float_in_a_loop_message(floats: CheckResult) -> None:
    decayed = floats_at(floats, "0.1 * 0.99 ** i")
    line = STATIC_FLOATS.splitlines()[decayed.span.start_line - 1]
    assert line[decayed.span.start_col:decayed.span.end_col] == "step(x, 0.1 * 0.99 ** i)"  # the call
    assert decayed.message.startswith(
        "`step` is jitted with static_argnums=(1,), and its static argument 1 (`lr`) gets a float that "
        "changes between iterations of this `for` loop (from `i`): jit keys its cache on static values, "
        "so `step` is traced and compiled again for every new value. Make `lr` a traced argument: "
        "remove it from static_argnums;")
    # Verified by tracing step with lr traced (the hint's other arguments): an operand only.
    assert decayed.message.endswith(
        "jaxlint traced `step` with `lr` traced: no Python control flow or shape depends on it, and the "
        "operations are those of the static version (compared at lr=0.1), so making it traced changes "
        "no operation.")
    updated, enumerated = [f for f in floats.findings if "x = step(x, lr)" in
                           STATIC_FLOATS.splitlines()[f.span.start_line - 1]]
    assert "`for` loop (from `lr`)" in updated.message  # lr *= 0.9
    assert "(compared at lr=0.001, 0.01, 0.1)" in enumerated.message  # the list's values
    # decay computes 1.0 - scale in Python when scale is static: still the same operations.
    assert "compared at scale=0.5" in floats_at(floats, "scale=i / steps").message
    assert "static_argnames" in floats_at(floats, "scale=i / steps").message
    assert "this comprehension (from `k`)" in floats_at(floats, "float(k) / 4").message
    # temperature decides an `if`: reported (one compile per value), and the message says why
    # making it traced is not enough.
    control = floats_at(floats, "temperature=t)")
    assert "Tracing `sample` with `temperature` traced raises TracerBoolConversionError" in control.message
    assert "`while` loop (from `t`)" in floats_at(floats, "x = sample(x, t)").message
    # No hint and no record: nothing verified, nothing claimed.
    unverified = floats_at(floats, "unhinted(x, 1.0 / (i + 1))")
    assert unverified.message.endswith("the same dtype promotion as the constant).")


def test_static_float_constants_at_several_calls(floats: CheckResult) -> None:
    sites = floats_at(floats, "damp(x, 0.5)")
    assert sites.message.startswith(
        "`damp` is jitted with static_argnums=(1,), and its static argument 1 (`rate`) gets 3 different "
        f"float constants in this file (0.5 here, 0.25 at line {sites.span.start_line + 1}, 0.125 at line "
        f"{sites.span.start_line + 2}): jit compiles `damp` once per distinct static value.")
    assert "(compared at rate=0.5, 0.25, 0.125)" in sites.message


def doc_blocks(section: str) -> list[str]:
    """The python blocks of a section of rules/JX203.md (the second ones are about static floats)."""
    text = (Path(__file__).resolve().parents[1] / "rules" / "JX203.md").read_text(encoding="utf-8")
    body = text.split(f"\n## {section}\n", 1)[1].split("\n## ", 1)[0]
    return re.findall(r"^```python\n(.*?)^```$", body, flags=re.MULTILINE | re.DOTALL)


@pytest.fixture(scope="module")
def compile_events() -> list[str]:
    """XLA compilations from now on (JAX's public monitoring events, 0.4.35 and 0.10.2 alike)."""
    import jax

    events: list[str] = []
    jax.monitoring.register_event_duration_secs_listener(
        lambda event, seconds, **_: events.append(event)
        if event == "/jax/core/compile/backend_compile_duration" else None)
    return events


def load(path: Path):
    spec = importlib.util.spec_from_file_location(f"jx203_{path.stem}", path)
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def test_static_float_doc_example_compiles_once_per_value(tmp_path: Path, compile_events: list[str]) -> None:
    """The harm itself: the doc's Example compiles once per learning rate, Use instead once."""
    import jax.numpy as jnp
    import numpy as np

    static_path = write(tmp_path, "static_lr", doc_blocks("Example")[1])
    traced_path = write(tmp_path, "traced_lr", doc_blocks("Use instead")[1])
    [finding] = check([str(static_path)], select_rules(["JX203"], None)).findings
    assert "static argument `lr` gets a float that changes" in finding.message
    assert "so making it traced changes no operation" in finding.message
    assert check([str(traced_path)], select_rules(["JX203"], None)).findings == []

    w, x = jnp.full((4, 4), 0.1, jnp.float32), jnp.ones((2, 4))  # not weakly typed, like the outputs
    counts, results = {}, {}
    for name, path in (("static", static_path), ("traced", traced_path)):
        module = load(path)
        compile_events.clear()
        results[name] = np.asarray(module.train(w, x, 6))
        counts[name] = len(compile_events)
    assert counts == {"static": 6, "traced": 1}
    np.testing.assert_allclose(results["static"], results["traced"], rtol=1e-6)


RECORDED_MODULE = """\
from functools import partial

import jax
import jax.numpy as jnp


@partial(jax.jit, static_argnums=1)
def step(x, lr):
    return x - lr * jnp.tanh(x)


@partial(jax.jit, static_argnames="temperature")
def sample(x, temperature):
    if temperature > 0:
        return x / temperature
    return x


@partial(jax.jit, static_argnums=1)
def scale(x, factor):
    return x * factor
"""

RECORDED_TESTS = """\
import jax.numpy as jnp
import pytest

from pkg.train import sample, scale, step


@pytest.mark.parametrize("lr", [0.1, 0.05, 0.025])
def test_step(lr):
    assert step(jnp.ones(3), lr).shape == (3,)


@pytest.mark.parametrize("temperature", [0.0, 1.0])
def test_sample(temperature):
    assert sample(jnp.ones(3), temperature).shape == (3,)


def test_scale():
    for n in (3, 4):
        assert scale(jnp.ones(n), 2.0).shape == (n,)
"""


def test_static_floats_recorded_from_the_tests(tmp_path: Path) -> None:
    """Several float values `jaxlint record` saw for a static parameter: direct evidence."""
    (tmp_path / "pyproject.toml").write_text("[tool.jaxlint]\n")
    (tmp_path / "pkg").mkdir()
    (tmp_path / "pkg" / "__init__.py").write_text("")
    (tmp_path / "pkg" / "train.py").write_text(RECORDED_MODULE)
    (tmp_path / "tests").mkdir()
    (tmp_path / "tests" / "test_train.py").write_text(RECORDED_TESTS)
    env = {k: v for k, v in os.environ.items() if k not in ("JAXLINT_RECORD", "PYTEST_ADDOPTS")}
    env["JAX_PLATFORMS"] = "cpu"
    done = subprocess.run([sys.executable, "-m", "jaxlint", "record", "--", sys.executable, "-m", "pytest",
                           "-q", "-p", "no:cacheprovider", "tests/"], cwd=tmp_path, env=env,
                          capture_output=True, text=True, timeout=600)
    assert done.returncode == 0, done.stdout + done.stderr

    result = check([str(tmp_path / "pkg" / "train.py")], select_rules(["JX203", "JX906"], None))
    assert result.skipped == [] and result.traced == 3
    [finding] = result.findings  # sample's temperature picks a code path; scale saw one value
    assert (finding.span.start_line, finding.span.start_col) == (8, 4)  # step's name
    assert finding.message.startswith(
        "`step` is jitted with static_argnums=(1,), and `jaxlint record` saw the tests pass 3 different "
        "floats for its static argument `lr` (0.1, 0.05, 0.025): jit compiles `step` once per distinct "
        "static value.")
    assert "(compared at lr=0.1, 0.05, 0.025)" in finding.message


def test_recorded_static_floats_found_through_a_config_elsewhere(tmp_path: Path) -> None:
    """`--config other/jaxlint.toml`: the signatures recorded next to that file are the run's, as
    they are for tracing, not those next to the nearest configuration file or in the cwd."""
    (tmp_path / "other").mkdir()
    (tmp_path / "other" / "jaxlint.toml").write_text("[rules.JX202]\nmin-equations = 300\n")
    (tmp_path / "pkg").mkdir()
    (tmp_path / "pkg" / "__init__.py").write_text("")
    (tmp_path / "pkg" / "train.py").write_text(RECORDED_MODULE)
    (tmp_path / "tests").mkdir()
    (tmp_path / "tests" / "test_train.py").write_text(RECORDED_TESTS)
    env = {k: v for k, v in os.environ.items() if k not in ("JAXLINT_RECORD", "PYTEST_ADDOPTS")}
    env["JAX_PLATFORMS"] = "cpu"
    # `record` reads the configuration found from its first path: other/jaxlint.toml, root other/.
    done = subprocess.run([sys.executable, "-m", "jaxlint", "record", "other", "pkg", "--", sys.executable,
                           "-m", "pytest", "-q", "-p", "no:cacheprovider", "tests/"], cwd=tmp_path, env=env,
                          capture_output=True, text=True, timeout=600)
    assert done.returncode == 0, done.stdout + done.stderr
    recorded = json.loads((tmp_path / "other" / ".jaxlint" / "signatures.json").read_text())
    assert "../pkg/train.py::step" in recorded["functions"], recorded
    assert not (tmp_path / ".jaxlint").exists()

    def jx203(*config: str) -> list[dict]:
        run = subprocess.run([sys.executable, "-m", "jaxlint", "check", *config, "--select", "JX203",
                              "--output-format", "json", "pkg/train.py"], cwd=tmp_path, env=env,
                             capture_output=True, text=True, timeout=600)
        assert run.returncode in (0, 1) and "Traceback" not in run.stderr, run.stderr
        return json.loads(run.stdout)

    [finding] = jx203("--config", "other/jaxlint.toml")
    assert finding["code"] == "JX203" and finding["location"]["row"] == 8, finding
    assert "`jaxlint record` saw the tests pass 3 different floats for its static argument `lr` " \
        "(0.1, 0.05, 0.025)" in finding["message"]
    # Without --config no configuration is found: the root is the cwd, where nothing was recorded.
    assert jx203() == []
