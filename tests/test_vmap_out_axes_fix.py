"""The JX101 fix builder on source alone: when rewriting ``x[k]`` -> ``x`` is provably safe.

The vmap record is built as the worker builds it (real pytree structures, the call's span in
UTF-8 byte columns as co_positions gives it); no module is imported or traced here.
"""
from __future__ import annotations

import pytest

jax = pytest.importorskip("jax")

from jaxlint.fixes.vmap_out_axes import build_fix  # noqa: E402
from jaxlint.ir import VmapRecord  # noqa: E402
from jaxlint.model import Span  # noqa: E402
from jaxlint.text import apply_edits, char_span  # noqa: E402

CALL = "jax.vmap(f, in_axes=(None, 0))(x, y)"


def record_for(source: str, call: str = CALL, output: object = (0, 0)) -> VmapRecord:
    """A record for the first ``call`` in ``source``: columns in bytes, as co_positions gives them."""
    line_number, line = next((n, text) for n, text in enumerate(source.splitlines(), 1) if call in text)
    start = len(line[:line.index(call)].encode("utf-8"))
    span = Span(line_number, start, line_number, start + len(call.encode("utf-8")))
    leaves, treedef = jax.tree_util.tree_flatten(output)
    paths = [jax.tree_util.keystr(p) for p, _ in jax.tree_util.tree_flatten_with_path(output)[0]]
    return VmapRecord("tag", "module.py", span, None, None, 0, {}, (), {}, treedef, paths, [0] * len(leaves))


def fixed(source: str, call: str = CALL, output: object = (0, 0), leaves: tuple[int, ...] = (0,)) -> str | None:
    fix = build_fix(source, record_for(source, call, output), list(leaves))
    return None if fix is None else apply_edits(source, list(fix.edits))


def test_uses_after_a_rebinding_are_left_alone() -> None:
    source = f"def g(x, y):\n    a, b = {CALL}\n    c = a[0]\n    a = b\n    return c, a[0]\n"
    assert fixed(source) == (
        "def g(x, y):\n"
        "    a, b = jax.vmap(f, in_axes=(None, 0), out_axes=(None, 0))(x, y)\n"
        "    c = a\n    a = b\n    return c, a[0]\n")


@pytest.mark.parametrize("body", [
    "    a = a[0] + 1\n    return a, b\n",  # rebinding that reads the name
    "    z = (a := b)\n    return a[0], z\n",  # walrus: a conditional-looking rebinding
    "    r = a[0]\n    for a in []:\n        pass\n    return a[0], r\n",  # a loop may not rebind
    "    import a\n    return a[0], b\n",  # bound without a Name node
    "    a[0] = 1\n    return a[0], b\n",  # item assignment is not a row read
    "    first = lambda: a[0]\n    return first(), b\n",  # closure
    "    return [a[0] for _ in range(2)], b\n",  # comprehension
    "    return a[0] + a.sum(), b\n",  # used whole too
    "    return a[i], b\n",  # not a constant index
    "    return a[0:1], b\n",  # a slice keeps the axis
])
def test_unsafe_uses_give_no_fix(body: str) -> None:
    assert fixed(f"def g(x, y, i):\n    a, b = {CALL}\n{body}") is None


@pytest.mark.parametrize("source", [
    f"def g(x, y):\n    for i in range(2):\n        a, b = {CALL}\n    return a[0], b\n",
    f"def g(x, y):\n    global a\n    a, b = {CALL}\n    return a[0], b\n",
    f"def g(x, y, c):\n    a = 0\n    if c:\n        a, b = {CALL}\n    return a[0], b\n",
    f"def g(x, y):\n    *a, b = {CALL}\n    return a[0], b\n",
    "def g(x, y, **kw):\n    a, b = jax.vmap(f, **kw)(x, y)\n    return a[0], b\n",
    "def g(x, y):\n    v = jax.vmap(f, in_axes=(None, 0))\n    a, b = v(x, y)\n    return a[0], b\n",
])
def test_unsafe_bindings_give_no_fix(source: str) -> None:
    call = next(c for c in ("jax.vmap(f, **kw)(x, y)", "v(x, y)", CALL) if c in source)
    assert fixed(source, call) is None


def test_uses_inside_the_same_block_are_rewritten() -> None:
    source = f"def g(x, y, c):\n    if c:\n        a, b = {CALL}\n        if b.any():\n            return a[1]\n        return a[-1].T, b\n    return 0\n"
    assert fixed(source) == (
        "def g(x, y, c):\n    if c:\n"
        "        a, b = jax.vmap(f, in_axes=(None, 0), out_axes=(None, 0))(x, y)\n"
        "        if b.any():\n            return a\n        return a.T, b\n    return 0\n")


@pytest.mark.parametrize("call, expected", [
    ("jax.vmap(f, in_axes=(None, 0),)(x, y)", "jax.vmap(f, in_axes=(None, 0), out_axes=(None, 0),)(x, y)"),
    ("jax.vmap(f, (None, 0), 0)(x, y)", "jax.vmap(f, (None, 0), (None, 0))(x, y)"),
    ("jax.vmap(f, out_axes=(0), in_axes=(None, 0))(x, y)", "jax.vmap(f, out_axes=((None, 0)), in_axes=(None, 0))(x, y)"),
])
def test_out_axes_edit_forms(call: str, expected: str) -> None:
    source = f"def g(x, y):\n    a, b = {call}\n    return a[0], b\n"
    assert fixed(source, call) == f"def g(x, y):\n    a, b = {expected}\n    return a, b\n"


def test_nested_output_reached_through_tuple_targets_and_subscripts() -> None:
    output = ((0, {"k": 0, "m": 0}), 0)
    call = "jax.vmap(f)(x)"
    source = f"def g(x):\n    (p, q), r = {call}\n    return q['k'][2], q['m'], p, r\n"
    assert fixed(source, call, output, leaves=(1,)) == (
        "def g(x):\n    (p, q), r = jax.vmap(f, out_axes=((0, {'k': None, 'm': 0}), 0))(x)\n"
        "    return q['k'], q['m'], p, r\n")


def test_non_ascii_columns() -> None:
    source = f"def g(x, y):\n    s = 'é€'; a, b = {CALL}\n    return a[0], b  # ü\n"
    record = record_for(source)
    assert record.span.start_col == len("    s = 'é€'; a, b = ".encode("utf-8"))
    assert char_span(source, record.span) == Span(2, len("    s = 'é€'; a, b = "), 2, len("    s = 'é€'; a, b = " + CALL))
    assert fixed(source) == (
        "def g(x, y):\n    s = 'é€'; a, b = jax.vmap(f, in_axes=(None, 0), out_axes=(None, 0))(x, y)\n"
        "    return a, b  # ü\n")
