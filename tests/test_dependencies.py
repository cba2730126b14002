"""A module that cannot be imported because a package outside the project is missing where jaxlint
runs is a coverage entry ("optional dependency missing: ..."), not a JX901 finding; an import
failure of the project's own (a typo, a module or name it lacks) stays JX901. Through the real
command line, on modules imported for their targets and on modules imported only to infer
arguments."""
from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

# A name no distribution uses, so the import fails wherever the tests run.
ABSENT = "jaxlint_test_absent_dependency"

NEEDS_ABSENT = f"""\
import jax
import jax.numpy as jnp

import {ABSENT}  # noqa: F401


@jax.jit
def jitted(x):
    return jnp.sin(x)


def plain(x):
    return jnp.cos(x)
"""

# Imported only with --infer-arguments: no jit, transform or hint names its function.
PLAIN_NEEDS_ABSENT = f"""\
import jax.numpy as jnp
from {ABSENT}.models import Model  # noqa: F401


def inferred(x):
    return jnp.tanh(x)
"""

# numpyro's contrib/nested_sampling.py: a message raised by hand over the real ImportError.
REASKED_ABSENT = f"""\
import jax
import jax.numpy as jnp

try:
    import {ABSENT}  # noqa: F401
except ImportError as e:
    raise ImportError(f"{{e}}: to use this module, install {ABSENT}") from e


@jax.jit
def reasked(x):
    return jnp.sin(x)
"""
# The same over the project's own typo: still the project's failure.
REASKED_TYPO = """\
import jax

try:
    from utilz import helper
except ImportError as e:
    raise ImportError("install the extras") from e


@jax.jit
def reasked_typo(x):
    return helper(x)
"""
UTILS = """\
import jax.numpy as jnp


def helper(x):
    return jnp.tan(x)
"""

TYPO = """\
import jax

from utilz import helper


@jax.jit
def typo(x):
    return helper(x)
"""

MISSING_NAME = """\
import jax

from utils import not_defined


@jax.jit
def missing_name(x):
    return not_defined(x)
"""

MISSING_SUBMODULE = """\
import jax

from .absent_part import helper


@jax.jit
def relative(x):
    return helper(x)
"""

FINE = """\
import jax
import jax.numpy as jnp


@jax.jit
def fine(x):
    return jnp.exp(x)


fine(jnp.ones(3))
"""


def jaxlint(*args: str, cwd: Path) -> subprocess.CompletedProcess:
    return subprocess.run([sys.executable, "-m", "jaxlint", "check", "-n", *args], cwd=cwd, capture_output=True,
                          text=True, timeout=600)


@pytest.fixture(scope="module")
def project(tmp_path_factory: pytest.TempPathFactory) -> Path:
    root = tmp_path_factory.mktemp("dependencies")
    (root / "pyproject.toml").write_text("[tool.jaxlint]\n")
    (root / "needs_absent.py").write_text(NEEDS_ABSENT)
    (root / "plain_needs_absent.py").write_text(PLAIN_NEEDS_ABSENT)
    (root / "utils.py").write_text(UTILS)
    (root / "reasked_absent.py").write_text(REASKED_ABSENT)
    (root / "reasked_typo.py").write_text(REASKED_TYPO)
    (root / "typo.py").write_text(TYPO)
    (root / "missing_name.py").write_text(MISSING_NAME)
    (root / "pkg").mkdir()
    (root / "pkg" / "__init__.py").write_text("")
    (root / "pkg" / "missing_submodule.py").write_text(MISSING_SUBMODULE)
    (root / "fine.py").write_text(FINE)
    return root


@pytest.fixture(scope="module")
def inferred_run(project: Path) -> tuple[subprocess.CompletedProcess, dict]:
    report = project / "coverage.json"
    run = jaxlint("--infer-arguments", "--output-format", "json", "--coverage-report", str(report), ".", cwd=project)
    return run, json.loads(report.read_text())


