"""JX502 dtype-widening and JX503 constant-out-of-bounds-index on real jaxprs, end to end.

Each module is written to a temporary folder and checked once, in the test process
(helpers.check_in_process: the worker's analysis without a worker process); the tests then assert
on that one result. The x64 module enables ``jax_enable_x64`` at import: it is checked on its own;
the analysis puts JAX's configuration back afterwards, as the worker does between modules
(test_worker_isolation.py checks that in real workers).
"""
from __future__ import annotations

from pathlib import Path

import pytest
from helpers import assert_analyzed, check_in_process, write

from jaxlint.config.selection import select_rules
from jaxlint.engine.results import CheckResult
from jaxlint.model import Finding

WIDENING = '''\
import jax
import jax.numpy as jnp
import numpy as np

W = np.ones(8, np.float32)


@jax.jit
def plus_ones(x):
    return x + np.ones(8)


@jax.jit
def times_numpy_scalar(h):
    return h * np.float32(2)


@jax.jit
def constant_first(x):
    return np.float32(2) * x


@jax.jit
def mapped(m):
    return jax.vmap(lambda r: r - np.ones(8, np.float32))(m)


@jax.jit
def global_weight(x):
    y = x * W
    return y


@jax.jit
def q_python_scalar(x):
    return x * 2.0 + 1


@jax.jit
def q_explicit_cast(x):
    return x.astype(jnp.float32) + np.ones(8, np.float32)


@jax.jit
def q_same_dtype(x):
    return x + np.ones(8, jnp.bfloat16) + np.ones(8).astype(x.dtype)


@jax.jit
def q_argument(x, y):
    return x + y


@jax.jit
def q_jnp_array(x):
    return x + jnp.ones(8, jnp.float32)


@jax.jit
def q_comparison(x):
    return x > np.float32(0)


@jax.jit
def q_f32_without_x64(y):
    return y * np.float64(2) + np.ones(8)


@jax.jit
def q_integer(i):
    return i + np.int32(3)


b = jnp.ones(8, jnp.bfloat16)
for fn in (plus_ones, constant_first, global_weight, q_python_scalar, q_explicit_cast, q_same_dtype,
           q_jnp_array, q_comparison):
    fn(b)
times_numpy_scalar(jnp.ones(8, jnp.float16))
mapped(jnp.ones((3, 8), jnp.bfloat16))
q_argument(b, jnp.ones(8, jnp.float32))
q_f32_without_x64(jnp.ones(8, jnp.float32))
q_integer(jnp.ones(8, jnp.int8))
'''

X64 = '''\
import jax
import jax.numpy as jnp
import numpy as np

jax.config.update("jax_enable_x64", True)


@jax.jit
def double(y):
    return y * np.float64(2)


@jax.jit
def shift(y):
    return y + np.ones(8)


@jax.jit
def bf16_to_f64(x):
    return x + np.ones(8)


@jax.jit
def q_weak(y):
    return y * 2.0 - 1


@jax.jit
def q_matched(y):
    return y + np.ones(8, np.float32) + np.ones(8).astype(y.dtype)


y = jnp.ones(8, jnp.float32)
for fn in (double, shift, q_weak, q_matched):
    fn(y)
bf16_to_f64(jnp.ones(8, jnp.bfloat16))
'''

BOUNDS = '''\
import jax
import jax.numpy as jnp
import numpy as np
from jax import lax


@jax.jit
def past_end(x):
    return x[7]


@jax.jit
def before_start(x):
    return x[-7]


@jax.jit
def numpy_int(x):
    return x[np.int32(7)]


@jax.jit
def jnp_array(x):
    return x[jnp.array(7)]


@jax.jit
def set_dropped(x):
    return x.at[9].set(1.0)


@jax.jit
def add_dropped(x):
    return x.at[9].add(1.0)


@jax.jit
def set_negative(x):
    return x.at[-7].set(1.0)


@jax.jit
def window(x):
    return lax.dynamic_slice(x, (4,), (3,))


@jax.jit
def update(x):
    return lax.dynamic_update_slice(x, jnp.ones(2), (4,))


@jax.jit
def matrix(m):
    return m[1, 7]


@jax.jit
def get_default(x):
    return x.at[9].get()


@jax.jit
def differentiated(x):
    return jax.grad(lambda v: v[7] * 2.0)(x)


x = jnp.ones(5)
for fn in (past_end, before_start, numpy_int, jnp_array, set_dropped, add_dropped, set_negative,
           window, update, get_default, differentiated):
    fn(x)
matrix(jnp.ones((5, 3)))
'''

