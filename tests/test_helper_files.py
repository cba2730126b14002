"""Findings land where the user can fix them: a problem inside a helper in another project file
is reported in that file; a key passed twice to helpers that draw from it is reported at the
second call, naming the first; a helper in an installed package is reported at the project's
call into it. Real traces (check's pipeline run in the test process), no mocks of the IR."""
from __future__ import annotations

import textwrap
from pathlib import Path

from helpers import check_in_process

from jaxlint.engine.results import CheckResult
from jaxlint.model import Finding
from jaxlint.rules import all_rules

HELPERS = """\
import jax
import jax.numpy as jnp


def noise(key, x):
    return x + jax.random.normal(key, x.shape)


def safe_log(x):
    return jnp.where(x > 0, jnp.log(x), 0.0)


def double_draw(key, x):
    a = jax.random.normal(key, x.shape)
    b = jax.random.uniform(key, x.shape)
    return x + a + b


def loop_body(key, x):
    return x + jax.random.normal(key, x.shape)
"""

MAIN = """\
import jax
import jax.numpy as jnp

from pkg import helpers


# jaxlint: args key=key[], x=f32[8]
@jax.jit
def twice(key, x):
    a = helpers.noise(key, x)
    b = helpers.noise(key, x)
    return a + b


# jaxlint: args key=key[], x=f32[8]
@jax.jit
def inside(key, x):
    return jax.grad(lambda y: helpers.safe_log(y).sum())(x) + helpers.double_draw(key, x)


# jaxlint: args key=key[], x=f32[8]
@jax.jit
def invariant(key, x):
    def body(carry, _):
        return helpers.loop_body(key, carry), None
    return jax.lax.scan(body, x, None, length=4)[0]


# jaxlint: args key=key[], x=f32[8]
@jax.jit
def split_first(key, x):
    k1, k2 = jax.random.split(key)
    return helpers.noise(k1, x) + helpers.noise(k2, x)


# jaxlint: args x=f32[8]
@jax.jit
def guarded(x):
    return helpers.safe_log(x)
"""


def project(tmp_path: Path, helpers: str = HELPERS, main: str = MAIN) -> Path:
    package = tmp_path / "pkg"
    package.mkdir()
    (package / "__init__.py").write_text("")
    (package / "helpers.py").write_text(helpers)
    (package / "main.py").write_text(main)
    return package


def places(result: CheckResult) -> set[tuple[str, str, int]]:
    return {(Path(f.path).name, f.code, f.span.start_line) for f in result.findings}


def at(result: CheckResult, name: str, line: int) -> Finding:
    return next(f for f in result.findings if Path(f.path).name == name and f.span.start_line == line)


def test_helper_problems_reported_in_the_helper_file(tmp_path):
    package = project(tmp_path)
    result = check_in_process([str(package)], all_rules())
    assert places(result) == {
        ("helpers.py", "JX501", 10),  # the where in the helper (differentiated by `inside`)
        ("helpers.py", "JX401", 15),  # the helper draws twice from its own key
        ("main.py", "JX401", 11),  # the caller passes one key to two drawing calls
        ("main.py", "JX401", 25),  # a loop-invariant key reaches the helper from the scan body
    }
    assert result.unchecked_findings == 0
    where = at(result, "helpers.py", 10)
    # Verifying a fix would take the caller's trace: shown, never applied.
    assert where.fix is not None and where.fix.applicability == "display-only"
    assert where.target == "inside"
    assert "line 14" in at(result, "helpers.py", 15).message


def test_key_passed_twice_is_reported_at_the_second_call_naming_the_first(tmp_path):
    package = project(tmp_path)
    result = check_in_process([str(package / "main.py")], all_rules())
    finding = at(result, "main.py", 11)
    assert finding.code == "JX401"
    assert finding.span.start_col == 8  # `helpers.noise(key, x)` on the line, not the def
    assert "the call at line 10" in finding.message and "helpers.py:6" in finding.message
    loop = at(result, "main.py", 25)
    assert "loop-invariant" in loop.message and loop.span.start_col == 15  # the body's call


def test_only_the_files_given_are_reported_and_the_rest_counted(tmp_path):
    package = project(tmp_path)
    result = check_in_process([str(package / "main.py")], all_rules())
    assert {name for name, _, _ in places(result)} == {"main.py"}
    assert result.unchecked_findings == 2  # helpers.py:10 JX501 and :15 JX401


def test_the_count_of_the_rest_respects_their_per_file_ignores(tmp_path):
    package = project(tmp_path)
    (tmp_path / "pyproject.toml").write_text('[tool.jaxlint.per-file-ignores]\n"pkg/helpers.py" = ["JX501"]\n')
    result = check_in_process([str(package / "main.py")], all_rules())
    assert result.unchecked_findings == 1  # helpers.py:15 JX401; its JX501 is turned off there


