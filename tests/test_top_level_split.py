"""The one splitter of bracketed text at its top-level separators (jaxlint.text): hint comments
take it strictly (their errors point at a column), machine-written HLO leniently."""
from __future__ import annotations

import re

import jax
import jax.numpy as jnp
import pytest

from jaxlint.ir import hlo
from jaxlint.text import BracketError, outside_strings, split_outside_brackets, top_level_items


def test_items_split_only_outside_brackets_and_strings() -> None:
    assert top_level_items("a, f(b, c), [d, {e: 1}], 'x, y', \"(\" ,") == \
        ["a", "f(b, c)", "[d, {e: 1}]", "'x, y'", '"("']
    assert top_level_items("x: (1: 2): 3", ":") == ["x", "(1: 2)", "3"]
    assert top_level_items("'''a, ' b''', c") == ["'''a, ' b'''", "c"]
    assert split_outside_brackets("a,,b") == [(0, 1), (2, 2), (3, 4)]  # the ranges keep empty pieces
    assert split_outside_brackets("(a, b), c", start=1, end=5) == [(1, 2), (3, 5)]


@pytest.mark.parametrize("text, message, index", [
    ("a)", "')' closes nothing", 1),
    ("(a]", "']' does not match '(' at column 0", 2),
    ("[a, (b)", "'[' is never closed", 0),
    ("a, 'b", "unterminated string", 3),
])
def test_strict_errors_say_where(text: str, message: str, index: int) -> None:
    with pytest.raises(BracketError, match=re.escape(message)) as error:
        split_outside_brackets(text)
    assert error.value.index == index


def test_lenient_takes_machine_text_as_it_comes() -> None:
    assert top_level_items("a), b", strict=False) == ["a)", "b"]
    assert top_level_items("a, 'b, c", strict=False) == ["a", "'b, c"]
    assert top_level_items("it's, b", quotes="", strict=False) == ["it's", "b"]
    assert [ch for _, ch, depth in outside_strings('{"}", x}', quotes='"', strict=False) if depth == 0] == ["{", "}"]


def test_hlo_attributes_split_outside_brackets_and_quoted_names() -> None:
    """A scope name with a comma, quotes and a lone bracket stays inside its op_name."""
    def f(x):
        with jax.named_scope('odd, "name" ]'):
            y = jax.lax.slice(x, (0, 0), (2, 6), (1, 2)) * 2.0  # x[0:2, ::2] is a gather on JAX 0.4.35
        return jnp.sum(y, axis=(0, 1))

    module = hlo.parse(jax.jit(f).lower(jnp.ones((4, 6))).compile().as_text())
    found = {i.opcode: i for c in module.computations.values() for i in c.instructions}
    assert found["slice"].attrs["slice"] == "{[0:2:1], [0:6:2]}"
    assert found["slice"].metadata["op_name"].endswith('odd, "name" ]/slice')
    assert found["reduce"].attrs["dimensions"] == "{0,1}" and found["reduce"].attrs["to_apply"].startswith("%")