BOUNDS_QUIET = '''\
import jax
import jax.numpy as jnp
import numpy as np
from jax import lax


@jax.jit
def in_bounds(x, m):
    return (x[4] + x[-5] + x.at[4].set(1.0).sum() + x.at[-5].set(2.0).sum() + m[4, 2]
            + lax.dynamic_slice(x, (2,), (3,)).sum() + x[np.int32(3)] + x.at[4].get())


@jax.jit
def traced(x, i):
    return x[i] + x.at[i].set(1.0).sum()


@jax.jit
def take_fill(x):
    return jnp.take(x, 7)


@jax.jit
def explicit_mode(x):
    return x.at[9].set(1.0, mode="drop").sum() + x.at[9].get(mode="clip")


@jax.jit
def empty_slice(x):
    return x[7:9]


@jax.jit
def closed_over_indices(x):
    return x[np.array([1, 7])]


x = jnp.ones(5)
in_bounds(x, jnp.ones((5, 3)))
traced(x, 2)
for fn in (take_fill, explicit_mode, empty_slice, closed_over_indices):
    fn(x)
'''


def run(path: Path) -> CheckResult:
    return check_in_process([str(path)], select_rules(None, None))


def by_target(findings: list[Finding], code: str) -> dict[str, Finding]:
    found: dict[str, Finding] = {}
    for finding in findings:
        if finding.code != code:
            continue
        assert finding.target not in found, f"two findings for {finding.target}"
        found[finding.target] = finding
    return found


def position(text: str, snippet: str) -> tuple[int, int]:
    index = text.index(snippet)
    return text.count("\n", 0, index) + 1, index - (text.rfind("\n", 0, index) + 1)


@pytest.fixture(scope="module")
def widening(tmp_path_factory: pytest.TempPathFactory) -> CheckResult:
    return run(write(tmp_path_factory.mktemp("jx502"), "jx502_widening", WIDENING))


def test_widening_reported_by_numpy_constants_only(widening: CheckResult) -> None:
    assert_analyzed(widening, 13)
    found = by_target(widening.findings, "JX502")
    assert set(found) == {"plus_ones", "times_numpy_scalar", "constant_first", "mapped", "global_weight"}
    finding = found["plus_ones"]
    line, col = position(WIDENING, "x + np.ones(8)")
    assert (finding.span.start_line, finding.span.start_col, finding.span.end_col) == \
        (line, col, col + len("x + np.ones(8)"))
    assert finding.severity == "warning"
    assert finding.message.startswith("`add` widens bf16[8] to f32: its other operand is a strongly typed "
                                      "f32 constant (array of shape (8,))")
    assert "2x the bytes (16 -> 32 bytes)" in finding.message
    assert "`mul` widens f16[8] to f32" in found["times_numpy_scalar"].message
    assert "(scalar)" in found["times_numpy_scalar"].message
    assert "the result f32[3,8]" in found["mapped"].message


def test_widening_fix_is_display_only_cast(widening: CheckResult) -> None:
    found = by_target(widening.findings, "JX502")
    fix = found["plus_ones"].fix
    assert fix.applicability == "display-only"
    [edit] = fix.edits
    line, col = position(WIDENING, "np.ones(8)\n")
    assert (edit.span.start_line, edit.span.start_col, edit.span.end_col) == (line, col, col + len("np.ones(8)"))
    assert edit.content == "np.ones(8).astype(x.dtype)"
    assert found["constant_first"].fix.edits[0].content == "np.float32(2).astype(x.dtype)"
    assert found["global_weight"].fix.edits[0].content == "W.astype(x.dtype)"


