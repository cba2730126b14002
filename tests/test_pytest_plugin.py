"""``pytest --jaxlint``: a project's own test run, in a subprocess (the plugin installs a profile
hook and reads the session's exit status, neither of which this suite's own process can lend).

Each project is real code traced to real jaxprs; findings are compared by (code, line)."""
from __future__ import annotations

import json
import os
import subprocess
import sys
import textwrap
from pathlib import Path

import pytest
from helpers import with_plugin_autoload

MODEL = '''\
import jax
import jax.numpy as jnp


def blackbox_function(x, y):
    x = x + 1
    y = x * y
    return x, y


@jax.jit
def my_mapped_function(x, y):
    x, y = jax.vmap(blackbox_function, in_axes=(None, 0))(x, y)  # expect JX101
    return x[0], y


def safe_log(x):
    return jnp.where(x > 0, jnp.log(x), 0.0)  # expect JX501


def make_step(dt):
    def step(state, key):
        noise = jax.random.normal(key, state.shape)
        drift = jax.random.normal(key, state.shape)  # expect JX401
        return state + dt * (noise + drift)
    return step


class Model:
    def __init__(self, scale):
        self.scale = scale

    def apply(self, x):
        return jnp.where(x > 0, jnp.sqrt(x), 0.0) * self.scale  # expect JX501


def plain_numbers(n):
    return sum(range(n))


def needs_values(x):
    if float(x.sum()) > 0:  # concrete values: runs eagerly, cannot be traced again
        return x
    return -x
'''

TESTS = '''\
import jax
import jax.numpy as jnp
from pkg.model import Model, make_step, my_mapped_function, needs_values, plain_numbers, safe_log


def test_mapped():
    x, y = my_mapped_function(jnp.ones(3), jnp.ones((4, 3)))
    assert y.shape == (4, 3)


def test_gradient_of_a_plain_function():
    assert jax.grad(lambda x: safe_log(x).sum())(jnp.ones(5)).shape == (5,)


def test_closure_from_a_factory():
    assert make_step(0.1)(jnp.zeros(3), jax.random.key(0)).shape == (3,)


def test_method():
    assert Model(0.5).apply(jnp.ones(2)).shape == (2,)


def test_plain_numbers():
    assert plain_numbers(4) == 6


def test_concrete_values():
    assert needs_values(jnp.ones(2)).shape == (2,)


def local_helper(x):  # in a test file: the tests' own code is not linted
    return jnp.where(x > 0, jnp.log(x), 0.0)


def test_local_helper():
    assert jax.grad(lambda x: local_helper(x).sum())(jnp.ones(2)).shape == (2,)
'''


def expected(text: str) -> set[tuple[str, int]]:
    """(code, line) of each ``# expect`` comment. Before JAX 0.7 a draw inside jax.random's cached
    jaxprs keeps a stale traceback: JX401 then points at the function's name (see jx401._location)."""
    from jaxlint.jaxapi.tracebacks import STALE_LIBRARY_TRACEBACKS

    found = set()
    lines = text.splitlines()
    for number, line in enumerate(lines, 1):
        if "# expect " in line:
            code = line.split("# expect ")[1].split()[0]
            if code == "JX401" and STALE_LIBRARY_TRACEBACKS:
                number = max(n for n in range(1, number) if lines[n - 1].lstrip().startswith("def "))
            found.add((code, number))
    return found


def project(tmp_path: Path, model: str = MODEL, tests: str = TESTS, config: str = "") -> Path:
    (tmp_path / "pkg").mkdir()
    (tmp_path / "pkg" / "__init__.py").write_text("")
    (tmp_path / "pkg" / "model.py").write_text(model)
    (tmp_path / "tests").mkdir()
    (tmp_path / "tests" / "test_model.py").write_text(tests)
    if config:
        (tmp_path / "pyproject.toml").write_text(textwrap.dedent(config))
    return tmp_path


def environment() -> dict[str, str]:
    env = {k: v for k, v in os.environ.items()
           if k not in ("JAXLINT_RECORD", "PYTEST_ADDOPTS", "JAXLINT_OUTPUT_FORMAT", "PYTEST_XDIST_WORKER")}
    env["JAX_PLATFORMS"] = "cpu"
    return env


