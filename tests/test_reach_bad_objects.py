"""The argument sources read the user's objects (globals a body calls, annotation metadata, the
frames of a failing trace): one that raises when read gives no value, never a crash; and a value
the user declared (an annotation) is never replaced by a made-up one."""
from __future__ import annotations

import textwrap
from pathlib import Path

import pytest
from helpers import check_in_process, write

from jaxlint.config import load_config
from jaxlint.report.coverage import coverage
from jaxlint.rules import all_rules

RAISING = textwrap.dedent('''\
    from typing import Annotated

    import jax.numpy as jnp


    class Weird:
        def __getattr__(self, name):
            raise RuntimeError("no " + name)

        def __call__(self, fn, x):
            return fn(x)


    thing = Weird()


    def apply(fn, x):  # fn is passed on to a global whose attributes raise
        return thing(fn, x) + jnp.sin(x)


    def scale(options: Annotated[str, Weird()], x):  # metadata whose attributes raise
        return jnp.sin(x) * len(options)
    ''')

DECLARED = textwrap.dedent('''\
    import jax
    import jax.numpy as jnp
    from jaxtyping import Array, Float


    def energy(s):
        return jnp.sum(s.position ** 2)  # expect JX601


    @jax.jit
    def total(state: Float[Array, "n"], x: Float[Array, "n"]):
        return energy(state) * x
    ''')


def _check(tmp_path: Path, name: str, text: str):
    path = write(tmp_path, name, text)
    (tmp_path / "pyproject.toml").write_text("[tool.jaxlint]\n")
    return check_in_process([str(path)], all_rules(), config=load_config([str(path)]))


def test_user_objects_that_raise_when_read_give_no_value_and_no_crash(tmp_path: Path) -> None:
    result = _check(tmp_path, "raising", RAISING)
    assert all(fa.result is not None and fa.result.internal_error is None for fa in result.files)
    linted = {f.function: f.linted for f in coverage(result).functions}
    assert linted == {"apply": True, "scale": False}


def test_an_annotated_array_is_not_replaced_by_a_made_up_object(tmp_path: Path) -> None:
    pytest.importorskip("jaxtyping")
    result = _check(tmp_path, "declared", DECLARED)
    # The annotation says state is an array: reading state.position is the user's error, reported.
    assert [(f.code, f.span.start_line) for f in result.findings] == [("JX601", 7)]
    assert "total" not in {t.target for fa in result.files for t in fa.result.traced}
