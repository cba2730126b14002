"""JX206 weak-type-recompile: what its case (tests/rules/JX206.py) cannot say. The premise on the
installed JAX (a Python float start compiles the step twice, a cast start once, a weak output
once); what the IR reads of a trace (weak flags, argument and result paths); the messages and
spans; the fixes written by real workers and what they leave to run (one compile); a fix whose
values change (a bf16 step) rejected by verification; and a strongly typed signature (a hint)
that keeps the rule quiet however the source starts the state."""
from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import jax
import jax.numpy as jnp
import pytest
from helpers import case_line, case_source, check_in_process, checked_case, fix_case_with_workers, write

from jaxlint.config.selection import select_rules
from jaxlint.ir.build import build_program
from jaxlint.model import Finding
from jaxlint.worker.argsources import ArgumentSet
from jaxlint.worker.trace import trace_function
from jaxlint.worker.values import _concrete

CASE = case_source("JX206").read_text(encoding="utf-8").splitlines()


def at(text: str) -> Finding:
    _, result = checked_case("JX206")
    line = case_line("JX206", text)
    [finding] = [f for f in result.findings if f.span.start_line == line]
    return finding


def compiles(start: str, body: str) -> int:
    """How many times a jitted step compiles over 3 calls ``s = step(s, x)`` from ``start``, in a
    fresh process (JAX's own count of traced and compiled entries, and the compile events)."""
    script = f"""
import jax, jax.numpy as jnp
events = []
jax.monitoring.register_event_duration_secs_listener(
    lambda event, seconds, **_: events.append(event) if event == "/jax/core/compile/backend_compile_duration" else None)
@jax.jit
def step(s, x):
    return {body}
x = jnp.ones(3)
s = {start}
events.clear()
for _ in range(3):
    s = step(s, x)
print(events.count("/jax/core/compile/backend_compile_duration"))
"""
    ran = subprocess.run([sys.executable, "-c", script], capture_output=True, text=True, timeout=300,
                         env={"JAX_PLATFORMS": "cpu", "PATH": "/usr/bin:/bin"})
    assert ran.returncode == 0, ran.stderr
    return int(ran.stdout.split()[-1])


@pytest.mark.slow
def test_the_premise_on_this_jax() -> None:
    assert compiles("0.0", "s * 0.9 + jnp.sum(x)") == 2  # weak in, strong out: compiled again
    assert compiles("jnp.float32(0.0)", "s * 0.9 + jnp.sum(x)") == 1  # the cast twin
    assert compiles("0.0", "s * 0.5") == 1  # weak in, weak out: the cache hits
    assert compiles("0", "s + jnp.sum(x)") == 2  # an int start that becomes float32


def test_the_ir_reads_weak_inputs_and_strong_outputs_by_path() -> None:
    weak = jax.ShapeDtypeStruct((), jnp.float32, weak_type=True)
    row = jax.ShapeDtypeStruct((3,), jnp.float32)

    @jax.jit
    def step(state, x):
        value, last = state
        return (value + jnp.sum(x), last), x * 2.0

    program = build_program(trace_function(step, ArgumentSet("test", ((weak, row),), {"x": row})))
    assert program.input_paths == ["state[0]", "state[1]", "x"]
    # `last` is returned as it came in: JAX 0.4.35's jit leaves it out of its own result paths.
    assert program.output_paths in (["[0][0]", "[0][1]", "[1]"], ["[0][0]", None, "[1]"])
    assert [v.weak for v in program.top.inputs] == [True, False, False]
    assert [v.weak for v in program.top.outputs] == [False, False, False]
    # A plain function (no jit equation) has no argument names to read: the rule stays quiet.
    plain = build_program(trace_function(lambda s: s * 2.0, ArgumentSet("test", (weak,), {})))
    assert plain.input_paths is None
    assert plain.top.outputs[0].weak


