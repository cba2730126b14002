"""Functions and closures whose parameters are annotated with a class jaxlint builds (issue 48):
traced with an instance built by the methods' rules (worker/argsources/built_parameters.py), its
fields abstract inputs of the rung's rank, shown in the signature; a class it cannot build leaves
the function counted as not linted, with why. One project, one check, in the test process.
"""
from __future__ import annotations

import json
import subprocess
import sys
import textwrap
from pathlib import Path

import pytest
from helpers import check_in_process, expected_markers, write

from jaxlint.config import load_config
from jaxlint.report.coverage import coverage
from jaxlint.rules import all_rules

MODULE = textwrap.dedent('''\
    from __future__ import annotations  # every annotation a string: resolved in this module

    import dataclasses
    from typing import Callable, NamedTuple, Optional

    import jax
    import jax.numpy as jnp


    class State(NamedTuple):
        position: jax.Array
        momentum: jax.Array


    @dataclasses.dataclass
    class Radial:
        r: jax.Array
        k: int = 2


    def energy(state: State):
        return jnp.where(state.position > 0, 1 / jnp.sqrt(state.position), 0.0) + state.momentum  # expect JX501


    def scaled(radial: Radial, x):
        return jnp.tanh(radial.r * x) * radial.k


    def maybe_kinetic(state: Optional[State]):
        return 0.5 * jnp.sum(state.momentum ** 2)


    def rows(state: State):
        n, d = state.position.shape  # rank 2: the lower rungs are never tried
        return jnp.sum(state.position, axis=1) / d


    def outer(state: State):
        def inner(p):  # runs in outer's trace: linted with it
            return jnp.exp(p)

        return jnp.sum(inner(state.position) * state.momentum)


    def make_kernel(step_size: float):
        def kernel(state: State, x):
            return jnp.cos(state.position * step_size + x)

        return kernel


    class Plain:  # no dataclass, NamedTuple or pytree class
        def __init__(self, fn):
            self.fn = fn


    @dataclasses.dataclass
    class WithFunction:
        fn: Callable


    def near_plain(o: Plain, x):  # read by a name that is not a constant: no made-up object (made_up.py)
        return jnp.sin(getattr(o, "f" + "n")(x))


    def near_function(w: WithFunction, x):
        return jnp.sin(w.fn(x))
    ''')


@pytest.fixture(scope="module")
def checked(tmp_path_factory: pytest.TempPathFactory):
    root: Path = tmp_path_factory.mktemp("instances")
    path = write(root, "states", MODULE)
    (root / "pyproject.toml").write_text("[tool.jaxlint]\n")
    return check_in_process([str(path)], all_rules(), config=load_config([str(path)]))


def signatures(result) -> dict[str, str]:
    return {t.target: t.signature for fa in result.files for t in fa.result.traced}


def test_a_function_taking_a_namedtuple_gets_one_built(checked) -> None:
    assert signatures(checked)["energy"] == "state=State(position=f32[], momentum=f32[])"
    assert signatures(checked)["outer"] == "state=State(position=f32[], momentum=f32[])"


def test_a_function_taking_a_dataclass_gets_one_built(checked) -> None:
    assert signatures(checked)["scaled"] == "radial=Radial(r=f32[], k=2), x=f32[]"


def test_an_optional_class_gets_an_instance_of_it(checked) -> None:
    assert signatures(checked)["maybe_kinetic"] == "state=State(position=f32[], momentum=f32[])"


def test_the_fields_take_the_rung_the_body_needs(checked) -> None:
    assert signatures(checked)["rows"] == "state=State(position=f32[n,n], momentum=f32[n,n])"


def test_a_closure_a_factory_returns_gets_its_state_built(checked) -> None:
    assert signatures(checked)["make_kernel.<locals>.kernel"] == "state=State(position=f32[], momentum=f32[]), x=f32[]"


def test_a_class_that_cannot_be_built_leaves_the_function_untraced_with_why(checked) -> None:
    skipped = {s.target: (s.kind, s.reason) for _, s in checked.skipped}
    assert skipped == {
        "near_plain": ("no-arguments", "arguments not inferred: parameter o: Plain "
                                       "(no instance: not a dataclass, NamedTuple or pytree class)"),
    }


def test_a_class_with_a_function_field_is_built_with_a_stand_in(checked) -> None:
    """A field holding a function gets the factories' stand-in (argsources/instances.py), shown."""
    assert signatures(checked)["near_function"] == "w=WithFunction(fn=<stand-in: its first argument>), x=f32[]"


def test_a_nested_function_that_ran_in_the_trace_counts_as_linted(checked) -> None:
    linted = {f.function: f.linted for f in coverage(checked).functions}
    assert linted["outer.<locals>.inner"] and linted["outer"]
    assert not linted["near_plain"]


