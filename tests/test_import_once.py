"""A module its parent package already imported is reused, not run a second time (worker/importer.py).

distrax's ``__init__.py`` imports ``dirichlet.py``, which registers a KL divergence at import in a
registry that refuses a duplicate: importing the package and then running the file again made
"has already been registered" a JX901 of jaxlint's own doing. Through the real CLI.
"""
from __future__ import annotations

import json
import os
import re
import subprocess
import sys
from pathlib import Path

REGISTRY = """\
KL = {}


def register(name):
    def wrap(function):
        if name in KL:
            raise ValueError(f"{name} has already been registered")
        KL[name] = function
        return function
    return wrap
"""

DIRICHLET = """\
import jax
import jax.numpy as jnp

from regpkg.registry import register


@register("dirichlet")
def kl_dirichlet(x: jax.Array) -> jax.Array:
    return jnp.sum(x * 2.0)


def blackbox_function(x, y):
    return x + 1, (x + 1) * y


@jax.jit
def mapped(x, y):
    x, y = jax.vmap(blackbox_function, in_axes=(None, 0))(x, y)
    return x[0], y


mapped.lower(1.0, jnp.arange(10.0))
"""


def make_package(root: Path, init: str = "from regpkg import registry\nfrom regpkg.dirichlet import kl_dirichlet\n",
                 dirichlet: str = DIRICHLET) -> Path:
    package = root / "regpkg"
    package.mkdir()
    (package / "__init__.py").write_text(init)
    (package / "registry.py").write_text(REGISTRY)
    (package / "dirichlet.py").write_text(dirichlet)
    return root


def check(root: Path, *arguments: str) -> tuple[list[dict], str]:
    """(findings, the summary line) of ``jaxlint check`` run in ``root``."""
    done = subprocess.run([sys.executable, "-m", "jaxlint", "check", "--isolated", "--no-cache", "--output-format",
                           "json", *arguments], cwd=root, capture_output=True, text=True, timeout=600,
                          env={**os.environ, "JAX_PLATFORMS": "cpu"})
    assert done.returncode in (0, 1), done.stdout + done.stderr
    return json.loads(done.stdout), done.stderr


def codes(findings: list[dict]) -> list[tuple[str, str]]:
    return sorted((Path(f["filename"]).name, f["code"]) for f in findings)


def test_a_module_its_package_imports_is_imported_once(tmp_path):
    root = make_package(tmp_path)
    findings, summary = check(root, "regpkg/dirichlet.py")
    assert codes(findings) == [("dirichlet.py", "JX101")]
    assert re.search(r"linted 2 of 2 JAX functions", summary), summary


def test_the_package_folder_is_checked_without_a_second_run(tmp_path):
    root = make_package(tmp_path)
    findings, summary = check(root, "regpkg")
    assert codes(findings) == [("dirichlet.py", "JX101")]
    assert re.search(r"linted 2 of 2 JAX functions", summary), summary


def test_a_module_that_registers_twice_by_itself_still_fails_to_import(tmp_path):
    twice = DIRICHLET + '\n\n@register("dirichlet")\ndef again(x):\n    return x\n'
    root = make_package(tmp_path, dirichlet=twice)
    findings, _ = check(root, "regpkg/dirichlet.py")
    assert codes(findings) == [("dirichlet.py", "JX901")]
    assert "already been registered" in findings[0]["message"]


def test_a_module_its_package_does_not_import_is_still_imported(tmp_path):
    root = make_package(tmp_path, init="")
    findings, summary = check(root, "regpkg/dirichlet.py")
    assert codes(findings) == [("dirichlet.py", "JX101")]
    assert re.search(r"linted 2 of 2 JAX functions", summary), summary


def test_the_fix_is_verified_with_the_package_importing_the_fixed_file(tmp_path):
    """The fixer imports the fixed source in a fresh worker: the parent's import gets that source too."""
    root = make_package(tmp_path)
    findings, _ = check(root, "--fix", "regpkg/dirichlet.py")
    assert findings == []
    fixed = (root / "regpkg" / "dirichlet.py").read_text()
    assert "out_axes=(None, 0)" in fixed and "return x, y" in fixed