def pytest_run(root: Path, *args: str, autoload: bool = False) -> subprocess.CompletedProcess:
    """A pytest session in ``root``; ``autoload``: with every installed plugin, jaxlint's through its
    entry point, as a user's session loads them (else only jaxlint's and xdist's: conftest.py)."""
    env = with_plugin_autoload(environment()) if autoload else environment()
    return subprocess.run([sys.executable, "-m", "pytest", "-p", "no:cacheprovider", *args],
                          cwd=root, env=env, capture_output=True, text=True, timeout=600)


def reported(root: Path) -> set[tuple[str, int]]:
    return {(f["code"], f["location"]["row"]) for f in json.loads((root / "report.json").read_text())}


def test_the_tests_calls_are_linted_and_findings_fail_a_passing_run(tmp_path: Path) -> None:
    root = project(tmp_path)
    run = pytest_run(root, "--jaxlint", "--jaxlint-report", "report.json", "-v", autoload=True)
    assert "7 passed" in run.stdout, run.stdout + run.stderr
    # A jit-decorated function, a plain function reached only under grad, a closure a factory
    # returned (its key argument a typed key), a method: each traced with the test's objects.
    assert reported(root) == expected(MODEL)
    assert run.returncode == 1
    assert "exit status 1 for the findings above" in run.stdout
    # The JAX functions (their body calls into jax) the tests ran, all linted; plain_numbers is
    # called only with Python numbers: not counted. needs_values cannot be traced again: counted,
    # listed with -v, and no finding (the test ran it fine).
    assert ("linted 4 of 4 JAX functions the tests ran, traced 5 of 6 project functions they called with "
            "arrays (5 signatures), 1 could not be traced again, 4 findings (") in run.stdout
    line = MODEL.splitlines().index("def needs_values(x):") + 1
    assert f"not linted: pkg/model.py:{line} needs_values: ConcretizationTypeError" in run.stdout
    # Under jax.jit XLA removes the broadcast: the finding says so rather than claim a saving.
    vmap = next(f for f in json.loads((root / "report.json").read_text()) if f["code"] == "JX101")
    assert "Cost: none in compiled code" in vmap["message"]


def test_exit_zero_reports_without_failing(tmp_path: Path) -> None:
    root = project(tmp_path)
    run = pytest_run(root, "--jaxlint", "--jaxlint-exit-zero", "--jaxlint-output-format", "concise")
    assert run.returncode == 0, run.stdout + run.stderr
    assert "pkg/model.py:18:12: JX501" in run.stdout


@pytest.mark.slow
def test_failing_tests_keep_their_status_and_outcomes(tmp_path: Path) -> None:
    tests = TESTS + "\n\ndef test_fails():\n    assert safe_log(jnp.ones(1))[0] == 1.0\n"
    root = project(tmp_path, tests=tests)
    plain, linted = pytest_run(root), pytest_run(root, "--jaxlint")
    assert _outcomes(plain) == _outcomes(linted) == "1 failed, 7 passed"
    assert plain.returncode == linted.returncode == 1
    assert "== jaxlint ==" in linted.stdout.replace("=" * 10, "==")


def _outcomes(run: subprocess.CompletedProcess) -> str:
    return run.stdout.splitlines()[-1].strip("= ").split(" in ")[0]


def test_the_report_is_check_json(tmp_path: Path) -> None:
    """The same JSON array as ``jaxlint check --output-format json`` for the same finding."""
    model = MODEL.replace("@jax.jit\ndef my_mapped", "# jaxlint: args x=f32[3], y=f32[4,3]\n@jax.jit\ndef my_mapped")
    root = project(tmp_path, model=model)
    pytest_run(root, "--jaxlint", "--jaxlint-report", "report.json")
    check = subprocess.run([sys.executable, "-m", "jaxlint", "check", "--output-format", "json", "--select",
                            "JX101", "pkg"], cwd=root, env=environment(), capture_output=True, text=True,
                           timeout=600)
    from_check = json.loads(check.stdout)
    from_pytest = [f for f in json.loads((root / "report.json").read_text()) if f["code"] == "JX101"]
    assert len(from_check) == 1 and from_pytest == from_check


@pytest.mark.slow
def test_configuration_and_suppressions_apply(tmp_path: Path) -> None:
    model = MODEL.replace("# expect JX401", "# noqa: JX401")
    config = """\
        [tool.jaxlint]
        ignore = ["JX101"]
        per-file-ignores = {"pkg/model.py" = ["JX501"]}
        """
    model = model.replace("    def step(state, key):", "    def step(state, key):  # noqa: JX401")  # JAX < 0.7
    root = project(tmp_path, model=model, config=config)
    run = pytest_run(root, "--jaxlint", "--jaxlint-report", "report.json")
    assert reported(root) == set()
    assert run.returncode == 0, run.stdout + run.stderr
    assert "0 findings" in run.stdout