def test_widening_under_x64(tmp_path: Path) -> None:
    result = run(write(tmp_path, "jx502_x64", X64))
    assert_analyzed(result, 5)
    found = by_target(result.findings, "JX502")
    assert set(found) == {"double", "shift", "bf16_to_f64"}
    assert found["double"].message.startswith("`mul` widens f32[8] to f64: its other operand is a strongly "
                                              "typed f64 constant (scalar)")
    assert "2x the bytes (32 -> 64 bytes)" in found["shift"].message
    assert "4x the bytes (16 -> 64 bytes)" in found["bf16_to_f64"].message


@pytest.fixture(scope="module")
def bounds(tmp_path_factory: pytest.TempPathFactory) -> CheckResult:
    return run(write(tmp_path_factory.mktemp("jx503"), "jx503_bounds", BOUNDS))


def test_out_of_bounds_constant_indices(bounds: CheckResult) -> None:
    assert_analyzed(bounds, 12)
    found = by_target(bounds.findings, "JX503")
    assert set(found) == {"past_end", "before_start", "numpy_int", "jnp_array", "set_dropped", "add_dropped",
                          "set_negative", "window", "update", "matrix", "get_default", "differentiated"}
    assert all(f.severity == "error" and f.fix is None for f in found.values())
    finding = found["past_end"]
    line, col = position(BOUNDS, "x[7]")
    assert (finding.span.start_line, finding.span.start_col, finding.span.end_col) == (line, col, col + 4)
    # The lowering differs by version (gather on JAX 0.4, dynamic_slice on recent JAX).
    assert finding.message.startswith("constant index 7 is out of bounds for axis 0 of length 5 (shape (5,)): "
                                      "JAX does not raise;")
    assert finding.message.endswith("clamps the index and silently reads position 4 instead.")
    assert "constant index -7 is out of bounds" in found["before_start"].message
    assert "reads position 0 instead" in found["before_start"].message
    assert found["set_dropped"].message == (
        "constant index 9 is out of bounds for axis 0 of length 5 (shape (5,)): JAX does not raise; the "
        "`scatter` silently drops the update and returns the array unchanged there.")
    assert "`scatter-add` silently drops" in found["add_dropped"].message
    assert "constant index -7 is out of bounds" in found["set_negative"].message
    assert found["window"].message == (
        "constant start 4 of a size-3 window is out of bounds for axis 0 of length 5 (shape (5,)): JAX does "
        "not raise; `dynamic_slice` clamps the start and silently reads positions 2..4 instead.")
    assert "silently writes positions 3..4 instead" in found["update"].message
    assert "axis 1 of length 3 (shape (5, 3))" in found["matrix"].message
    assert "reads position 2 instead" in found["matrix"].message


def test_in_bounds_traced_and_deliberate_indices_are_quiet(tmp_path: Path) -> None:
    result = run(write(tmp_path, "jx503_quiet", BOUNDS_QUIET))
    assert_analyzed(result, 6)
    assert [f.message for f in result.findings if f.code in ("JX502", "JX503")] == []


SYMBOLIC = '''\
import jax
import jax.numpy as jnp
import numpy as np


# jaxlint: args x=f32[n]
@jax.jit
def symbolic_axis(x):
    return x[7] + x.at[9].set(1.0).sum() + (x.astype(jnp.bfloat16) + np.float32(2)).sum()


# jaxlint: args x=f32[n, 3]
@jax.jit
def static_axis(x):
    return x[:, 7]
'''


def test_symbolic_sizes(tmp_path: Path) -> None:
    try:
        from jax import export  # noqa: F401
    except ImportError:
        pytest.skip("jax.export cannot be imported here (JAX 0.4.x without absl-py)")
    result = run(write(tmp_path, "jx502_jx503_symbolic", SYMBOLIC))
    assert_analyzed(result, 2)
    # An index on a symbolic axis may be in bounds: quiet; the static axis of the same array is not.
    [bounds] = by_target(result.findings, "JX503").values()
    assert bounds.target == "static_axis" and "axis 1 of length 3 (shape (n, 3))" in bounds.message
    [widening] = by_target(result.findings, "JX502").values()
    assert widening.target == "symbolic_axis"
    assert "`add` widens bf16[n] to f32" in widening.message and "2x the bytes," in widening.message
