"""Factories: a module-level function that returns functions is called with plain values, and the
closures it returns that are JAX functions of the file are traced with inferred arguments; where
it returns ``init`` and ``update`` (optax, ``jax.example_libraries.optimizers``), ``update`` gets
the state ``init`` makes. A factory that cannot be called, raises or hangs leaves its closures
skipped, with why: never a finding, and nothing it changed is kept."""
from __future__ import annotations

import json
import subprocess
import sys
import textwrap
from pathlib import Path

import pytest
from helpers import check_in_process, expected_markers, write
from test_pytest_store import environment, pytest_run

from jaxlint.config import load_config
from jaxlint.report.coverage import coverage
from jaxlint.rules import all_rules

CONTAINERS = textwrap.dedent('''\
    import dataclasses
    from typing import Callable, NamedTuple

    import jax
    import jax.numpy as jnp


    def make_pair(scale=2.0):
        def forward(x):
            return jnp.where(x > 0, jnp.log(x) * scale, 0.0)  # expect JX501

        def backward(x):
            return jnp.exp(x) / scale

        return forward, backward


    class Transform(NamedTuple):
        init: Callable
        apply: Callable


    def make_named(power: int):
        def init(x):
            return jnp.zeros_like(x)

        def apply(x):
            return jnp.where(x > 0, jnp.log(x) ** power, 0.0)  # expect JX501

        return Transform(init, apply)


    def make_dict(eps: float):
        def norm(x):
            return jnp.where(x > eps, jnp.sqrt(x), 0.0)  # expect JX501

        return {"norm": norm}


    @dataclasses.dataclass
    class Pair:
        first: Callable
        second: Callable


    def make_dataclass():
        def first(x):
            return jnp.where(x > 0, jnp.log(x), 0.0)  # expect JX501

        def second(x):
            return jnp.tanh(x)

        return Pair(first, second)


    def make_single(flip=False):
        @jax.jit
        def only(x):
            return jnp.where(x > 0, jnp.log(x), 0.0)  # expect JX501

        return only


    def run(xs):  # computes with its nested body: not a factory, traced itself
        def body(carry, x):
            return carry + jnp.where(x > 0, jnp.log(x), 0.0), carry  # expect JX501

        return jax.lax.scan(body, 0.0, xs)[0]
    ''')


def checked(tmp_path: Path, name: str, text: str):
    path = write(tmp_path, name, text)
    (tmp_path / "pyproject.toml").write_text("[tool.jaxlint]\n")
    return check_in_process([str(path)], all_rules(), config=load_config([str(path)]))


def traced_signatures(result) -> dict[str, str]:
    return {t.target: t.signature for fa in result.files for t in fa.result.traced}


def test_closures_returned_in_each_container_are_traced(tmp_path: Path) -> None:
    result = checked(tmp_path, "containers", CONTAINERS)
    assert {(f.code, f.span.start_line) for f in result.findings} == expected_markers(CONTAINERS)
    assert all(f.arguments == "inferred" for f in result.findings)
    signatures = traced_signatures(result)
    closures = {"make_pair.<locals>.forward", "make_pair.<locals>.backward", "make_named.<locals>.init",
                "make_named.<locals>.apply", "make_dict.<locals>.norm", "make_dataclass.<locals>.first",
                "make_dataclass.<locals>.second", "make_single.<locals>.only"}
    assert closures <= set(signatures)
    assert signatures["make_dict.<locals>.norm"] == "x=f32[]"
    # run's body is traced through run itself, never run as a factory's closure
    assert "run.<locals>.body" not in signatures and "run" in signatures
    report = coverage(result)
    assert {f.function for f in report.functions if f.linted} >= closures