@pytest.mark.slow
def test_excluded_folders_are_not_linted(tmp_path: Path) -> None:
    root = project(tmp_path, config='[tool.jaxlint]\nextend-exclude = ["pkg"]\n')
    run = pytest_run(root, "--jaxlint", "--jaxlint-report", "report.json")
    assert reported(root) == set()
    assert "linted 0 of 0 JAX functions the tests ran" in run.stdout
    assert run.returncode == 0


def test_closures_over_tracers_and_scan_bodies(tmp_path: Path) -> None:
    """A function defined and called inside a traced one closes over that trace's tracers; traced
    again after the test, they become inputs instead of leaking."""
    model = textwrap.dedent('''\
        import jax
        import jax.numpy as jnp


        def integrate(x, rate):
            def body(carry, _):
                return carry + jnp.where(carry > 0, jnp.log(carry), 0.0) * rate, None  # expect JX501
            return jax.lax.scan(body, x, None, length=3)[0]
        ''')
    tests = textwrap.dedent('''\
        import jax
        import jax.numpy as jnp
        from pkg.model import integrate


        def test_integrate():
            assert jax.jit(integrate)(jnp.ones(4), jnp.float32(0.1)).shape == (4,)
        ''')
    root = project(tmp_path, model=model, tests=tests)
    run = pytest_run(root, "--jaxlint", "--jaxlint-report", "report.json")
    assert reported(root) == expected(model), run.stdout
    assert "linted 2 of 2 JAX functions the tests ran" in run.stdout


@pytest.mark.slow
def test_a_crashing_rule_is_a_finding_not_a_crash(tmp_path: Path) -> None:
    root = project(tmp_path)
    (root / "tests" / "conftest.py").write_text(textwrap.dedent('''\
        from jaxlint.rules.jx501_where_nan_gradient import WhereNanGradient

        def broken(ctx):
            raise RuntimeError("boom")

        WhereNanGradient.check_program = classmethod(lambda cls, ctx: broken(ctx))
        '''))
    run = pytest_run(root, "--jaxlint", "--jaxlint-report", "report.json")
    assert "7 passed" in run.stdout
    codes = {code for code, _ in reported(root)}
    assert "JX906" in codes and "JX501" not in codes and "JX401" in codes
    assert "running rule JX501" in (root / "report.json").read_text()


@pytest.mark.slow
def test_under_xdist_the_controller_merges_the_workers_findings(tmp_path: Path) -> None:
    pytest.importorskip("xdist")
    root = project(tmp_path)
    run = pytest_run(root, "--jaxlint", "--jaxlint-report", "report.json", "-n", "2")
    assert "7 passed" in run.stdout, run.stdout + run.stderr
    assert reported(root) == expected(MODEL)
    assert run.returncode == 1
    assert "linted 4 of 4 JAX functions the tests ran, traced 5 of 6" in run.stdout


@pytest.mark.slow
def test_calls_are_watched_without_a_profile_hook_unless_the_project_was_imported_first(tmp_path: Path) -> None:
    """The project's modules are compiled with the watching call (watched_imports.py), which costs
    only the project's calls; one imported before jaxlint started (here by ``-p``) makes no call,
    so the slower profile hook watches, and the summary says why."""
    tests = TESTS + textwrap.dedent('''\


        def test_hook():
            import sys
            with open("profiled.txt", "w") as out:
                out.write(str(sys.getprofile() is not None))
            with open("loader.txt", "w") as out:
                out.write(" ".join(c.__name__ for c in type(sys.modules["pkg.model"].__loader__).__mro__))
        ''')
    root = project(tmp_path, tests=tests)
    run = pytest_run(root, "--jaxlint", "--jaxlint-report", "report.json")
    assert "8 passed" in run.stdout, run.stdout + run.stderr
    assert (root / "profiled.txt").read_text() == "False"
    assert reported(root) == expected(MODEL)
    assert not (root / "pkg" / "__pycache__").exists()  # the compiled call is never cached on disk
    assert "profile hook" not in run.stdout

    # Another import hook's loader (jaxtyping's, as equinox's and diffrax's tests use it): both
    # rewrites apply, the module is type-checked and watched.
    run = pytest_run(root, "--jaxlint", "--jaxlint-report", "report.json",
                     "--jaxtyping-packages=pkg,typing.no_type_check", autoload=True)  # jaxtyping's plugin
    assert "8 passed" in run.stdout, run.stdout + run.stderr
    assert "_JaxtypingLoader" in (root / "loader.txt").read_text()
    assert (root / "profiled.txt").read_text() == "False"
    assert reported(root) == expected(MODEL)
    assert not (root / "pkg" / "__pycache__").exists()

    run = pytest_run(root, "-p", "pkg.model", "--jaxlint", "--jaxlint-report", "report.json")
    assert "8 passed" in run.stdout, run.stdout + run.stderr
    assert (root / "profiled.txt").read_text() == "True"
    assert reported(root) == expected(MODEL)
    assert ("2 project modules (pkg, pkg.model) had been imported before jaxlint started, so calls were "
            "watched with a profile hook") in run.stdout