def test_messages_and_spans() -> None:
    finding = at("total = step(total, x)")
    line = CASE[finding.span.start_line - 1]
    assert line[finding.span.start_col:finding.span.end_col] == "step(total, x)"
    assert finding.message.startswith(
        "`step` is called in a `for` loop with its output fed back as `total`, which starts as the Python float "
        "`0.0`: jit traces it weakly typed (float32) on the first call, `step` returns it strongly typed, so the "
        "second call traces and compiles `step` again. Cost: one extra compile (")
    assert "not one per step; the first two calls run different executables." in finding.message
    assert finding.message.endswith("Start `total` as `jnp.float32(0.0)`, the dtype `step` returns.")
    assert finding.fix is not None and finding.fix.applicability == "safe"
    both = at("params, opt_state = train_step(")
    assert "(so does `opt_state`)" in both.message
    assert both.fix is not None and [e.content for e in both.fix.edits] == ["jnp.float32(1.0)", "jnp.int32(0)"]
    assert "Start `params` as `jnp.float32(1.0)` and `opt_state` as `jnp.int32(0)`, the dtypes" in both.message
    leaf = at("state = carry_step(state, x)")
    assert "fed back as `state[0]`" in leaf.message and [e.content for e in leaf.fix.edits] == ["jnp.float32(0.0)"]
    counted = at("count = count_step(count, rows[i])")
    assert "a `while` loop" in counted.message and "the Python int `0`" in counted.message
    assert "returns it strongly typed and as float32" in counted.message
    assert counted.fix is not None and counted.fix.applicability == "display-only"
    keyword = at("total = accumulate(total, x=x)")
    assert "`-1.0`" in keyword.message and [e.content for e in keyword.fix.edits] == ["jnp.float32(-1.0)"]


def test_fixes_are_written_by_workers_and_leave_one_compile(tmp_path: Path) -> None:
    result = fix_case_with_workers("JX206", tmp_path)
    assert result.fix_rejected == []
    assert sorted(f.span.start_line for f in result.fixed) == sorted(
        case_line("JX206", text) for text in ("total = step(total, x)", "params, opt_state = train_step(",
                                              "state = carry_step(state, x)", "loss = epoch_step(loss, x)",
                                              "total = accumulate(total, x=x)"))
    # The display-only cast of the int start that becomes float32 is left.
    assert [(f.code, f.span.start_line) for f in result.findings] == [
        ("JX206", case_line("JX206", "count = count_step(count, rows[i])"))]
    fixed = (tmp_path / "JX206.py").read_text(encoding="utf-8")
    for before, after in (("total = 0.0\nfor x in rows:\n    total = step(", "total = jnp.float32(0.0)\n"),
                          ("params, opt_state = 1.0, 0\n", "params, opt_state = jnp.float32(1.0), jnp.int32(0)\n"),
                          ("state = (0.0, rows[0])\n", "state = (jnp.float32(0.0), rows[0])\n"),
                          ("    loss = 0.0  # reset", "    loss = jnp.float32(0.0)  # reset"),
                          ("    total = -1.0\n", "    total = jnp.float32(-1.0)\n")):
        assert before in "\n".join(CASE) + "\n" and after in fixed
    # The fixed module, run: each fixed step compiled once (the int start that becomes float32 twice).
    steps = "step, train_step, carry_step, epoch_step, accumulate, count_step"
    probe = fixed + f"\nprint([f._cache_size() for f in ({steps})])\n"
    write(tmp_path, "probe", probe)
    ran = subprocess.run([sys.executable, "probe.py"], cwd=tmp_path, capture_output=True, text=True, timeout=300,
                         env={"JAX_PLATFORMS": "cpu", "PATH": "/usr/bin:/bin"})
    assert ran.returncode == 0, ran.stderr
    assert json.loads(ran.stdout.splitlines()[-1]) == [1, 1, 1, 1, 1, 2]