PROTOCOL = textwrap.dedent('''\
    from typing import Any, Callable, NamedTuple

    import jax
    import jax.numpy as jnp
    from jax.example_libraries.optimizers import make_schedule, optimizer


    class GradientTransformation(NamedTuple):
        init: Callable
        update: Callable


    class ScaleByRmsState(NamedTuple):
        nu: Any


    def scale_by_rms(decay: float = 0.9, eps: float = 1e-8):
        def init_fn(params):
            return ScaleByRmsState(nu=jax.tree_util.tree_map(jnp.zeros_like, params))

        def update_fn(updates, state, params=None):
            del params
            nu = jax.tree_util.tree_map(lambda g, n: decay * n + (1 - decay) * g ** 2, updates, state.nu)
            updates = jnp.where(nu > 0, updates / jnp.sqrt(nu), 0.)  # expect JX501
            return updates, ScaleByRmsState(nu=nu)

        return GradientTransformation(init_fn, update_fn)


    def scale_by_safe_rms(decay: float = 0.9, eps: float = 1e-8):
        def init_fn(params):
            return ScaleByRmsState(nu=jax.tree_util.tree_map(jnp.zeros_like, params))

        def update_fn(updates, state, params=None):
            nu = jax.tree_util.tree_map(lambda g, n: decay * n + (1 - decay) * g ** 2, updates, state.nu)
            return updates * jax.lax.rsqrt(nu + eps), ScaleByRmsState(nu=nu)

        return GradientTransformation(init_fn, update_fn)


    @optimizer
    def rmsprop_like(step_size, gamma=0.9):
        step_size = make_schedule(step_size)

        def init(x0):
            return x0, jnp.zeros_like(x0)

        def update(i, g, state):
            x, avg = state
            avg = avg * gamma + jnp.square(g) * (1. - gamma)
            return x - step_size(i) * jnp.where(avg > 0, g / jnp.sqrt(avg), 0.), avg  # expect JX501

        def get_params(state):
            return state[0]

        return init, update, get_params
    ''')


def test_update_gets_the_state_init_makes(tmp_path: Path) -> None:
    result = checked(tmp_path, "protocol", PROTOCOL)
    assert {(f.code, f.span.start_line) for f in result.findings} == expected_markers(PROTOCOL)
    signatures = traced_signatures(result)
    assert signatures["scale_by_rms.<locals>.init_fn"] == "params=f32[n]"
    assert signatures["scale_by_rms.<locals>.update_fn"] == "updates=f32[n], state=(f32[n],), params=f32[n]"
    # the safe update traced with the same state, and stays quiet
    assert signatures["scale_by_safe_rms.<locals>.update_fn"] == signatures["scale_by_rms.<locals>.update_fn"]
    # optimizers.optimizer wraps update in tree_update(i, grad_tree, opt_state): passed by position
    assert signatures["rmsprop_like.<locals>.update"].startswith("f32[], f32[n], ")
    skipped = {s.target for _, s in result.skipped}
    assert not skipped & {"scale_by_rms.<locals>.update_fn", "rmsprop_like.<locals>.update"}


SIZES = textwrap.dedent('''\
    from typing import Callable, NamedTuple

    import jax.numpy as jnp


    class GradientTransformation(NamedTuple):
        init: Callable
        update: Callable


    def scale_by_diagonal(decay=0.9):
        def init_fn(params):
            dim = params.shape[0]
            if dim > 1:  # a symbolic size cannot answer: the protocol takes a known one
                return jnp.eye(dim)
            return jnp.ones((1, 1))

        def update_fn(updates, state, params=None):
            var = decay * jnp.diag(state) * updates ** 2
            return jnp.where(var > 0, updates / jnp.sqrt(var), 0.), state  # expect JX501

        return GradientTransformation(init_fn, update_fn)


    def mass_matrix_adaptation(diagonal=True):
        def init(n_dims: int):  # a size, not the parameters: no protocol
            return jnp.ones(n_dims), jnp.zeros(n_dims)

        def update(mm_state, position):
            return mm_state[0] + jnp.mean(position), mm_state[1]

        return init, update


    def dual_averaging(gamma=0.05):
        def init(initial_step_size: float):  # a float: the protocol's parameters, whatever the name
            return jnp.log(10 * initial_step_size), jnp.zeros_like(initial_step_size)

        def update(da_state, acceptance_rate):
            mu, error = da_state
            return mu, jnp.where(error > 0, jnp.log(error), 0.0) + acceptance_rate  # expect JX501

        return init, update


    def make_series(num_terms):
        powers = list(range(num_terms))  # a count: called with 2, not 0.1

        def series(x):
            return jnp.where(x > 0, sum(jnp.log(x) ** k for k in powers), 0.0)  # expect JX501

        return series
    ''')


def test_init_that_needs_a_known_size_and_a_count_parameter(tmp_path: Path) -> None:
    result = checked(tmp_path, "sizes", SIZES)
    assert {(f.code, f.span.start_line) for f in result.findings} == expected_markers(SIZES)
    signatures = traced_signatures(result)
    assert signatures["scale_by_diagonal.<locals>.update_fn"] == "updates=f32[4], state=f32[4,4], params=f32[4]"
    assert signatures["scale_by_diagonal.<locals>.init_fn"] == "params=f32[4]"
    assert signatures["dual_averaging.<locals>.update"] == "da_state=(f32[n], f32[n]), acceptance_rate=f32[]"
    skipped = {s.target: s.reason for _, s in result.skipped}
    # A size alone: traced with a concrete size (argsources/sizes.py), not as the protocol's init.
    assert signatures["mass_matrix_adaptation.<locals>.init"] == "n_dims=8"
    assert skipped["mass_matrix_adaptation.<locals>.update"] == (
        "arguments not inferred: parameter mm_state (a pytree: its code indexes mm_state[1], which a one-leaf "
        "pytree has not)")


