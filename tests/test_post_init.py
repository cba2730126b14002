"""A dataclass built for a method runs its ``__post_init__``, as its ``__init__`` would
(worker/built_instances.py): jaxopt's solvers derive ``self._fun`` there from ``self.fun``. One
that raises with the built values (a check of a value) leaves the instance as it was made."""
from __future__ import annotations

import os
import textwrap
from pathlib import Path

from helpers import check_in_process, expected_markers, write

from jaxlint.config import load_config
from jaxlint.rules import all_rules

SOLVERS = textwrap.dedent('''\
    import dataclasses
    from typing import Callable

    import jax
    import jax.numpy as jnp


    @dataclasses.dataclass(eq=False)
    class Descent:
        fun: Callable
        stepsize: float = 0.1

        def __post_init__(self):
            self._value_and_grad = jax.value_and_grad(self.fun)

        def update(self, params: jax.Array):
            value, grad = self._value_and_grad(params)
            return jnp.where(value > 0, jnp.log(value), 0.0) - self.stepsize * grad  # expect JX501


    @dataclasses.dataclass(eq=False)
    class Checked:
        scale: jax.Array

        def __post_init__(self):
            if self.scale <= 0:  # a value check: refuses abstract values
                raise ValueError("scale must be positive")

        def apply(self, x: jax.Array):
            return jnp.log(1 + self.scale * x)  # expect JX703
    ''')


def test_post_init_runs_where_it_can_and_is_left_out_where_it_raises(tmp_path: Path) -> None:
    path = write(tmp_path, "solvers", SOLVERS)
    result = check_in_process([str(path)], all_rules(), config=load_config([str(path)]))
    assert {(f.code, f.span.start_line) for f in result.findings} == expected_markers(SOLVERS)
    signatures = {t.target: t.signature for fa in result.files for t in fa.result.traced}
    assert signatures["Descent.update"] == "self=Descent(fun=<stand-in: its first argument>, stepsize=f32[]), params=f32[]"


LEAKY = textwrap.dedent('''\
    import dataclasses
    import os

    import jax
    import jax.numpy as jnp


    @dataclasses.dataclass
    class Model:
        w: jax.Array

        def __post_init__(self):
            os.environ["JAXLINT_TEST_POST_INIT"] = "set"
            print("post_init ran")

        def apply(self, x: jax.Array):
            return jnp.log(1 + self.w * x)  # expect JX703
    ''')


def test_post_init_runs_under_the_factories_safeguards(tmp_path: Path, capsys, monkeypatch) -> None:
    monkeypatch.delenv("JAXLINT_TEST_POST_INIT", raising=False)
    path = write(tmp_path, "leaky", LEAKY)
    result = check_in_process([str(path)], all_rules(), config=load_config([str(path)]))
    assert {(f.code, f.span.start_line) for f in result.findings} == expected_markers(LEAKY)
    assert "JAXLINT_TEST_POST_INIT" not in os.environ  # what it set is put back
    assert "post_init ran" not in capsys.readouterr().out  # what it printed is discarded
