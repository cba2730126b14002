"""Function stand-ins for the parameters a function passes on as functions (issue 48,
argsources/passed_on.py): the body of a ``jax.lax.scan``, a ``fori_loop`` or a ``while_loop``, the
function of ``jax.vmap``, an argument of a function of the project that calls it (two levels
down), a method's parameter, a nested function's outer parameter, a factory's; and, for names the
ladder does not read, a loop's initial carry (a one-leaf pytree) and a tuple the body unpacks;
each shown in the signature and linted (a finding at its line). A
parameter passed to a project function that uses it as an array keeps its array, and one passed to
a callable that is neither JAX's nor the project's stays as before. One project, one check, in the
test process.
"""
from __future__ import annotations

import textwrap
from pathlib import Path

import pytest
from helpers import check_in_process, write

from jaxlint.config import load_config
from jaxlint.report.coverage import coverage
from jaxlint.rules import all_rules

MODULE = textwrap.dedent('''\
    import jax
    import jax.numpy as jnp
    from jax import lax


    def scanned(body, xs):
        _, ys = jax.lax.scan(body, 0.0, xs)
        return jnp.where(ys > 0, jnp.log(ys), 0.0)  # expect JX501


    def looped(step, x):
        y = lax.fori_loop(0, 3, step, x)
        return jnp.where(y > 0, jnp.log(y), 0.0)  # expect JX501


    def until(done, x):
        y = lax.while_loop(done, lambda v: v * 2.0, x)
        return jnp.where(y > 0, jnp.log(y), 0.0)  # expect JX501


    def apply_twice(g, x):
        return g(g(x))


    def relay(h, x):
        return apply_twice(h, x)


    def relayed(model, x):  # passed on to a function that passes it on to one that calls it
        y = relay(model, x)
        return jnp.where(y > 0, jnp.log(y), 0.0)  # expect JX501


    class Runner:
        def __init__(self, scale):
            self.scale = scale

        def run(self, kernel, x):
            y = jax.vmap(kernel)(x) * self.scale
            return jnp.where(y > 0, jnp.log(y), 0.0)  # expect JX501


    def as_array(v, x):
        return v * x


    def kept(w, x):  # the callee multiplies it: an array, as before
        y = as_array(w, x)
        return jnp.where(y > 0, jnp.log(y), 0.0)  # expect JX501


    def mapped(h, xs):  # map is not JAX's nor the project's: as before
        ys = jnp.stack(list(map(h, xs)))
        return jnp.where(ys > 0, jnp.log(ys), 0.0)


    def read(model, x):  # read as an object too: nothing is made up for it
        y = relay(model, x) * model.scale
        return jnp.where(y > 0, jnp.log(y), 0.0)


    def outer(kernel, x):  # its nested function, built from its code, takes the outer's kernel
        def inner(y):
            z = jax.lax.map(kernel, y)
            return jnp.where(z > 0, jnp.log(z), 0.0)  # expect JX501
        return x


    def make_step(kernel):  # a factory: called with a stand-in for the function it passes on
        def step(x):
            y = apply_twice(kernel, x)
            return jnp.where(y > 0, jnp.log(y), 0.0)  # expect JX501
        return step


    def scan_nd(body_fn, init, xs):
        return lax.scan(body_fn, init, xs)


    def in_dim(body_fn, init, xs):  # init is only a loop's carry, two levels down: a one-leaf pytree
        c, ys = scan_nd(body_fn, init, xs)
        return jnp.where(c > 0, jnp.log(c), 0.0)  # expect JX501


    def carried_and_read(body_fn, init, xs):  # init is read as a value too: nothing is made up for it
        c, ys = lax.scan(body_fn, init, xs)
        return jnp.where(c > 0, jnp.log(c), 0.0) + init.sum()


    def cond_fn(carry):  # only unpacked: a tuple of arrays
        n, done = carry
        return jnp.where(n > 0, jnp.log(n), 0.0) * done  # expect JX501
    ''')


@pytest.fixture(scope="module")
def checked(tmp_path_factory: pytest.TempPathFactory):
    root: Path = tmp_path_factory.mktemp("passed")
    path = write(root, "passed", MODULE)
    (root / "pyproject.toml").write_text("[tool.jaxlint]\n")
    return check_in_process([str(path)], all_rules(), config=load_config([str(path)]))