FAILING = textwrap.dedent('''\
    import jax.numpy as jnp


    def make_raising(lr=0.1):
        floor = lr * 0  # a local: step is not built from its code either (test_nested_code.py)

        def step(x):
            return jnp.where(x > floor, jnp.log(x), 0.0)

        raise ValueError("no such optimizer")
        return step


    def make_with_model(model):  # an object (model.apply): a called model would get a stand-in
        def step(x):
            return jnp.where(x > 0, jnp.log(model.apply(x)), 0.0)

        return step


    def make_fine():
        def step(x):
            return jnp.where(x > 0, jnp.log(x), 0.0)  # expect JX501

        return step
    ''')


def test_a_factory_that_cannot_be_called_or_raises_is_counted_not_reported(tmp_path: Path) -> None:
    result = checked(tmp_path, "failing", FAILING)
    assert {(f.code, f.span.start_line) for f in result.findings} == expected_markers(FAILING)
    # the target's own skip, not its nested build's after it (test_nested_code.py)
    skipped = {s.target: (s.kind, s.reason) for _, s in reversed(result.skipped)}
    assert skipped["make_raising.<locals>.step"] == (
        "factory-failed", "make_raising() raised ValueError: no such optimizer")
    assert skipped["make_with_model.<locals>.step"] == (
        "no-arguments", "the factory make_with_model was not called: parameter model (a function, pytree or "
                        "object, by its name)")
    untraced = {u.target: u for u in coverage(result).untraced}
    assert untraced["make_raising.<locals>.step"].kind == "factory-failed"
    assert untraced["make_with_model.<locals>.step"].hint is None  # a hint cannot reach a closure


SIDE_EFFECTS = textwrap.dedent('''\
    import os
    import time

    import jax.numpy as jnp

    MODE = "safe"


    def make_noisy(lr=0.1):
        global MODE
        print("FACTORY RAN")
        MODE = "unsafe"
        os.environ["JAXLINT_FACTORY_RAN"] = "1"

        def step(x):
            return jnp.where(x > 0, jnp.log(x), 0.0)  # expect JX501

        return step


    def make_reader():
        def reads(x):  # traced after make_noisy ran: it must see MODE as the module left it
            if MODE == "unsafe" or "JAXLINT_FACTORY_RAN" in os.environ:
                return jnp.where(x > 0, jnp.log(x), 0.0)
            return jnp.log1p(x * x)

        return reads


    def make_hanging():
        floor = 0.0  # a local: hung is not built from its code either

        def hung(x):
            return jnp.where(x > floor, jnp.log(x), 0.0)

        while True:
            time.sleep(0.05)
        return hung
    ''')


def test_what_a_factory_changes_is_not_kept_and_a_hang_is_cut_short(tmp_path: Path) -> None:
    """Through the command line, in a worker: the factory's print is not on stdout, its global and
    environment changes are gone before the next closure traces, and a factory that never returns
    is stopped after its time limit, its closure counted, no JX902."""
    write(tmp_path, "effects", SIDE_EFFECTS)
    (tmp_path / "pyproject.toml").write_text("[tool.jaxlint]\n")
    run = subprocess.run([sys.executable, "-m", "jaxlint", "check", "--no-cache", "--output-format", "json",
                          "--show-untraced", "effects.py"], cwd=tmp_path, capture_output=True, text=True, timeout=600)
    assert run.returncode == 1, run.stderr
    assert "FACTORY RAN" not in run.stdout + run.stderr
    found = {(row["code"], row["location"]["row"]) for row in json.loads(run.stdout)}
    assert found == expected_markers(SIDE_EFFECTS)
    assert "make_hanging.<locals>.hung [factory-failed] make_hanging() ran past 3 s" in run.stderr


UNIONS = textwrap.dedent('''\
    from typing import Optional

    import jax
    import jax.numpy as jnp
    from jax.typing import ArrayLike


    def log_clip(x: ArrayLike):
        return jnp.where(x > 0, jnp.log(x), 0.0)  # expect JX501


    def pareto_tail(x: ArrayLike):  # a scalar raveled to shape (1,) would index past its end
        ordered = jnp.sort(jnp.asarray(x).ravel())
        return ordered[5] - ordered[-5]


    def shift(x: Optional[jax.Array]):  # no Python number in the union: rank 0 first
        return jnp.where(x > 0, jnp.sqrt(x), 0.0)  # expect JX501


    def make_scale(decay: float = 0.9):
        def scale(updates: jax.Array | float):
            return jnp.where(updates > 0, jnp.log(updates) * decay, 0.0)  # expect JX501

        return scale
    ''')


