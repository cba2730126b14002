"""The Python API: jaxlint.lint / assert_clean / lint_with trace a function in this process.

The founding pattern is defined here (examples/founding.py prints on import), so findings point
into this file.
"""
from __future__ import annotations

import inspect
import json
import subprocess
import sys
from functools import partial

import jax
import jax.numpy as jnp
import pytest
from jax import vmap as aliased_vmap

import jaxlint


def blackbox(x, y):
    x = x + 1  # does not depend on y
    return x, x * y


@jax.jit
def founding(x, y):
    x, y = jax.vmap(blackbox, in_axes=(None, 0))(x, y)
    return x[0], y


@jax.jit
def fixed(x, y):
    x, y = jax.vmap(blackbox, in_axes=(None, 0), out_axes=(None, 0))(x, y)
    return x, y


def eager(x, y):
    x, y = aliased_vmap(blackbox, in_axes=(None, 0))(x, y)  # bound before jaxlint was imported
    return x[0], y


def with_select(y, select, ignore=None):  # jaxlint's option names are fn's own keywords here
    x, y = jax.vmap(blackbox, in_axes=(None, 0))(select, y)
    return x[0], y


class Model:
    def __init__(self, scale):
        self.scale = scale

    def apply(self, x, y):
        x, y = jax.vmap(blackbox, in_axes=(None, 0))(x, y)
        return x[0] * self.scale, y


def vmap_line(fn) -> int:
    lines, first = inspect.getsourcelines(inspect.unwrap(fn))
    return first + next(i for i, line in enumerate(lines) if "vmap(" in line)


Y = jnp.arange(10.0)


def test_founding_with_real_arguments() -> None:
    [finding] = jaxlint.lint(founding, 1, Y)  # 1 is a static value, Y an array
    assert finding.code == "JX101" and finding.target == "founding"
    assert finding.path == __file__
    assert (finding.span.start_line, finding.span.start_col) == (vmap_line(founding), 11)
    assert "(10 copies)" in finding.message and "none in compiled code" in finding.message
    assert finding.fix is not None and finding.fix.applicability == "safe"


def test_founding_with_abstract_arguments() -> None:
    x, y = jax.ShapeDtypeStruct((), jnp.int32), jax.ShapeDtypeStruct((5,), jnp.float32)
    [finding] = jaxlint.lint(founding, x, y)
    assert finding.code == "JX101" and "(5 copies)" in finding.message


def test_fixed_form_is_clean() -> None:
    assert jaxlint.lint(fixed, 1, Y) == []
    jaxlint.assert_clean(fixed, 1, Y)


def test_assert_clean_lists_the_findings_like_the_cli() -> None:
    with pytest.raises(AssertionError) as raised:
        jaxlint.assert_clean(founding, 1, Y)
    message = str(raised.value)
    line = vmap_line(founding)
    assert message.startswith("jaxlint: 1 finding in founding:\n")
    assert f"test_api.py:{line}:12: JX101 [*] vmap output [0]" in message
    assert f"{line} |     x, y = jax.vmap(blackbox, in_axes=(None, 0))(x, y)" in message


def test_called_before_and_jit_wrapped() -> None:
    founding(1, Y)  # JAX's trace cache now holds founding: lint must trace it again
    assert [f.code for f in jaxlint.lint(founding, 1, Y)] == ["JX101"]
    jitted = jax.jit(eager)
    [finding] = jaxlint.lint(jitted, 1.0, Y)
    assert finding.target == "eager" and "none in compiled code" in finding.message
    # Outside jit the broadcast is materialized; `from jax import vmap` is seen too.
    assert "materializes the broadcast" in jaxlint.lint(eager, 1.0, Y)[0].message
    assert founding(1, Y)[0] == 2  # the function still works afterwards


def test_bound_method_and_partial() -> None:
    [finding] = jaxlint.lint(Model(2.0).apply, 1.0, Y)
    assert finding.target == "Model.apply" and finding.span.start_line == vmap_line(Model.apply)
    assert [f.code for f in jaxlint.lint(partial(founding, 1), Y)] == ["JX101"]


