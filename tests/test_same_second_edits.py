"""Edits a file's times cannot tell apart (git's "racy" entries): the same size, in the same second
as what was built from the file before, the modification time put back with ``os.utime`` (as an
edit within that second leaves it, whatever the filesystem's resolution). Whatever jaxlint keeps of
a file must follow its bytes. Real ``jaxlint check`` runs in subprocesses; the test-run store's
side is in test_pytest_store.py."""
from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

HELPERS = "USE_LOG = 0\n"

MODEL = '''\
import jax.numpy as jnp

from pkg import helpers


# jaxlint: args x=f32[3]
def loss(x):
    if helpers.USE_LOG:
        return jnp.sum(jnp.where(x > 0, jnp.log(x), 0.0))  # JX501 once helpers says so
    return jnp.sum(x)
'''


def _environment(**extra: str) -> dict[str, str]:
    env = {k: v for k, v in os.environ.items()
           if k not in ("JAXLINT_OUTPUT_FORMAT", "JAXLINT_NO_CACHE", "JAXLINT_CACHE_DIR", "PYTHONDONTWRITEBYTECODE")}
    env["JAX_PLATFORMS"] = "cpu"
    env.update(extra)
    return env


def _codes(root: Path, *args: str) -> list[str]:
    run = subprocess.run([sys.executable, "-m", "jaxlint", "check", "--output-format", "concise", *args, "pkg/model.py"],
                         cwd=root, env=_environment(), capture_output=True, text=True, timeout=600)
    assert run.returncode in (0, 1), run.stdout + run.stderr
    return [line.split()[1] for line in run.stdout.splitlines() if ": JX" in line]


def test_an_imported_module_edited_in_the_same_second_as_its_pyc_is_run_from_its_source(tmp_path: Path) -> None:
    """The user's own run of the code left ``pkg/__pycache__/helpers.*.pyc``; Python trusts a .pyc
    whose source has the same size and modification time (whole seconds), so the worker ran the
    old ``USE_LOG = 0`` after the edit to ``USE_LOG = 1`` and reported nothing. A .pyc written
    within 2 seconds of the source's last change is not trusted."""
    (tmp_path / "pkg").mkdir()
    (tmp_path / "pkg" / "__init__.py").write_text("")
    helpers = tmp_path / "pkg" / "helpers.py"
    helpers.write_text(HELPERS)
    (tmp_path / "pkg" / "model.py").write_text(MODEL)
    assert _codes(tmp_path) == []  # the result cache holds the module as it was
    before = helpers.stat()
    subprocess.run([sys.executable, "-c", "import pkg.helpers"], cwd=tmp_path, env=_environment(), check=True)
    assert list((tmp_path / "pkg" / "__pycache__").glob("helpers.*.pyc"))
    helpers.write_text(HELPERS.replace("0", "1"))
    os.utime(helpers, ns=(before.st_atime_ns, before.st_mtime_ns))
    assert _codes(tmp_path, "--no-cache") == ["JX501"]
    assert _codes(tmp_path) == ["JX501"]  # the cache's entry follows the bytes too


def test_the_pytest_configuration_is_read_again_after_an_edit_its_times_cannot_tell(tmp_path: Path) -> None:
    """The editor server remembers each folder's pytest configuration while the files it read
    keep their stamps: an edit in the same tick that keeps the size keeps the stamp, so a file
    changed within the racy margin is read again (and parsed again only if its bytes differ)."""
    from jaxlint.config.pytest_ini import find_pytest_config

    ini = tmp_path / "pytest.ini"
    ini.write_text("[pytest]\npython_files = a_*.py\n")
    assert find_pytest_config(str(tmp_path)).python_files == ("a_*.py",)
    before = ini.stat()
    ini.write_text("[pytest]\npython_files = b_*.py\n")
    os.utime(ini, ns=(before.st_atime_ns, before.st_mtime_ns))
    assert find_pytest_config(str(tmp_path)).python_files == ("b_*.py",)