def test_a_union_with_an_array_reads_as_an_array_of_rank_one_or_more(tmp_path: Path) -> None:
    """ArrayLike, ``Array | float``: arrays, from rank 1 where the union admits a Python number,
    whose rank-0 form a function written for arrays meets by accident; Optional[Array] from rank 0."""
    result = checked(tmp_path, "unions", UNIONS)
    assert {(f.code, f.span.start_line) for f in result.findings} == expected_markers(UNIONS)
    signatures = traced_signatures(result)
    assert signatures["log_clip"] == "x=f32[n]"
    assert signatures["pareto_tail"] == "x=f32[n]"
    assert signatures["shift"] == "x=f32[]"
    assert signatures["make_scale.<locals>.scale"] == "updates=f32[n]"


STAND_INS = textwrap.dedent('''\
    from typing import Callable, NamedTuple

    import jax
    import jax.numpy as jnp


    class GradientTransformation(NamedTuple):
        init: Callable
        update: Callable


    def build(logdensity_fn: Callable, step_size: float):
        def init(position):
            return position, logdensity_fn(position)

        def step(rng_key, state):
            position, logdensity = state
            moved = position + step_size * jax.random.normal(rng_key, position.shape)
            return jnp.where(moved > 0, jnp.sqrt(moved), 0.0), logdensity_fn(moved)  # expect JX501

        return init, step


    def build_kernel(divergence_threshold: float = 1000.0):
        def kernel(rng_key, position, logdensity_fn, step_size: float):
            log_position = jnp.where(position > 0, jnp.log(position), 0.0)  # expect JX501
            return log_position + step_size * jax.grad(logdensity_fn)(position).sum()

        return kernel


    def wrap(fn):
        def doubled(x):
            return jnp.tanh(fn(x))

        return doubled


    def wrap_log(fn):
        def logged(x):  # the guard is on x, not on fn(x): fn could be exp
            return jnp.where(x > 0, jnp.log(fn(x)), 0.0)

        return logged


    def lookahead(fast: GradientTransformation, sync_period: int):
        def init_fn(params):
            return fast.init(params), params

        def update_fn(updates, state, params=None):
            fast_updates, fast_state = fast.update(updates, state[0], params)
            slow = state[1] + fast_updates
            return jnp.where(slow > 0, jnp.log(slow), 0.0), (fast_state, slow)  # expect JX501

        return GradientTransformation(init_fn, update_fn)


    def grad_step(logdensity_fn: Callable, position: jax.Array, step_size: float):  # not a factory
        drift = step_size * jax.grad(logdensity_fn)(position)
        return jnp.where(position > 0, jnp.log(position), 0.0) + drift  # expect JX501


    def cast(x: jax.Array, dtype):
        return jnp.where(x > 0, jnp.log(x), 0.0).astype(dtype)  # expect JX501


    class Model:
        pass


    def with_model(model: Model):  # an object: the factory is not called with a made-up one
        def update(updates):  # built from its code: model made up from what it reads (made_up.py)
            return jnp.where(updates > 0, jnp.log(updates), 0.0) * model.scale  # expect JX501

        return update
    ''')


def test_a_factory_taking_a_function_is_called_with_a_pure_stand_in(tmp_path: Path) -> None:
    """A parameter that takes a function (``Callable``, ``*_fn``), of the factory, of a closure it
    returns or of a module-level function, gets a stand-in: a log-density ``-0.5*sum(x**2)``, else the first argument; a
    GradientTransformation, the identity transformation; a dtype, float32. Findings are the closures' own; none
    turns on what the stand-in computes."""
    result = checked(tmp_path, "standins", STAND_INS)
    assert {(f.code, f.span.start_line) for f in result.findings} == expected_markers(STAND_INS)
    assert {f.path for f in result.findings} == {str(tmp_path / "standins.py")}
    signatures = traced_signatures(result)
    assert signatures["build.<locals>.step"] == "rng_key=key<fry>[], state=(f32[n], f32[])"
    assert signatures["build_kernel.<locals>.kernel"] == (
        "rng_key=key<fry>[], position=f32[], logdensity_fn=<stand-in: -0.5*sum(x**2)>, step_size=f32[]")
    assert signatures["wrap.<locals>.doubled"] == "x=f32[]"
    assert "wrap_log.<locals>.logged" in signatures
    assert signatures["grad_step"] == (
        "logdensity_fn=<stand-in: -0.5*sum(x**2)>, position=f32[], step_size=f32[]")
    assert signatures["cast"] == "x=f32[], dtype=dtype('float32')"
    # a GradientTransformation is the identity transformation: init makes (), update passes on
    assert signatures["lookahead.<locals>.update_fn"] == "updates=f32[n], state=((), f32[n]), params=f32[n]"
    skipped = {s.target: s.reason for _, s in reversed(result.skipped)}  # the target's own skip first
    assert skipped["with_model.<locals>.update"] == (
        "the factory with_model was not called: parameter model: standins.Model")


