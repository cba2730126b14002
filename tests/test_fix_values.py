"""A safe fix is proven on values: the original and the fixed function run on the same generated
inputs (three seeds per traced signature) and must agree within their dtype's rounding. A fix
whose function jaxlint cannot run that way (not traced, or calling back into Python) is unsafe,
saying why. Real workers, real fixes, no mocks."""
from __future__ import annotations

import base64
from pathlib import Path

import numpy as np
import pytest
from helpers import check_in_process

from jaxlint.config.selection import select_rules
from jaxlint.engine.values import difference

# The loop changes the learning rate through a function that assigns a global: nothing in the
# loop's own source shows it, so JX203 offers its hoist; run, the hoisted lambda keeps the first
# iteration's rate and training gives other numbers.
GLOBAL_RATE = '''\
import jax
import jax.numpy as jnp

LR = 0.1


def set_lr(value):
    global LR
    LR = value


# jaxlint: args w=f32[3], x=f32[2,3]
def train(w, x):
    for step in range(3):
        set_lr(0.1 * 0.5 ** step)
        w = jax.jit(lambda w: w - LR * jnp.sum(x @ w))(w)  # changes
    return w


# jaxlint: args w=f32[3], x=f32[2,3]
def train_constant(w, x):
    for step in range(3):
        w = jax.jit(lambda w: w - 0.1 * jnp.sum(x @ w))(w)  # same
    return w


def untraced(w, x):
    for step in range(3):
        w = jax.jit(lambda w: w - 0.1 * jnp.sum(x @ w))(w)  # untraced
    return w
'''


def line_of(text: str, marker: str) -> int:
    return next(n for n, line in enumerate(text.splitlines(), 1) if line.endswith(f"# {marker}"))


def test_a_fix_that_changes_values_is_rejected_and_one_that_keeps_them_applied(tmp_path: Path) -> None:
    path = tmp_path / "rates.py"
    path.write_text(GLOBAL_RATE)
    # Without inference `untraced` stays untraced (with it, its guessed arguments would trace it).
    (tmp_path / "jaxlint.toml").write_text("infer-arguments = false\n")
    before = check_in_process([str(path)], select_rules(["JX203"], None))
    fixes = {f.span.start_line: f.fix for f in before.findings}
    # Offered as safe where the function is traced; the untraced one cannot be proven: unsafe.
    assert fixes[line_of(GLOBAL_RATE, "changes")].applicability == "safe"
    assert fixes[line_of(GLOBAL_RATE, "same")].applicability == "safe"
    untraced = fixes[line_of(GLOBAL_RATE, "untraced")]
    assert untraced.applicability == "unsafe"
    assert "(unsafe: no traced function runs this code, so its values cannot be compared" in untraced.message

    result = check_in_process([str(path)], select_rules(["JX203"], None), fix=True)
    [rejected] = result.fix_rejected
    assert rejected.span.start_line == line_of(GLOBAL_RATE, "changes")
    assert rejected.fix_rejected.startswith("values of `train` change on generated inputs (signature 1, seed 0): "
                                            "output 0 (float32[3]): largest difference")
    assert [f.span.start_line for f in result.fixed] == [line_of(GLOBAL_RATE, "same")]
    text = path.read_text()
    assert "w = jax.jit(lambda w: w - LR * jnp.sum(x @ w))(w)  # changes" in text  # left alone
    assert "jitted_" in text and "w = jax.jit(lambda w: w - 0.1 * jnp.sum(x @ w))(w)  # same" not in text
    # The report says why the remaining finding was not fixed.
    left = next(f for f in result.findings if f.span.start_line == line_of(text, "changes"))
    assert left.fix_rejected == rejected.fix_rejected


def test_unsafe_fixes_without_a_traced_function_are_applied_only_when_asked(tmp_path: Path) -> None:
    path = tmp_path / "rates.py"
    path.write_text(GLOBAL_RATE)
    result = check_in_process([str(path)], select_rules(["JX203"], None), fix=True, unsafe_fixes=True)
    assert sorted(f.span.start_line for f in result.fixed) == [line_of(GLOBAL_RATE, "same"),
                                                                line_of(GLOBAL_RATE, "untraced")]
    assert len(result.fix_rejected) == 1  # the value change is rejected, unsafe fixes or not