BF16 = '''import jax
import jax.numpy as jnp

w = jnp.linspace(0.1, 3.3, 64).astype(jnp.bfloat16)


@jax.jit
def step(s, w):
    return (s * 1.37 + jnp.sum(w * s)).astype(jnp.float32)


s = 0.5
for _ in range(3):
    s = step(s, w)
'''


def test_a_cast_that_changes_the_first_calls_values_is_not_applied(tmp_path: Path) -> None:
    """The weak start meets a bf16 array: computed in bf16; cast to float32, in float32. The
    fixer runs `step` with the Python scalar and with the cast array and sees the difference."""
    path = write(tmp_path, "model", BF16)
    (tmp_path / "pyproject.toml").write_text("[tool.jaxlint]\n", encoding="utf-8")
    result = check_in_process([str(path)], select_rules(["JX206"], None), fix=True)
    [rejected] = result.fix_rejected
    assert rejected.code == "JX206"
    assert rejected.fix_rejected.startswith("values of `step` change on generated inputs (signature 1, seed 0)")
    assert path.read_text(encoding="utf-8") == BF16


HINTED = '''import jax
import jax.numpy as jnp


# jaxlint: args s=f32[], x=f32[3]
@jax.jit
def step(s, x):
    return s * 0.9 + jnp.sum(x)


@jax.jit
def weak_step(s: float, x):
    return s * 0.9 + jnp.sum(x)


def train(xs):
    s = 0.0
    for x in xs:
        s = step(s, x)
    t = 0.0
    for x in xs:
        t = weak_step(t, x)
    return s, t
'''


def test_a_strongly_typed_signature_keeps_it_quiet(tmp_path: Path) -> None:
    """The loop is not run at import: the hint's f32[] is what jaxlint traced, strongly typed, and
    the rule does not guess that the literal reaches it weakly typed."""
    path = write(tmp_path, "train", HINTED)
    (tmp_path / "pyproject.toml").write_text("[tool.jaxlint]\n", encoding="utf-8")
    result = check_in_process([str(path)], select_rules(["JX206"], None))
    # weak_step has no hint: inferred arguments give its `float` parameter a weak f32[].
    line = HINTED.count("\n", 0, HINTED.index("t = weak_step")) + 1
    assert [(f.code, f.span.start_line) for f in result.findings] == [("JX206", line)]
    assert "seen with arguments jaxlint inferred" in result.findings[0].message
    assert result.findings[0].fix is not None and result.findings[0].fix.applicability == "unsafe"


def test_value_runs_pass_weak_scalars_as_python_scalars() -> None:
    weak = _concrete(jax.ShapeDtypeStruct((), jnp.float32, weak_type=True), 0, 0)
    strong = _concrete(jax.ShapeDtypeStruct((), jnp.float32), 0, 0)
    assert type(weak) is float and isinstance(strong, jax.Array)
    assert weak == float(strong)  # the same value, rounded to float32
    assert type(_concrete(jax.ShapeDtypeStruct((), jnp.int32, weak_type=True), 0, 0)) is int


EXAMPLES_MODULE = '''import jax
import jax.numpy as jnp


@jax.jit
def step(s, x):
    return s * 0.9 + jnp.sum(x)


def train(xs):
    s = 0.0
    for x in xs:
        s = step(s, x)
    return s
'''


