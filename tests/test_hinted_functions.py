"""A hint makes any module-level function or method a target, jitted or not (library numerics
are plain functions); a hint that names nothing is JX905, never dropped in silence."""
from __future__ import annotations

import textwrap
from pathlib import Path

from helpers import check_in_process, expected_markers, write

from jaxlint.rules import all_rules

MODULE = textwrap.dedent('''\
    import jax.numpy as jnp


    # jaxlint: args x=f32[8]
    def safe_log(x):
        return jnp.where(x > 0, jnp.log(x), 0.0)  # expect JX501


    class Losses:
        # jaxlint: args x=f32[8]
        @staticmethod
        def soft(x):
            return jnp.where(x > 0, jnp.sqrt(x), 0.0)  # expect JX501


    def outer():
        # jaxlint: args x=f32[8]  # expect JX905
        def inner(x):
            return jnp.where(x > 0, jnp.log(x), 0.0)
        return inner


    # jaxlint: args x=f32[3]  # expect JX905

    def separated(x):
        return jnp.where(x > 0, jnp.log(x), 0.0)


    def quoted():
        """A hint in a docstring is text, not a hint:
        # jaxlint: args x=f32[3]
        """


    def unhinted(x):
        return jnp.where(x > 0, jnp.log(x), 0.0)
    ''')


def test_a_hint_makes_a_plain_function_a_target(tmp_path: Path) -> None:
    path = write(tmp_path, "numerics", MODULE)
    result = check_in_process([str(path)], all_rules())
    assert {(f.code, f.span.start_line) for f in result.findings} == expected_markers(MODULE)
    assert result.traced == 2 and result.skipped == []