CALLBACK = '''\
import jax
import jax.numpy as jnp
from jax.experimental import io_callback


def blackbox(x, y):
    x = x + 1
    return x, x * y


def log(value):
    return value


# jaxlint: args x=f32[3], y=f32[4,3]
@jax.jit
def with_callback(x, y):
    x, y = jax.vmap(blackbox, in_axes=(None, 0))(x, y)
    io_callback(log, jax.ShapeDtypeStruct((3,), jnp.float32), x[0])
    return x[0], y


# jaxlint: args x=f32[3], y=f32[4,3]
@jax.jit
def with_print(x, y):
    x, y = jax.vmap(blackbox, in_axes=(None, 0))(x, y)
    jax.debug.print("{}", x[0])
    return x[0], y
'''


def test_a_function_that_calls_back_into_python_is_not_run_so_its_fix_is_unsafe(tmp_path: Path) -> None:
    path = tmp_path / "callbacks.py"
    path.write_text(CALLBACK)
    result = check_in_process([str(path)], select_rules(["JX101"], None))
    fixes = {f.target: f.fix for f in result.findings}
    assert fixes["with_callback"].applicability == "unsafe"
    assert "`with_callback` calls back into Python, so jaxlint does not run it" in fixes["with_callback"].message
    assert fixes["with_print"].applicability == "safe"  # a debug print only shows values
    fixed = check_in_process([str(path)], select_rules(["JX101"], None), fix=True)
    assert [f.target for f in fixed.fixed] == ["with_print"] and fixed.fix_rejected == []


def encoded(values: list, dtype: str = "float32", kind: str = "float64") -> dict:
    array = np.asarray(values, dtype=kind)
    return {"dtype": dtype, "shape": list(array.shape), "kind": kind,
            "data": base64.b64encode(array.tobytes()).decode("ascii")}


@pytest.mark.parametrize("old, new, same", [
    ([1.0, 2.0, 1000.0], [1.0 + 1e-6, 2.0, 1000.0 + 1e-3], True),  # reordered rounding
    ([1.0, 2.0], [1.0, 2.01], False),
    ([1.0, float("nan")], [1.0, float("nan")], True),
    ([1.0, float("nan")], [float("nan"), 1.0], False),
    ([float("inf"), 1.0], [float("-inf"), 1.0], False),
    ([0.0, 0.0], [0.0, 0.0], True),
])
def test_floats_compare_within_their_dtypes_rounding(old: list, new: list, same: bool) -> None:
    runs = lambda values: [[[encoded(values)]]]  # noqa: E731  one signature, one seed, one output
    assert (difference("f", runs(old), runs(new)) is None) == same


def test_integers_exactly_and_errors_prove_nothing() -> None:
    ints = lambda values: [[[encoded(values, "int32", "int64")]]]  # noqa: E731
    assert difference("f", ints([1, 2]), ints([1, 2])) is None
    assert "1 of 2 elements differ" in difference("f", ints([1, 2]), ints([1, 3]))
    error = [[{"error": "TypeError: bad"}] * 3]
    assert "raised on every generated input" in difference("f", error, error)
    assert "raised TypeError before the fix" in difference("f", error, [[[encoded([1.0])]] * 3])
    assert "could not be run" in difference("f", None, error)


def test_a_fix_overlapping_an_applied_one_is_left_for_the_next_run_not_rejected(tmp_path: Path) -> None:
    """Two fixes whose edits overlap cannot go in one pass: the second waits for the next run
    (as ruff's fix loop does), which is not a failed verification."""
    import dataclasses

    from jaxlint.engine.fixer import fix_files
    from jaxlint.engine.pool import FreshWorkers
    from jaxlint.model import Edit, Fix
    from jaxlint.report.summary import summary

    path = tmp_path / "founding.py"
    path.write_text((Path(__file__).resolve().parent.parent / "examples" / "founding.py").read_text())
    result = check_in_process([str(path)], select_rules(["JX101"], None))
    [finding] = result.findings
    edit = finding.fix.edits[-1]
    twin = dataclasses.replace(finding, fix=Fix("safe", "a second rewrite of the same text",
                                                (Edit(edit.span, edit.content + " "),)))
    result.files[0].findings.append(twin)
    fresh = FreshWorkers(timeout=60)
    try:
        fix_files(result, fresh, ["JX101"], write=False)
    finally:
        fresh.close()
    [deferred] = result.fix_deferred
    assert result.fixed == [finding] and result.fix_rejected == []
    assert deferred == dataclasses.replace(twin, fix_rejected=deferred.fix_rejected)
    assert deferred.fix_rejected.startswith("its edits overlap another fix's: run --fix again to apply it")
    # A Finding is frozen: the verdict is a new finding, in the twin's place among the file's.
    assert result.files[0].findings == [finding, deferred]
    assert "1 fix left for the next run (overlapping another)" in summary(result, "diff")
    assert "rejected by verification" not in summary(result, "diff")