def test_suppression_in_the_helper_file_applies(tmp_path):
    helpers = HELPERS.replace("jnp.log(x), 0.0)", "jnp.log(x), 0.0)  # noqa: JX501")
    package = project(tmp_path, helpers=helpers)
    result = check_in_process([str(package)], all_rules())
    assert ("helpers.py", "JX501", 10) not in places(result)
    assert not [f for f in result.findings if f.code == "JX800"]
    assert check_in_process([str(package / "main.py")], all_rules()).unchecked_findings == 1


def test_helpers_reached_count_as_linted(tmp_path):
    package = project(tmp_path)
    result = check_in_process([str(package)], all_rules())
    # helpers.py has no target of its own: its four functions are linted through main.py's.
    assert result.jax_functions == result.linted == 4 + 5  # main.py: its 5 targets


def test_quiet_when_the_helpers_are_used_right(tmp_path):
    main = textwrap.dedent("""\
        import jax

        from pkg import helpers


        # jaxlint: args key=key[], x=f32[8]
        @jax.jit
        def good(key, x):
            k1, k2 = jax.random.split(key)
            return helpers.noise(k1, x) + helpers.noise(k2, x)
    """)
    package = project(tmp_path, main=main)
    # Without inference: with it, the helpers never called would be traced with guessed arguments.
    (tmp_path / "jaxlint.toml").write_text("infer-arguments = false\n")
    result = check_in_process([str(package)], all_rules())
    # Each call gets its own key; the helpers with problems are never called: nothing to report.
    assert places(result) == set()
    assert result.traced == 1 and not result.skipped


INSTALLED = """\
import jax
import jax.numpy as jnp


def double(key, x):
    return jax.random.normal(key, x.shape) + jax.random.uniform(key, x.shape)


def log_guarded(x):
    return jnp.where(x > 0, jnp.log(x), 0.0)
"""


def test_installed_package_reported_at_the_projects_call(tmp_path):
    site = tmp_path / "env" / "lib" / "site-packages"
    (site / "extlib").mkdir(parents=True)
    (site / "extlib" / "__init__.py").write_text(INSTALLED)
    main = textwrap.dedent(f"""\
        import sys
        sys.path.insert(0, {str(site)!r})

        import jax
        import extlib


        # jaxlint: args key=key[], x=f32[8]
        @jax.jit
        def uses_library(key, x):
            y = x * 2
            return extlib.double(key, y) + jax.grad(lambda z: extlib.log_guarded(z).sum())(x)
    """)
    package = project(tmp_path, main=main)
    result = check_in_process([str(package / "main.py")], all_rules())
    # The key reuse is inside the library, whose caller can only pass it two keys: reported at
    # the call. The library's own `where` is its authors' to fix: not reported anywhere.
    assert places(result) == {("main.py", "JX401", 12)}
    assert result.unchecked_findings == 0


def test_same_place_in_two_files_is_two_findings(tmp_path):
    """A finding in the helper at the very line and column of one in the target file is its own."""
    helpers = "import jax.numpy as jnp\n\n\ndef hlog(x):\n    return jnp.where(x > 0, jnp.log(x), 0.0)\n"
    main = ("import jax.numpy as jnp\nfrom pkg import helpers\n# jaxlint: args x=f32[8]\ndef both(x):\n"
            "    return jnp.where(x > 0, jnp.log(x), 0.0) + helpers.hlog(x)\n")
    package = project(tmp_path, helpers=helpers, main=main)
    result = check_in_process([str(package)], all_rules())
    assert places(result) == {("main.py", "JX501", 5), ("helpers.py", "JX501", 5)}


def test_fixing_the_helper_file_keeps_the_findings_its_callers_found(tmp_path):
    """--fix on helpers.py re-analyzes it alone; the callers' findings in it are carried over,
    moved with the fixed code (the fix adds ``out_axes`` on a line before them)."""
    own = textwrap.dedent("""\


        def pair(x, y):
            x = x + 1
            return x, x * y


        # jaxlint: args x=f32[3], y=f32[4,3]
        @jax.jit
        def mapped(x, y):
            x, y = jax.vmap(pair, in_axes=(None, 0))(x, y)
            return x[0], y
        """)
    helpers = HELPERS.replace("\n\ndef noise", own + "\n\ndef noise", 1)
    package = project(tmp_path, helpers=helpers)
    where_line = helpers.splitlines().index("    return jnp.where(x > 0, jnp.log(x), 0.0)") + 1
    result = check_in_process([str(package)], all_rules(), fix=True)
    assert [f.code for f in result.fixed] == ["JX101"]
    fixed = (package / "helpers.py").read_text()
    assert "out_axes=(None, 0)" in fixed and "return x, y" in fixed
    assert ("helpers.py", "JX501", where_line) in places(result)
    assert fixed.splitlines()[where_line - 1] == "    return jnp.where(x > 0, jnp.log(x), 0.0)"
    carried = at(result, "helpers.py", where_line)
    line = fixed.splitlines()[where_line - 1]
    assert carried.span.start_col == line.index("jnp.where") and carried.target == "inside"
    assert ("helpers.py", "JX401", helpers.splitlines().index("    b = jax.random.uniform(key, x.shape)") + 1) \
        in places(result)