def test_the_projects_own_import_failures_stay_jx901(inferred_run) -> None:
    run, _ = inferred_run
    findings = json.loads(run.stdout)
    assert sorted((Path(f["filename"]).name, f["code"]) for f in findings) == [
        ("missing_name.py", "JX901"), ("missing_submodule.py", "JX901"), ("reasked_typo.py", "JX901"),
        ("typo.py", "JX901")]
    assert all(ABSENT not in f["message"] for f in findings)


def test_a_missing_dependency_is_a_coverage_entry(inferred_run) -> None:
    run, report = inferred_run
    entries = {(Path(u["path"]).name, u["target"]): (u["kind"], u["reason"]) for u in report["untraced"]}
    missing = ("dependency-missing", f"optional dependency missing: {ABSENT}")
    assert entries[("needs_absent.py", "jitted")] == missing
    assert entries[("needs_absent.py", "plain")] == missing
    assert entries[("plain_needs_absent.py", "inferred")] == missing  # imported only to infer arguments
    assert entries[("reasked_absent.py", "reasked")] == missing  # raised by hand from the real one
    assert entries[("typo.py", "typo")][0] == "import-failed"
    assert "3 modules not imported: optional dependency missing: " + ABSENT in run.stderr


def test_show_untraced_says_to_install_it(project: Path) -> None:
    run = jaxlint("--show-untraced", "needs_absent.py", "fine.py", cwd=project)
    assert run.returncode == 0, run.stdout  # no finding: the missing package is not the code's error
    assert f"needs_absent.py:8: jitted [dependency-missing] optional dependency missing: {ABSENT}" in run.stderr
    assert "install it there" in run.stderr
    assert "linted 1 of 3 JAX functions" in run.stderr
    assert (f"warning: linted only 1 of 3 JAX functions; install the packages the modules import where jaxlint "
            f"runs ({ABSENT}): 2 of the JAX functions are in modules that need them") in run.stderr


def test_a_missing_dependency_without_inference_is_no_finding_either(project: Path) -> None:
    run = jaxlint("--output-format", "json", "needs_absent.py", "typo.py", cwd=project)
    assert [Path(f["filename"]).name for f in json.loads(run.stdout)] == ["typo.py"]


def test_an_installed_package_that_raises_on_import_is_a_coverage_entry(tmp_path: Path) -> None:
    """tensorflow_probability 0.25 raises AttributeError on import under JAX 0.10 (numpyro's
    contrib/tfp): the installed package's failure, not the module's. An error an installed
    package's function raises when the module calls it at import stays JX901."""
    installed = tmp_path / "env" / "site-packages"
    (installed / "brokendep").mkdir(parents=True)
    (installed / "brokendep" / "__init__.py").write_text("import jax\n\njax.no_such_attribute\n")
    root = tmp_path / "project"
    root.mkdir()
    (root / "uses_broken.py").write_text("import jax\nimport brokendep  # noqa: F401\n\n\n"
                                         "@jax.jit\ndef f(x):\n    return x\n")
    (root / "calls_wrongly.py").write_text("import jax\nimport jax.numpy as jnp\n\njnp.ones(3) @ jnp.ones(4)\n\n\n"
                                           "@jax.jit\ndef g(x):\n    return x\n")
    env = {**os.environ, "PYTHONPATH": os.pathsep.join([str(installed), os.environ.get("PYTHONPATH", "")])}
    run = subprocess.run([sys.executable, "-m", "jaxlint", "check", "-n", "--output-format", "json", "."],
                         cwd=root, env=env, capture_output=True, text=True, timeout=600)
    assert [(Path(f["filename"]).name, f["code"]) for f in json.loads(run.stdout)] == [("calls_wrongly.py", "JX901")]
    assert ("1 module not imported: installed dependency broken on import (AttributeError at __init__.py:3): "
            "brokendep") in run.stderr, run.stderr