STORED = '''\
import jax.numpy as jnp


def make_step(lr=0.1):
    def step(x):
        return x - lr * jnp.where(x > 0, jnp.log(x), 0.0)

    return step
'''


@pytest.mark.slow
def test_a_closure_the_test_run_linted_is_not_traced_again_with_guesses(tmp_path: Path) -> None:
    """As for module-level functions: the tests gave the closure real arguments, so check reports
    their finding and traces no guess beside it."""
    (tmp_path / "pyproject.toml").write_text("[tool.jaxlint]\n")
    (tmp_path / "pkg").mkdir()
    (tmp_path / "pkg" / "__init__.py").write_text("")
    (tmp_path / "pkg" / "model.py").write_text(STORED)
    (tmp_path / "tests").mkdir()
    (tmp_path / "tests" / "test_model.py").write_text(
        "import jax.numpy as jnp\n\nfrom pkg.model import make_step\n\n\n"
        "def test_step():\n    assert make_step()(jnp.ones(3)).shape == (3,)\n")
    assert "1 passed" in pytest_run(tmp_path).stdout
    run = subprocess.run([sys.executable, "-m", "jaxlint", "check", "--output-format", "json", "pkg"],
                         cwd=tmp_path, env=environment(), capture_output=True, text=True, timeout=600)
    assert "linted 1 of 1 JAX functions: 0 traced here, 1 in the test run of " in run.stderr, run.stderr
    assert [(f["code"], f["origin"]) for f in json.loads(run.stdout)] == [("JX501", "test run")]


def test_explain_reaches_a_closure_as_check_traces_it(tmp_path: Path, capsys: pytest.CaptureFixture) -> None:
    from jaxlint.cli.main import main

    path = write(tmp_path, "protocol", PROTOCOL)
    (tmp_path / "pyproject.toml").write_text("[tool.jaxlint]\n")
    code = main(["explain", f"{path}::scale_by_rms.<locals>.update_fn", "--format", "json"])
    out, err = capsys.readouterr()
    assert code == 0, err
    arguments = json.loads(out)["arguments"]
    assert arguments["source"] == "inferred"
    assert [(a["name"], a["abstract"]) for a in arguments["signature"]] == [
        ("updates", "f32[n]"), ("state", "(f32[n],)"), ("params", "f32[n]")]


OWN_OPERATIONS = textwrap.dedent('''\
    import jax
    import jax.numpy as jnp


    def make_energy(sigma):
        scale = jnp.log(1 + sigma)  # expect JX703

        def energy(r):
            return jnp.sum((scale / r) ** 6)

        return energy


    def make_update(rate):
        def update(x):
            return x * rate

        return jax.jit(update)


    def make_pair(offset):
        table = jnp.arange(4.0) + offset
        return table, lambda x: x + offset
    ''')


def test_a_factorys_own_operations_are_linted_and_one_that_only_defines_is_not(tmp_path: Path) -> None:
    # The factory ran under the trace already; its own operations are a program of their own,
    # what it returns left out (the arrays it returns kept: make_pair's table).
    path = write(tmp_path, "own", OWN_OPERATIONS)
    result = check_in_process([str(path)], all_rules(), config=load_config([str(path)]))
    assert {(f.code, f.span.start_line) for f in result.findings} == expected_markers(OWN_OPERATIONS)
    linted = {f.function: f.linted for f in coverage(result).functions}
    assert linted["make_energy"] and linted["make_pair"]
    assert not linted["make_update"]
    [(_, skipped)] = [(p, s) for p, s in result.skipped if s.target == "make_update"]
    assert skipped.kind == "not-traceable" and "returns PjitFunction, not arrays" in skipped.reason
    [outputs] = [fa.result.outputs["make_pair"] for fa in result.files]
    assert [[("float32[4]" in aval) for aval in avals] for avals in outputs] == [[True]]  # the table alone