def test_the_finding_names_the_built_instance(checked) -> None:
    assert {(f.code, f.span.start_line) for f in checked.findings} == expected_markers(MODULE)
    [finding] = checked.findings
    assert finding.arguments == "inferred"
    assert "(seen with arguments jaxlint inferred: state=State(position=f32[], momentum=f32[]); " in finding.message


def test_flax_struct_and_equinox_instances(tmp_path: Path) -> None:
    pytest.importorskip("flax.struct")
    pytest.importorskip("equinox")
    path = write(tmp_path, "modules", textwrap.dedent('''\
        import equinox as eqx
        import jax
        import jax.numpy as jnp
        from flax import struct


        @struct.dataclass
        class Gains:
            k: jax.Array
            n: int = struct.field(pytree_node=False, default=3)


        class Linear(eqx.Module):
            w: jax.Array
            b: jax.Array


        def gain(g: Gains, x):
            return jnp.tanh(g.k * x) * g.n


        def apply(layer: Linear, x):
            return jnp.tanh(layer.w * x + layer.b)
        '''))
    (tmp_path / "pyproject.toml").write_text("[tool.jaxlint]\n")
    result = check_in_process([str(path)], all_rules(), config=load_config([str(path)]))
    assert result.skipped == [] and result.findings == []
    assert signatures(result) == {"gain": "g=Gains(k=f32[], n=3), x=f32[]",
                                  "apply": "layer=Linear(w=f32[], b=f32[]), x=f32[]"}


def test_a_plain_check_reports_the_finding_with_the_instance(tmp_path: Path) -> None:
    (tmp_path / "states.py").write_text(MODULE)
    run = subprocess.run([sys.executable, "-m", "jaxlint", "check", "--isolated", "--no-cache", "--output-format",
                          "json", "states.py"], cwd=tmp_path, capture_output=True, text=True, timeout=600)
    assert run.returncode == 1, run.stderr
    [finding] = json.loads(run.stdout)
    line = next(n for n, text in enumerate(MODULE.splitlines(), 1) if "# expect JX501" in text)
    assert (finding["code"], finding["location"]["row"], finding["arguments"]) == ("JX501", line, "inferred")
    assert "state=State(position=f32[], momentum=f32[])" in finding["message"]


def test_a_wrapper_taking_built_instances_by_position_is_left_untraced(tmp_path: Path) -> None:
    """By position, an instance is neither shown by its fields nor its points left out: no guess."""
    path = write(tmp_path, "wrapped", textwrap.dedent('''\
        import functools
        from typing import NamedTuple

        import jax
        import jax.numpy as jnp


        class State(NamedTuple):
            position: jax.Array


        def positional(f):  # a wrapper that passes its arguments on by position
            @functools.wraps(f)
            def call(*args):
                return f(*args)

            return call


        def make_wrapped(step_size: float):
            @positional
            def kernel(state: State, x):
                return jnp.cos(state.position * step_size + x)

            return kernel
        '''))
    (tmp_path / "pyproject.toml").write_text("[tool.jaxlint]\n")
    result = check_in_process([str(path)], all_rules(), config=load_config([str(path)]))
    skipped = {s.target: (s.kind, s.reason) for _, s in result.skipped}
    assert skipped["make_wrapped.<locals>.kernel"] == (
        "no-arguments", "arguments not inferred: a wrapper takes its built instances by position")


def test_explain_names_the_built_instance_and_its_fields(tmp_path: Path) -> None:
    (tmp_path / "states.py").write_text(MODULE)
    run = subprocess.run([sys.executable, "-m", "jaxlint", "explain", "states.py::scaled"], cwd=tmp_path,
                         capture_output=True, text=True, timeout=600)
    assert run.returncode == 0, run.stderr
    assert "arguments (inferred): radial: Radial(r=f32[], k=2), x: f32[]\n" in run.stdout


THREE_DEEP = textwrap.dedent('''\
    import dataclasses

    import jax
    import jax.numpy as jnp


    @dataclasses.dataclass
    class Kernel:
        variance: jax.Array


    @dataclasses.dataclass
    class Prior:
        kernel: Kernel


    @dataclasses.dataclass
    class Model:
        prior: Prior


    @dataclasses.dataclass
    class Family:
        model: Model


    def scaled_log(family: Family):
        return jnp.log(1 + family.model.prior.kernel.variance)  # expect JX703
    ''')


def test_instances_three_levels_inside_an_instance_are_built(tmp_path: Path) -> None:
    # gpjax's variational families hold model.prior.kernel
    path = write(tmp_path, "deep", THREE_DEEP)
    result = check_in_process([str(path)], all_rules(), config=load_config([str(path)]))
    assert {(f.code, f.span.start_line) for f in result.findings} == expected_markers(THREE_DEEP)
    [signature] = [t.signature for fa in result.files for t in fa.result.traced if t.target == "scaled_log"]
    assert signature == "family=Family(model=Model(prior=Prior(kernel=Kernel(variance=f32[]))))"