def test_keeping_a_call_that_flattens_the_projects_own_pytree_does_not_wait_on_itself(tmp_path: Path) -> None:
    """Keeping a call flattens its arguments, which runs the project's own (watched) flatten
    method: the watcher must not be entered again (it waited on its own lock: equinox hung)."""
    model = textwrap.dedent('''\
        import jax
        import jax.numpy as jnp


        @jax.tree_util.register_pytree_node_class
        class Params:
            def __init__(self, w):
                self.w = w

            def tree_flatten(self):
                return (self.w,), None

            @classmethod
            def tree_unflatten(cls, aux, children):
                return cls(*children)


        def loss(params, x):
            return jnp.where(x > 0, jnp.log(x), 0.0).sum() * params.w.sum()  # expect JX501
        ''')
    tests = textwrap.dedent('''\
        import jax
        import jax.numpy as jnp
        from pkg.model import Params, loss


        def test_loss():
            assert jax.grad(loss)(Params(jnp.ones(2)), jnp.ones(3)).w.shape == (2,)
        ''')
    root = project(tmp_path, model=model, tests=tests)
    run = subprocess.run([sys.executable, "-m", "pytest", "-p", "no:cacheprovider", "--jaxlint", "--jaxlint-report",
                          "report.json"], cwd=root, env=environment(), capture_output=True, text=True, timeout=300)
    assert "1 passed" in run.stdout, run.stdout + run.stderr
    assert reported(root) == expected(model)


def test_without_the_flag_nothing_of_jaxlint_runs(tmp_path: Path) -> None:
    tests = TESTS + textwrap.dedent('''\


        def test_jaxlint_is_not_loaded():
            import sys
            assert "jaxlint.pytest_plugin.session" not in sys.modules
            assert sys.getprofile() is None
        ''')
    root = project(tmp_path, tests=tests)
    run = pytest_run(root)
    assert run.returncode == 0, run.stdout + run.stderr
    assert " jaxlint " not in run.stdout and "jaxlint: " not in run.stdout


def test_a_bad_output_format_is_a_usage_error(tmp_path: Path) -> None:
    root = project(tmp_path)
    run = pytest_run(root, "--jaxlint", "--jaxlint-output-format", "yaml")
    assert run.returncode == 4
    assert "invalid output format 'yaml'" in run.stderr


def test_the_coverage_report_names_each_jax_function_the_tests_ran(tmp_path: Path) -> None:
    model = MODEL + textwrap.dedent('''\


        def only_eager(x):
            return jnp.asarray(float(jnp.sum(x)))


        def never_run(x):
            return jnp.log(x)
        ''')
    tests = TESTS + "\n\ndef test_eager():\n    from pkg.model import only_eager\n    only_eager(jnp.ones(2))\n"
    root = project(tmp_path, model=model, tests=tests)
    run = pytest_run(root, "--jaxlint", "--jaxlint-coverage-report", "coverage.json", "--jaxlint-exit-zero")
    assert run.returncode == 0, run.stdout + run.stderr
    report = json.loads((root / "coverage.json").read_text())
    assert [(f["function"], f["linted"]) for f in report["functions"]] == [
        ("my_mapped_function", True), ("safe_log", True), ("make_step.<locals>.step", True), ("Model.apply", True),
        ("only_eager", False)]  # never_run is a JAX function the tests did not run: not in the denominator
    assert report["summary"] == {"jax_functions_ran": 5, "linted": 4, "called_with_arrays": 7, "traced": 5}
    eager = next(f for f in report["called_with_arrays"] if f["qualname"] == "only_eager")
    assert eager["signatures"] == 0 and eager["errors"][0].startswith("ConcretizationTypeError")