def signatures(result) -> dict[str, str]:
    return {t.target: t.signature for fa in result.files for t in fa.result.traced}


def expected_lines() -> dict[int, str]:
    return {number: "JX501" for number, line in enumerate(MODULE.splitlines(), 1) if "# expect JX501" in line}


@pytest.mark.parametrize(("target", "signature"), [
    ("scanned", "body=<stand-in: (carry, x)>, xs=f32[n]"),
    ("looped", "step=<stand-in: its second argument>, x=f32[]"),
    ("until", "done=<stand-in: False>, x=f32[]"),
    ("relayed", "model=<stand-in: its first argument>, x=f32[]"),
    ("Runner.run", "self=Runner(scale=f32[]), kernel=<stand-in: its first argument>, x=f32[n]"),
    ("kept", "w=f32[], x=f32[]"),
    ("outer.<locals>.inner", "y=f32[n] with its outer's kernel=<stand-in: its first argument>"),
    ("make_step.<locals>.step", "x=f32[]"),
    ("in_dim", "body_fn=<stand-in: (carry, x)>, init=f32[n] (a one-leaf pytree), xs=f32[n]"),
    ("cond_fn", "carry=(f32[], f32[])"),
])
def test_a_parameter_passed_on_as_a_function_gets_a_stand_in_shown_in_the_signature(
        checked, target: str, signature: str) -> None:
    assert signatures(checked)[target] == signature
    assert {f.function: f.linted for f in coverage(checked).functions}[target]


def test_each_is_linted_with_a_finding_at_its_line(checked) -> None:
    assert {f.span.start_line: f.code for f in checked.findings} == expected_lines()


def test_one_passed_to_a_callable_not_of_jax_nor_the_project_stays_as_before(checked) -> None:
    [entry] = [u for u in coverage(checked).untraced if u.target == "mapped"]
    assert "stand-in" not in entry.reason and "h=f32[" in entry.reason


@pytest.mark.parametrize(("target", "parameter"), [("read", "model"), ("carried_and_read", "init")])
def test_one_read_as_a_value_too_stays_as_before(checked, target: str, parameter: str) -> None:
    [entry] = [u for u in coverage(checked).untraced if u.target == target]
    assert f"parameter {parameter} (a function, pytree or object, by its name)" in entry.reason



VMAPPED = textwrap.dedent('''\
    import jax
    import jax.numpy as jnp


    def mapped_{n}(kernel, x):
        y = jax.vmap(kernel)(x)
        return jnp.where(y > 0, jnp.log(y), 0.0)  # expect JX501
    ''')


def test_jax_vmap_is_known_in_each_module_while_jaxlint_records_its_calls(tmp_path: Path) -> None:
    """jaxlint replaces ``jax.vmap`` while each module is imported and traced, by another object per
    module: the second module's ``jax.vmap(kernel)`` is JAX's vmap all the same."""
    paths = [str(write(tmp_path, f"vmapped_{n}", VMAPPED.format(n=n))) for n in (1, 2)]
    (tmp_path / "pyproject.toml").write_text("[tool.jaxlint]\n")
    result = check_in_process(paths, all_rules(), config=load_config(paths))
    assert signatures(result) == {f"mapped_{n}": "kernel=<stand-in: its first argument>, x=f32[n]" for n in (1, 2)}
    assert sorted((Path(f.path).name, f.code) for f in result.findings) == [
        ("vmapped_1.py", "JX501"), ("vmapped_2.py", "JX501")]


NO_ARGUMENTS = textwrap.dedent('''\
    import jax.numpy as jnp


    def applied(fn, x, *args):  # *args left empty: the stand-in is called with no argument
        return jnp.log(1 + x * fn(*args))
    ''')


def test_a_stand_in_called_with_no_argument_gives_a_scalar(tmp_path: Path) -> None:
    # equinox's filter_closure_convert(fn, *args), filter_eval_shape(fun, *args)
    path = write(tmp_path, "applied", NO_ARGUMENTS)
    result = check_in_process([str(path)], all_rules(), config=load_config([str(path)]))
    assert [(f.code, f.span.start_line) for f in result.findings] == [("JX703", 5)]
    assert signatures(result) == {"applied": "fn=<stand-in: its first argument>, x=f32[]"}
