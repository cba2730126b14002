"""JX507 int32-overflow: what its case file cannot say. The messages give the value reached, the
operands and the wrapped value; the spans cover the operation; and what the rule claims is checked
on the case module itself: each reported function really returns the wrapped value, each near
miss the exact one."""
from __future__ import annotations

import importlib.util
from types import ModuleType

import jax.numpy as jnp
import numpy as np
import pytest
from helpers import case_line, case_source, checked_case

from jaxlint.model import Finding


def load() -> ModuleType:
    spec = importlib.util.spec_from_file_location("case_JX507", case_source("JX507"))
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def findings() -> dict[int, Finding]:
    _, result = checked_case("JX507")
    return {f.span.start_line: f for f in result.findings if f.code == "JX507"}


def test_message_gives_the_value_reached_the_operands_and_the_wrapped_value() -> None:
    found = findings()[case_line("JX507", "return jnp.arange(100_000) * 100_000")]
    assert found.message.startswith(
        "`jnp.arange(100_000) * 100_000` reaches 9,999,900,000 (from operands 99,999 and 100,000) > "
        "2,147,483,647, the int32 maximum: int32 arithmetic wraps around without an error, and that value "
        "comes out as 1,409,965,408.")
    below = findings()[case_line("JX507", "acc - i * 100_000")]
    assert below.message.startswith("`i * 100_000` reaches 9,999,900,000")
    total = findings()[case_line("JX507", "jnp.sum(jnp.full((100_000,), 100_000")]
    assert "reaches 10,000,000,000 (a sum of 100,000 elements of 100,000)" in total.message
    assert "comes out as 1,410,065,408" in total.message


def test_span_is_the_operation() -> None:
    line = case_line("JX507", "lambda i, acc: acc + i * 100_000, total)")
    span = findings()[line].span
    text = case_source("JX507").read_text(encoding="utf-8").splitlines()[line - 1]
    assert text[span.start_col:span.end_col] == "i * 100_000" and span.end_line == line
    helper = findings()[case_line("JX507", "return rows * width")]
    assert (helper.span.start_col, helper.span.end_col) == (11, 23)


@pytest.mark.slow
def test_reported_functions_wrap_and_near_misses_do_not() -> None:
    case = load()
    exact = np.arange(100_000, dtype=np.int64) * 100_000
    assert int(case.scaled_positions()[-1]) == 1_409_965_408 != int(exact[-1])
    assert not np.array_equal(np.asarray(case.aliased(), np.int64), exact)
    assert int(np.asarray(case.helper_offsets())[-1]) < 0  # 49,999 * 50,000 wrapped negative
    assert not np.array_equal(np.asarray(case.batched(), np.int64), exact)
    assert not np.array_equal(np.asarray(case.scanned(0)[1], np.int64), exact)
    assert int(case.fori_index(0)) != int(exact.sum())
    assert int(case.constant_sum()) == 1_410_065_408
    assert np.array_equal(np.asarray(case.fits(), np.int64), np.arange(10_000, dtype=np.int64) * 100_000)
    assert int(case.fits_exactly()[-1]) == 2**31 - 1
    assert int(case.sum_fits()) == 1_000_000
    x = np.arange(60_000, dtype=np.int64)
    assert np.array_equal(np.asarray(case.correlated(), np.int64), x * x[::-1])
    assert int(case.small_square()[-1]) == 46_340**2
    # The branch the rule does not judge overflows when taken: quiet because it may not run.
    assert int(case.maybe_branch(True)[-1]) == 1_409_965_408 and int(case.maybe_branch(False)[-1]) == 0
    # Bounded only by its input: these inputs fit, others would not; nothing is proven.
    assert np.array_equal(np.asarray(case.unknown_input(jnp.arange(4))), np.arange(4) * 100_000)


def test_symbolic_sizes_are_unknown_not_an_error() -> None:
    # A scan of symbolic length may run zero times and a reshape of symbolic sizes is never
    # compared: no finding, and no InconclusiveDimensionOperation (a JX906 before).
    import jax
    import jax.export  # noqa: F401  (a submodule JAX 0.4.35 does not import itself)
    from jax import lax

    from jaxlint.ir.build import build_program
    from jaxlint.rules.jx507_int32_overflow.analysis import overflows

    (n,) = jax.export.symbolic_shape("n")

    def f(ys):
        xs = jnp.arange(100_000)
        return lax.scan(lambda c, y: (c + 1, y * 100_000), 0, ys.astype(jnp.int32)), ys.reshape(-1, 1), xs * 100_000

    found = overflows(build_program(jax.make_jaxpr(f)(jax.ShapeDtypeStruct((n,), jnp.float32))))
    assert [o.reached for o in found] == [9_999_900_000]  # only the concrete arange