@pytest.mark.slow
def test_a_parametrized_test_stops_being_watched_once_it_shows_nothing_new(tmp_path: Path) -> None:
    tests = TESTS + textwrap.dedent('''\


        import pytest


        @pytest.mark.parametrize("scale", [1.0, 2.0, 3.0, 4.0, 5.0, 6.0])
        def test_repeated(scale):
            assert safe_log(jnp.ones(5) * scale).shape == (5,)
        ''')
    root = project(tmp_path, tests=tests)
    run = pytest_run(root, "--jaxlint", "--jaxlint-exit-zero")
    assert "13 passed" in run.stdout, run.stdout + run.stderr
    # safe_log on f32[5] was kept by an earlier test: three runs show nothing new, three are not watched.
    assert "jaxlint: watched 10 of 13 tests: the others repeat a parametrized test" in run.stdout
    every = pytest_run(root, "--jaxlint", "--jaxlint-exit-zero", "--jaxlint-watch-all")
    assert "jaxlint: watched" not in every.stdout and "13 passed" in every.stdout


def test_helpers_in_other_files_report_where_the_user_fixes_them(tmp_path: Path) -> None:
    """A key passed twice to a helper that draws is reported at the second call, naming the
    first; a problem inside a helper module is reported in that module."""
    helpers = textwrap.dedent('''\
        import jax
        import jax.numpy as jnp


        def noise(key, x):
            return x + jax.random.normal(key, x.shape)


        def root(x):
            return jnp.where(x > 0, jnp.sqrt(x), 0.0)  # expect JX501
        ''')
    model = textwrap.dedent('''\
        import jax
        from pkg import helpers


        def step(key, x):
            a = helpers.noise(key, x)
            b = helpers.noise(key, x)  # expect JX401
            return a + b + helpers.root(x)
        ''')
    tests = textwrap.dedent('''\
        import jax
        import jax.numpy as jnp
        from pkg.model import step


        def test_step():
            assert jax.jit(step)(jax.random.key(0), jnp.ones(3)).shape == (3,)
        ''')
    root = project(tmp_path, model=model, tests=tests)
    (root / "pkg" / "helpers.py").write_text(helpers)
    run = pytest_run(root, "--jaxlint", "--jaxlint-report", "report.json")
    found = {(Path(f["filename"]).name, f["code"], f["location"]["row"])
             for f in json.loads((root / "report.json").read_text())}
    # The two calls' stacks differ on every JAX version: no stale-traceback fallback (see expected).
    assert found == {("model.py", "JX401", 7), ("helpers.py", "JX501", 10)}, run.stdout
    reuse = next(f for f in json.loads((root / "report.json").read_text()) if f["code"] == "JX401")
    assert "the call at line 6" in reuse["message"]


@pytest.mark.slow
def test_calls_returning_no_arrays_and_constructors_are_linted(tmp_path: Path) -> None:
    """A call that returns no array is linted on the equations it made; an ``__init__`` that
    refuses to run twice on one instance initializes a new one. A function called without
    arrays is not kept: run again, machinery (a metaclass, a decorator) would change the process."""
    model = textwrap.dedent('''\
        import jax
        import jax.numpy as jnp


        def check_draws(key, n):
            a = jax.random.normal(key, (n,))
            b = jax.random.normal(key, (n,))  # expect JX401
            assert a.shape == b.shape  # called for its check: returns nothing


        class Frozen:
            def __setattr__(self, name, value):
                if name in self.__dict__:
                    raise AttributeError(f"cannot assign to field {name!r}")
                object.__setattr__(self, name, value)

            def __init__(self, key, n):
                self.w = jax.random.normal(key, (n,))
                self.b = jax.random.uniform(key, (n,))  # expect JX401


        def zeros(n):
            return jnp.zeros((n,))
        ''')
    tests = textwrap.dedent('''\
        import jax
        from pkg.model import Frozen, check_draws, zeros


        def test_check():
            check_draws(jax.random.key(0), 3)


        def test_frozen():
            assert Frozen(jax.random.key(1), 4).w.shape == (4,)
            assert zeros(3).shape == (3,)
        ''')
    root = project(tmp_path, model=model, tests=tests)
    run = pytest_run(root, "--jaxlint", "--jaxlint-report", "report.json")
    assert reported(root) == expected(model), run.stdout
    # zeros is called with an int only: not kept, so the JAX functions it ran are 2 of 3 linted.
    # __setattr__ is called with arrays; run again on the tests' instance it refuses: counted.
    assert "linted 2 of 3 JAX functions the tests ran, traced 2 of 3 project functions" in run.stdout