def test_an_examples_file_passes_a_python_scalar_weakly_typed(tmp_path: Path) -> None:
    """`jaxlint.example(step, 0.0, x)` is traced as jit traces `step(0.0, x)`: a weakly typed f32[]
    input, not a constant; the loop is reported. The cast in `train` does not change what the
    examples file passes, so the values compared before and after are the same run twice: the fix
    is not applied, and says why."""
    path = write(tmp_path, "model", EXAMPLES_MODULE)
    write(tmp_path, "examples", "import jax.numpy as jnp\nimport jaxlint\nfrom model import step\n\n"
                                "jaxlint.example(step, 0.0, jnp.ones(3))\n")
    (tmp_path / "pyproject.toml").write_text('[tool.jaxlint]\nexamples = ["examples.py"]\n', encoding="utf-8")
    found = check_in_process([str(path)], select_rules(["JX206"], None))
    assert [(f.code, f.span.start_line) for f in found.findings] == [("JX206", 13)]
    result = check_in_process([str(path)], select_rules(["JX206"], None), fix=True)
    [rejected] = result.fix_rejected
    assert rejected.fix_rejected == ("the fix is outside `step` and leaves the arguments it is traced with as they "
                                     "were (f32[], f32[3]), so comparing its values proves nothing about the fix")
    assert path.read_text(encoding="utf-8") == EXAMPLES_MODULE


LOOP_ONLY_THE_TESTS_RUN = '''\
import jax
import jax.numpy as jnp


@jax.jit
def step(x):
    return x * jnp.float32(0.5) + 1.0


def train(n):
    x = 0.0
    for _ in range(n):
        x = step(x)  # expect JX206
    return x


def train_from_an_array(n):
    x = jnp.zeros(())
    for _ in range(n):
        x = step(x)  # a strongly typed start: one compile
    return x
'''

LOOP_TESTS = '''\
from pkg.loop import train, train_from_an_array


def test_train():
    assert float(train(3)) > 0


def test_train_from_an_array():
    assert float(train_from_an_array(3)) > 0
'''


@pytest.mark.slow
def test_the_plugin_and_check_after_it_report_a_loop_only_the_tests_run(tmp_path: Path) -> None:
    """The tests call ``train``, which feeds a Python float through the jitted step: the plugin's
    re-trace of the step's first call (weakly typed) names its input and output after the step's
    parameter and result, as JAX's jit does, so the rule follows ``x`` from the loop's start to
    the output; ``check`` after the run reports what the run stored. The loop that starts from
    an array stays quiet."""
    (tmp_path / "pyproject.toml").write_text("[tool.jaxlint]\nselect = [\"JX206\"]\n")
    (tmp_path / "pkg").mkdir()
    (tmp_path / "pkg" / "__init__.py").write_text("")
    write(tmp_path / "pkg", "loop", LOOP_ONLY_THE_TESTS_RUN)
    (tmp_path / "tests").mkdir()
    write(tmp_path / "tests", "test_loop", LOOP_TESTS)
    env = {k: v for k, v in os.environ.items()
           if k not in ("JAXLINT_RECORD", "PYTEST_ADDOPTS", "JAXLINT_OUTPUT_FORMAT", "JAXLINT_NO_CACHE",
                        "JAXLINT_CACHE_DIR", "PYTEST_XDIST_WORKER")}
    env["JAX_PLATFORMS"] = "cpu"
    line = next(n for n, text in enumerate(LOOP_ONLY_THE_TESTS_RUN.splitlines(), 1) if "expect JX206" in text)
    run = subprocess.run([sys.executable, "-m", "pytest", "-p", "no:cacheprovider", "-p", "no:xdist", "--jaxlint",
                          "--jaxlint-report", "report.json", "tests"], cwd=tmp_path, env=env,
                         capture_output=True, text=True, timeout=600)
    assert "2 passed" in run.stdout, run.stdout + run.stderr
    found = json.loads((tmp_path / "report.json").read_text())
    assert [(f["code"], f["location"]["row"]) for f in found] == [("JX206", line)], found
    assert "`x`, which starts as the Python float `0.0`" in found[0]["message"]
    checked = subprocess.run([sys.executable, "-m", "jaxlint", "check", "--output-format", "json", "pkg"],
                             cwd=tmp_path, env=env, capture_output=True, text=True, timeout=600)
    found = json.loads(checked.stdout)
    assert [(f["code"], f["location"]["row"]) for f in found] == [("JX206", line)], checked.stderr