def test_select_and_ignore() -> None:
    assert jaxlint.lint_with(ignore=["JX101"]).lint(founding, 1, Y) == []
    assert jaxlint.lint_with(select="JX9").lint(founding, 1, Y) == []
    assert [f.code for f in jaxlint.lint_with(select="JX1,trace-error").lint(founding, 1, Y)] == ["JX101"]
    with pytest.raises(ValueError, match="no rule is selected"):  # as specific: the ignore wins, none is left
        jaxlint.lint_with(select=["vmap-unbatched-output"], ignore="JX101").assert_clean(founding, 1, Y)
    with pytest.raises(ValueError, match="unknown rule selector"):
        jaxlint.lint_with(select=["JX0"])


def test_fn_keywords_named_like_options_reach_fn() -> None:
    [finding] = jaxlint.lint(with_select, Y, select=1.0, ignore="kept")
    assert finding.code == "JX101"


def test_trace_errors_propagate() -> None:
    with pytest.raises(TypeError):
        jaxlint.lint(founding, 1)  # y missing


def test_import_jaxlint_stays_jax_free() -> None:
    code = "import sys, jaxlint; assert 'jax' not in sys.modules; jaxlint.lint; assert 'jax' in sys.modules"
    subprocess.run([sys.executable, "-c", code], check=True)


FOUNDING_MODULE = '''import jax


def blackbox(x, y):
    x = x + 1
    return x, x * y


@jax.jit
def founding(x, y):
    x, y = jax.vmap(blackbox, in_axes=(None, 0))(x, y){comment}
    return x[0], y
'''


def _founding_from(folder, name: str, comment: str = ""):
    """``founding`` of a module written to ``folder`` (its own file, so its comments and its
    configuration are jaxlint's to read)."""
    import importlib.util

    path = folder / f"{name}.py"
    path.write_text(FOUNDING_MODULE.format(comment=comment))
    spec = importlib.util.spec_from_file_location(f"api_settle_{name}", path)
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module.founding


def test_assert_clean_honours_noqa_as_check_does(tmp_path) -> None:
    (tmp_path / "jaxlint.toml").write_text("")
    assert [f.code for f in jaxlint.lint(_founding_from(tmp_path, "plain"), 1, Y)] == ["JX101"]
    silenced = _founding_from(tmp_path, "silenced", "  # noqa: JX101")
    assert jaxlint.lint(silenced, 1, Y) == []
    jaxlint.assert_clean(silenced, 1, Y)
    # A comment for another code silences nothing; JX800 stays quiet (one function says too little).
    other = _founding_from(tmp_path, "other", "  # noqa: JX301")
    assert [f.code for f in jaxlint.lint(other, 1, Y)] == ["JX101"]


def test_assert_clean_honours_per_file_ignores(tmp_path) -> None:
    (tmp_path / "jaxlint.toml").write_text('[per-file-ignores]\n"ignored_*.py" = ["JX101"]\n')
    jaxlint.assert_clean(_founding_from(tmp_path, "ignored_here"), 1, Y)
    with pytest.raises(AssertionError, match="JX101"):
        jaxlint.assert_clean(_founding_from(tmp_path, "reported_here"), 1, Y)


def test_lint_selects_rules_as_the_files_configuration_does(tmp_path, capsys) -> None:
    """The project's ``ignore`` turns JX101 off for lint as for check; lint_with's selection lies
    over the configuration as check's flags do."""
    from jaxlint.cli.main import main

    (tmp_path / "pyproject.toml").write_text('[tool.jaxlint]\nignore = ["JX101"]\n')
    founding_here = _founding_from(tmp_path, "configured")
    assert main(["check", str(tmp_path), "--output-format", "json"]) == 0
    assert json.loads(capsys.readouterr().out) == []
    assert jaxlint.lint(founding_here, 1, Y) == []
    jaxlint.assert_clean(founding_here, 1, Y)
    assert [f.code for f in jaxlint.lint_with(select="JX101").lint(founding_here, 1, Y)] == ["JX101"]