def test_a_norm_the_tests_differentiate_is_reported_in_its_helper(tmp_path: Path) -> None:
    """JX704 reports a norm only on a differentiated path. The plugin traces each called function
    on its own, on plain abstract arguments, so the derivative comes from the tests' tracers: a
    helper the tests reached under jax.grad (here through a lambda of the test file, which is not
    linted, as jax-md's safe_norm is reached from the tests' energies) is reported, also when a
    plain call of the same signature came first; a norm never called under a gradient is not."""
    model = textwrap.dedent('''\
        import jax.numpy as jnp


        def clipped_norm(x, epsilon=1e-7):
            norm = jnp.sqrt(jnp.sum(x ** 2, axis=-1))  # expect JX704
            return jnp.maximum(norm, epsilon)


        def lengths(positions):
            return jnp.linalg.norm(positions, axis=-1)
        ''')
    tests = textwrap.dedent('''\
        import jax
        import jax.numpy as jnp
        from pkg import model


        def test_plain_call_first():
            assert model.clipped_norm(jnp.ones((4, 3))).shape == (4,)


        def test_gradient():
            assert jax.grad(lambda x: jnp.sum(model.clipped_norm(x)))(jnp.ones((4, 3))).shape == (4, 3)


        def test_lengths():
            assert model.lengths(jnp.ones((4, 3))).shape == (4,)
        ''')
    root = project(tmp_path, model=model, tests=tests, config='''
        [tool.jaxlint]
        select = ["JX704"]
        ''')
    run = pytest_run(root, "--jaxlint", "--jaxlint-report", "report.json")
    assert "3 passed" in run.stdout, run.stdout + run.stderr
    assert reported(root) == expected(model), run.stdout
    [finding] = json.loads((root / "report.json").read_text())
    assert "the tests called it under a derivative transform" in finding["message"]


def _warnings_summary(run: subprocess.CompletedProcess) -> str:
    """The warnings summary's lines, and the count in the last line (``1 passed, 2 warnings``)."""
    lines = run.stdout.splitlines()
    start = next((n for n, line in enumerate(lines) if "warnings summary" in line), None)
    summary = [] if start is None else lines[start + 1:next(n for n in range(start + 1, len(lines))
                                                             if lines[n].startswith("-- Docs"))]
    return "\n".join(summary + [lines[-1].split(" in ")[0]])


@pytest.mark.slow
def test_the_plugins_own_flattening_adds_no_warning_to_the_tests(tmp_path: Path) -> None:
    """Keeping a call flattens its arguments, and the report shows them: a generator among them
    made JAX warn "Python iterable type 'generator' is treated as a leaf in PyTree", attributed to
    the user's test. The warnings are those of the run without --jaxlint, counts included: the
    test's own UserWarning, shown once although it is raised on each step."""
    model = textwrap.dedent('''\
        import warnings

        import jax
        import jax.numpy as jnp


        @jax.jit
        def step(w, x):
            return w + x.sum()


        def train(w, batches, extra):
            for x in batches:
                warnings.warn("a step of the project's own")
                w = step(w, x)
            return w
        ''')
    tests = textwrap.dedent('''\
        import jax.numpy as jnp
        from pkg.model import train


        def test_train_on_a_generator():
            batches = (jnp.ones(3) for _ in range(4))
            extra = [map(float, []), iter([1]), {"a": 1}.values()]
            assert float(train(jnp.zeros(()), batches, extra)) == 12.0
        ''')
    root = project(tmp_path, model=model, tests=tests)
    plain = pytest_run(root, "-p", "no:xdist")
    linted = pytest_run(root, "-p", "no:xdist", "--jaxlint", "--jaxlint-no-cache")
    assert "1 passed, 1 warning" in plain.stdout, plain.stdout + plain.stderr
    assert "jaxlint: linted" in linted.stdout, linted.stdout + linted.stderr
    assert _warnings_summary(linted) == _warnings_summary(plain), linted.stdout
