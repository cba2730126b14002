"""JX203 recompilation-hazard, end to end: its messages and fixes, and the compiles it warns of.

Which lines it reports, with the near misses, is its case (tests/rules/JX203/: loops.py for
transforms applied in a loop, static_floats.py for a static argument fed changing floats), checked
by test_rule_cases.py; the message tests read the same run. Fixes are written and checked with
real workers here.
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
from helpers import case_line, case_source, checked_case, write

from jaxlint.config.selection import select_rules
from jaxlint.engine.check import check
from jaxlint.model import Finding

CASE = case_source("JX203")
LOOPS = (CASE / "loops.py").read_text(encoding="utf-8").splitlines()
STATIC_FLOATS = (CASE / "static_floats.py").read_text(encoding="utf-8")


def at(file: str, text: str) -> Finding:
    """The finding of the case (tests/rules/JX203/) on the first line of ``file`` holding ``text``."""
    _, result = checked_case("JX203")
    line = case_line("JX203", text, file)
    [finding] = [f for f in result.findings if f.path.endswith(file) and f.span.start_line == line]
    return finding


def test_loop_messages_and_fixes() -> None:
    moved = at("loops.py", "step = jax.jit")
    assert moved.severity == "warning" and "a lambda inside a `for` loop" in moved.message
    assert "traced and compiled again each iteration" in moved.message
    assert moved.fix is not None and moved.fix.applicability == "safe"
    line = LOOPS[moved.span.start_line - 1]
    assert line[moved.span.start_col:moved.span.end_col] == "jax.jit(lambda v: v * 2.0)"
    captured = at("loops.py", "J(lambda v: v + i)")
    assert "it uses `i`, set in the loop" in captured.message and captured.fix is None
    assert "functools.partial object" in at("loops.py", "functools.partial(scale").message
    assert "`inner`, a function defined in the loop body" in at("loops.py", "jax.jit(inner)").message
    decorated = at("loops.py", "@partial(jax.jit, static_argnums=())")
    assert decorated.message.startswith("`doubled` is decorated with jax.jit inside a `for` loop")
    assert "it uses `i`, set in the loop" in decorated.message and decorated.fix is None
    line = LOOPS[decorated.span.start_line - 1]
    assert line[decorated.span.start_col:decorated.span.end_col] == "partial(jax.jit, static_argnums=())"
    comprehension = at("loops.py", "for k in range(3)")
    assert "comprehension" in comprehension.message and comprehension.fix is None
    renamed = at("loops.py", "v / 2.0")
    assert "`while` loop" in renamed.message
    assert renamed.fix is not None and renamed.fix.applicability == "safe"
    assert [e.content for e in renamed.fix.edits][1] == f"jitted_{renamed.span.start_line}"


def test_the_advice_for_a_value_the_loop_sets_says_when_it_holds() -> None:
    """Passing a captured configuration as an argument raises (dynamax's list of output fields): the
    advice is unchecked, so it is given for arrays and numbers only."""
    numbers = at("loops.py", "jax.jit(lambda v: v * k)")
    assert ("it uses `k`, set in the loop: if it holds arrays or numbers, pass it as an argument instead "
            "(any other value is a configuration, which needs a compile of its own either way)") in numbers.message
    assert numbers.fix is None
    # A loop over configurations around a loop that repeats the compile: moved out of the inner
    # loop only, the configuration still read from the outer one.
    nested = at("loops.py", "x = jax.jit(lambda v: pick(v, fields))(x)  # expect")
    assert "it uses `fields`" in nested.message
    unread = at("loops.py", "jax.jit(lambda v: v - 1.0)")
    assert unread.fix is not None and unread.fix.applicability == "safe"


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


@pytest.mark.slow
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
import numpy as np


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


# jaxlint: args w=f32[3], x=f32[2,3]
def train_reads(w, x):
    lr = 0.1
    for step in range(3):
        w = jax.jit(lambda w: w - lr * jnp.sum(predict(w, x)))(w)  # reads
        print(step, len(x), x.sum(), jnp.mean(x), np.shape(x), x.at[0].set(lr))
    return w


def train_copyto(w, x):
    buf = np.zeros(3, np.float32)
    for step in range(3):
        np.copyto(buf, 0.5 ** step)
        w = jax.jit(lambda w: w - buf.sum() * predict(w, x).sum())(w)  # copyto
    return w
'''


def test_no_hoist_when_the_loop_changes_what_the_function_reads(tmp_path: Path) -> None:
    """Hoisted, the lambda is traced once and keeps the learning rate of the first iteration:
    the training gives other numbers. Each way a loop changes an object in place withholds the
    fix and says what to do; a value the loop leaves alone is still hoisted."""
    path = tmp_path / "mutating.py"
    path.write_text(MUTATING_LOOPS, encoding="utf-8")
    result = check([str(path)], select_rules(["JX203"], None))
    lines = MUTATING_LOOPS.splitlines()
    by_marker = {lines[f.span.start_line - 1].rsplit("# ", 1)[1]: f for f in result.findings}
    assert sorted(by_marker) == ["attribute", "constant", "copyto", "item", "method", "passed", "reads"]

    def line(text: str) -> int:
        return next(n for n, line in enumerate(lines, 1) if text in line)

    # Changed in place, as the source shows: said so, with the line that does it.
    for marker, name, how, changing in [("item", "hp", "sets `hp[0]`", "hp[0] = 0.1"),
                                        ("attribute", "opt", "sets `opt.lr`", "opt.lr = 0.1"),
                                        ("copyto", "buf", "calls `np.copyto()` on `buf`", "np.copyto(buf")]:
        finding = by_marker[marker]
        assert finding.fix is None, marker
        assert (f"it reads `{name}`, which the loop changes in place (line {line(changing)} {how}): pass the "
                "values it needs as arguments instead.") in finding.message, finding.message
    # A call jaxlint cannot see into may change it: said as possible, not as a fact.
    for marker, name, how, changing in [("method", "sched", "calls `sched.update()`", "sched.update(lr"),
                                        ("passed", "hp", "passes `hp` to `decay()`", "decay(hp, step)")]:
        finding = by_marker[marker]
        assert finding.fix is None, marker
        assert "changes in place" not in finding.message
        assert (f"it reads `{name}`, which the loop may change in place (line {line(changing)} {how}): if it "
                "does, pass the values it needs as arguments instead.") in finding.message, finding.message
    # Reading them (printing, reducing, JAX and NumPy functions, .at updates) changes nothing: no claim.
    for marker in ("constant", "reads"):
        finding = by_marker[marker]
        assert "in place" not in finding.message and "it reads" not in finding.message, finding.message
        assert finding.fix is not None and finding.fix.applicability == "safe", marker
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


@pytest.mark.slow
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


# ---------------------------------------------------------------------------------------------
# JX203's second half: a static argument fed float values that change (one compile per value)

def floats_at(text: str) -> Finding:
    return at("static_floats.py", text)


def test_static_float_in_a_loop_message() -> None:
    _, result = checked_case("JX203")
    floats = [f for f in result.findings if f.path.endswith("static_floats.py")]
    assert all(f.fix is None and f.severity == "warning" for f in floats)
    decayed = floats_at("0.1 * 0.99 ** i")
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
    updated, enumerated = [f for f in floats if "x = step(x, lr)" in
                           STATIC_FLOATS.splitlines()[f.span.start_line - 1]]
    assert "`for` loop (from `lr`)" in updated.message  # lr *= 0.9
    assert "(compared at lr=0.001, 0.01, 0.1)" in enumerated.message  # the list's values
    # decay computes 1.0 - scale in Python when scale is static: still the same operations.
    assert "compared at scale=0.5" in floats_at("scale=i / steps").message
    assert "static_argnames" in floats_at("scale=i / steps").message
    assert "this comprehension (from `k`)" in floats_at("float(k) / 4").message
    # temperature decides an `if`: reported (one compile per value), and the message says why
    # making it traced is not enough.
    control = floats_at("temperature=t)")
    assert "Tracing `sample` with `temperature` traced raises TracerBoolConversionError" in control.message
    assert "`while` loop (from `t`)" in floats_at("x = sample(x, t)").message
    # No hint and no record: nothing verified, nothing claimed.
    unverified = floats_at("unhinted(x, 1.0 / (i + 1))")
    assert unverified.message.endswith("the same dtype promotion as the constant).")


def test_static_float_constants_at_several_calls() -> None:
    sites = floats_at("damp(x, 0.5)")
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


@pytest.mark.slow
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


@pytest.mark.slow
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


# ---------------------------------------------------------------------------------------------
# A jit wrapper rebuilt every step: compiled once, but off jit's fast path (tests/rules/JX203/wrappers.py)

WRAPPERS = (CASE / "wrappers.py").read_text(encoding="utf-8").splitlines()


def test_wrapper_messages() -> None:
    rebuilt = at("wrappers.py", "jit(update)(x, 0.5)")
    assert rebuilt.message.startswith(
        "`jit(update)` is evaluated inside a `for` loop: `update` is defined outside it, so jit's caches "
        "still hit and nothing is traced or compiled again, but the jitted wrapper is a new object on "
        "every iteration and its call misses jit's C++ fast path (measured on a 2-core CPU: ")
    assert rebuilt.message.endswith("Create the jitted function once, before the loop.")
    line = WRAPPERS[rebuilt.span.start_line - 1]
    assert line[rebuilt.span.start_col:rebuilt.span.end_col] == "jit(update)"  # the wrapper, not its call
    assert "`jax.jit(update, ...)` is evaluated" in at("wrappers.py", "static_argnums=1").message
    assert "inside a `while` loop" in at("wrappers.py", "step = jax.jit(shift)").message
    assert "inside a comprehension" in at("wrappers.py", "for k in range(3)").message
    batched = at("wrappers.py", "jax.vmap(double)")
    assert batched.message.startswith("`jax.vmap(double)` of the jitted `double` is evaluated inside a `for` "
                                      "loop: vmap keeps no cache")
    assert "Create `jax.jit(jax.vmap(double, ...))` once, before the loop." in batched.message
    assert batched.fix is None  # jit around vmap is a change of the code, not a move
    grad = at("wrappers.py", "jax.grad(")
    assert grad.message.startswith("jax.jit is applied to the result of `jax.grad(lambda v: jnp.sum(v * v))` "
                                   "inside a `for` loop: a new function object on every iteration")
    assert grad.fix is None


def test_wrapper_fixes_hoist_the_jit_call() -> None:
    def edits(text: str) -> tuple[str, list[tuple[list[int], str]]]:
        fix = at("wrappers.py", text).fix
        assert fix is not None, text
        return fix.applicability, [(e.span.to_json(), e.content) for e in fix.edits]

    line = case_line("JX203", "jit(update)(x, 0.5)", "wrappers.py")
    # train is traced (its hint): the fix is verified by running it before and after, hence safe.
    assert edits("jit(update)(x, 0.5)") == ("safe", [
        ([line - 1, 0, line - 1, 0], f"    update_jit_{line} = jit(update)\n"),
        ([line, 12, line, 23], f"update_jit_{line}")])
    line = case_line("JX203", "static_argnums=1", "wrappers.py")
    assert edits("static_argnums=1")[1][0][1] == f"    update_jit_{line} = jax.jit(update, static_argnums=1)\n"
    line = case_line("JX203", "step = jax.jit(shift)", "wrappers.py")
    moved = "    " + WRAPPERS[line - 1].strip() + "\n"  # the statement moves, to the loop's indentation
    assert edits("step = jax.jit(shift)") == ("safe", [([line - 1, 0, line - 1, 0], moved),
                                                       ([line, 0, line + 1, 0], "")])
    # `scaled` is set by the outer loop: the wrapper moves before the inner loop only.
    line = case_line("JX203", "jax.jit(scaled)", "wrappers.py")
    hoisted = f"        scaled_jit_{line} = jax.jit(scaled)\n"
    assert edits("jax.jit(scaled)")[1][0] == ([line - 1, 0, line - 1, 0], hoisted)
    assert at("wrappers.py", "for k in range(3)").fix is None  # a comprehension has no place to move it to


CHANGED_FUNCTION = '''\
import jax
import jax.numpy as jnp


def shift(x):
    return x + 1.0


def register(f):
    return f


# jaxlint: args x=f32[3]
def changed(x):
    for i in range(2):
        shift.calls = i
        x = jax.jit(shift)(x)  # changed
    return x


# jaxlint: args x=f32[3]
def passed(x):
    for i in range(2):
        register(shift)
        x = jax.jit(shift)(x)  # passed
    return x


# jaxlint: args x=f32[3]
def reads(x):
    for i in range(2):
        print(shift.__name__, len(x), jnp.sum(x))
        x = jax.jit(shift)(x)  # reads
    return x
'''


def test_wrapper_fix_is_unsafe_when_the_loop_may_change_the_function(tmp_path: Path) -> None:
    """jit keys its cache on the function object: one the loop changes in place (or hands to a
    call jaxlint cannot see into) is not proven the same wrapper each step."""
    path = write(tmp_path, "changed", CHANGED_FUNCTION)
    result = check([str(path)], select_rules(["JX203"], None))
    lines = CHANGED_FUNCTION.splitlines()
    by_marker = {lines[f.span.start_line - 1].rsplit("# ", 1)[1]: f for f in result.findings}
    assert sorted(by_marker) == ["changed", "passed", "reads"]
    changed, passed = by_marker["changed"].fix, by_marker["passed"].fix
    assert changed is not None and changed.applicability == "unsafe"
    assert changed.message.endswith("(unsafe: the loop changes `shift` in place (line 16 sets `shift.calls`))")
    assert passed is not None and passed.applicability == "unsafe"
    assert passed.message.endswith("(unsafe: the loop may change `shift` in place (line 24 passes `shift` to "
                                   "`register()`))")
    reads = by_marker["reads"].fix
    assert reads is not None and reads.applicability == "safe", reads


WRAPPER_MODULE = '''\
import jax
import jax.numpy as jnp
from jax import jit


def update(state, _):
    w, m = state
    m = 0.9 * m + 0.1 * jnp.tanh(w)
    return (w - 0.1 * m, m), jnp.sum(m * m)


# jaxlint: args w=f32[4]
def train(w):
    state = (w, jnp.zeros_like(w))
    losses = []
    for i in range(3):
        state, loss = jit(update)(state, None)
        losses.append(loss)
    return state[0], jnp.stack(losses)
'''

WRAPPER_FIXED = WRAPPER_MODULE.replace(
    "    for i in range(3):\n        state, loss = jit(update)(state, None)",
    "    update_jit = jit(update)\n    for i in range(3):\n        state, loss = update_jit(state, None)")


@pytest.mark.slow
def test_wrapper_fix_is_verified_and_keeps_the_values(tmp_path: Path, compile_events: list[str]) -> None:
    """`--fix` writes the hoisted wrapper, verified by running train before and after (fixer.py);
    the fixed module returns the same values, and neither compiles again on a second run: the
    cost the finding names is the dispatch, not a trace."""
    import numpy as np

    path = write(tmp_path, "wrapper", WRAPPER_MODULE)
    fixed = check([str(path)], select_rules(["JX203"], None), fix=True)
    assert fixed.fix_rejected == [] and fixed.findings == []
    assert path.read_text(encoding="utf-8") == WRAPPER_FIXED != WRAPPER_MODULE
    original = write(tmp_path, "original", WRAPPER_MODULE)
    w = np.linspace(-1.0, 1.0, 4, dtype=np.float32)
    counts, results = [], []
    for module in (load(original), load(path)):
        results.append([np.asarray(a) for a in module.train(w)])
        compile_events.clear()
        module.train(w + 1.0)
        counts.append(len(compile_events))
    for before, after in zip(*results):
        np.testing.assert_array_equal(before, after)
    assert counts == [0, 0]


SVI_MODULE = '''\
import jax.numpy as jnp
from jax import jit


class SVI:
    def __init__(self, lr):
        self.lr = lr

    def update(self, state):
        return state - self.lr * jnp.tanh(state), jnp.sum(state ** 2)

    def run(self, state, num_steps):
        def body_fn(state, _):
            return self.update(state)

        losses = []
        for i in range(num_steps):
            state, loss = jit(body_fn)(state, None)
            losses.append(loss)
        return state, jnp.stack(losses)
'''

SVI_TESTS = '''\
import jax.numpy as jnp

from pkg.svi import SVI


def test_run():
    state, losses = SVI(0.1).run(jnp.ones(3), 4)
    assert losses.shape == (4,)
'''


@pytest.mark.slow
def test_wrapper_reported_by_the_test_run_and_by_check(tmp_path: Path) -> None:
    """numpyro 0.21.0's SVI.run in small: `pytest --jaxlint` (which lints body_fn, reached by the
    test) and `jaxlint check` with no configuration both report the rebuilt wrapper."""
    (tmp_path / "pkg").mkdir()
    (tmp_path / "pkg" / "__init__.py").write_text("")
    (tmp_path / "pkg" / "svi.py").write_text(SVI_MODULE)
    (tmp_path / "tests").mkdir()
    (tmp_path / "tests" / "test_svi.py").write_text(SVI_TESTS)
    env = {k: v for k, v in os.environ.items()
           if k not in ("JAXLINT_RECORD", "PYTEST_ADDOPTS", "JAXLINT_OUTPUT_FORMAT", "PYTEST_XDIST_WORKER")}
    env["JAX_PLATFORMS"] = "cpu"
    line = SVI_MODULE.splitlines().index("            state, loss = jit(body_fn)(state, None)") + 1
    run = subprocess.run([sys.executable, "-m", "pytest", "-p", "no:cacheprovider", "--jaxlint",
                          "--jaxlint-report", "report.json"], cwd=tmp_path, env=env, capture_output=True,
                         text=True, timeout=600)
    assert "1 passed" in run.stdout, run.stdout + run.stderr
    found = [(f["code"], f["location"]["row"]) for f in json.loads((tmp_path / "report.json").read_text())]
    assert found == [("JX203", line)], run.stdout
    checked = subprocess.run([sys.executable, "-m", "jaxlint", "check", "--output-format", "json", "pkg"],
                             cwd=tmp_path, env=env, capture_output=True, text=True, timeout=600)
    assert checked.returncode == 1, checked.stdout + checked.stderr
    findings = json.loads(checked.stdout)
    assert [(f["code"], f["location"]["row"]) for f in findings] == [("JX203", line)]
    assert "`jit(body_fn)` is evaluated inside a `for` loop" in findings[0]["message"]


def test_wrapper_doc_example_is_reported_and_fixed_into_use_instead(tmp_path: Path) -> None:
    """The page's third Example gives the wrapper finding with a safe fix whose edits give its
    third Use instead (what --fix writes; its verification is test_wrapper_fix_is_verified...)."""
    from jaxlint.text import apply_edits

    example, use_instead = doc_blocks("Example")[2], doc_blocks("Use instead")[2]
    [finding] = check([str(write(tmp_path, "example", example))], select_rules(["JX203"], None)).findings
    assert "`jax.jit(update)` is evaluated inside a `for` loop" in finding.message
    assert finding.fix is not None and finding.fix.applicability == "safe"
    assert apply_edits(example, list(finding.fix.edits)) == use_instead
    assert check([str(write(tmp_path, "use_instead", use_instead))], select_rules(["JX203"], None)).findings == []


NAMED_ARGUMENTS = '''\
import jax

INLINE = False


def add_one(v):
    return v + 1.0


# jaxlint: args x=f32[3]
def train(x):
    for _ in range(3):
        x = jax.jit(add_one, inline=INLINE)(x)
    for inline in (False, True):  # a wrapper per value: not reported
        x = jax.jit(add_one, inline=inline)(x)
    return x
'''


@pytest.mark.slow
def test_fix_hoists_a_jit_whose_arguments_are_plain_names(tmp_path: Path) -> None:
    # `in_shardings=rows` on a sharded program (tests/data/sharded/rest_auto.py): a name the loop
    # does not bind is the same value before it.
    path = tmp_path / "named.py"
    path.write_text(NAMED_ARGUMENTS, encoding="utf-8")
    fixed = check([str(path)], select_rules(["JX203"], None), fix=True)
    assert fixed.fix_rejected == [] and fixed.findings == []
    assert "    add_one_jit_13 = jax.jit(add_one, inline=INLINE)\n    for _ in range(3):\n        x = add_one_jit_13(x)\n" \
        in path.read_text(encoding="utf-8")
