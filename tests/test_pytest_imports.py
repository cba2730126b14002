"""Test files and conftests are imported as pytest imports them (engine/imports.py), with the
project's pytest configuration (config/pytest_ini.py); other files as before.

Each project below has a package ``proj`` at its root and a ``tests/`` folder without
``__init__.py``. The test modules check at import time what pytest would give them (sys.path,
their ``__name__``) and raise otherwise: a JX901 says how the import differed from pytest's.
"""
from __future__ import annotations

import json
import os
import re
import subprocess
import sys
from pathlib import Path

import pytest

from jaxlint.config.pytest_ini import find_pytest_config
from jaxlint.engine.imports import import_plan

TARGET = """\
import jax
from proj.core import scale


# jaxlint: args x=f32[3]
@jax.jit
def doubled(x):
    return jax.vmap(scale)(x)
"""


def make_project(root: Path, pytest_config: dict[str, str] | None = None, test_module: str = "",
                 name: str = "test_core.py") -> Path:
    """``proj/core.py``, ``tests/<name>`` importing it (with ``test_module``'s checks first) and
    the pytest configuration files given (name -> text)."""
    (root / "proj").mkdir()
    (root / "proj" / "__init__.py").write_text("")
    (root / "proj" / "core.py").write_text("def scale(x):\n    return x * 2.0\n")
    (root / "tests").mkdir()
    (root / "tests" / name).write_text("import os\nimport sys\n" + test_module + TARGET)
    for file, text in (pytest_config or {}).items():
        (root / file).write_text(text)
    return root


def check(root: Path, *paths: str) -> tuple[list[dict], int]:
    """(findings, targets traced) of ``jaxlint check`` run in ``root`` by the real CLI."""
    done = subprocess.run([sys.executable, "-m", "jaxlint", "check", "--isolated", "--output-format", "json",
                           *(paths or ["."])], cwd=root, capture_output=True, text=True, timeout=600,
                          env={**os.environ, "JAX_PLATFORMS": "cpu"})
    assert done.returncode in (0, 1), done.stdout + done.stderr
    traced = re.search(r"(\d+) targets? traced", done.stderr)
    assert traced, done.stderr
    return json.loads(done.stdout), int(traced[1])


def import_failures(findings: list[dict]) -> list[str]:
    return [f"{f['filename']}: {f['message']}" for f in findings if f["code"] == "JX901"]


def relative(root: Path, failures: list[str]) -> list[str]:
    """The files of import failures, relative to ``root``."""
    return [os.path.relpath(failure.split(": ")[0], root) for failure in failures]


PYTHONPATH = {"pyproject.toml": '[tool.pytest.ini_options]\npythonpath = ["."]\n'}


def test_pythonpath_puts_the_project_root_on_sys_path_for_the_tests(tmp_path):
    root = make_project(tmp_path, PYTHONPATH)
    findings, traced = check(root)
    assert import_failures(findings) == []
    assert traced == 1


@pytest.mark.parametrize("file, text", [
    ("pytest.ini", "[pytest]\npythonpath = .\n"),
    (".pytest.ini", "[pytest]\npythonpath = .\n"),
    ("tox.ini", "[tox]\nenvlist = py311\n\n[pytest]\npythonpath = .\n"),
    ("setup.cfg", "[metadata]\nname = proj\n\n[tool:pytest]\npythonpath = .\n"),
    ("pyproject.toml", '[tool.pytest]\npythonpath = ["."]\n'),  # pytest 9's native TOML table
    ("pytest.toml", '[pytest]\npythonpath = ["."]\n'),
])
def test_each_pytest_configuration_file_is_read(tmp_path, file, text):
    make_project(tmp_path, {file: text})
    found = find_pytest_config(str(tmp_path / "tests"))
    assert found.rootdir == str(tmp_path) and found.inifile == str(tmp_path / file)
    assert found.pythonpath == (str(tmp_path),)
    plan = import_plan(str(tmp_path / "tests" / "test_core.py"))
    assert plan.module == "test_core" and plan.root == str(tmp_path)
    assert plan.sys_path == [str(tmp_path / "tests"), str(tmp_path)]


def test_a_file_without_a_pytest_section_is_passed_over_and_pytest_ini_wins(tmp_path):
    (tmp_path / "tests").mkdir()
    (tmp_path / "tox.ini").write_text("[tox]\nenvlist = py311\n")  # no [pytest]: not the configuration
    (tmp_path / "pytest.ini").write_text("")  # pytest.ini is, even empty
    (tmp_path / "tests" / "setup.cfg").write_text("[metadata]\nname = x\n")
    assert find_pytest_config(str(tmp_path / "tests")).inifile == str(tmp_path / "pytest.ini")


def test_a_root_conftest_puts_the_rootdir_on_sys_path(tmp_path):
    root = make_project(tmp_path, {"pytest.ini": "[pytest]\n", "conftest.py": ""},
                        test_module="assert sys.path[0] == os.path.dirname(__file__), sys.path\n")
    (root / "tests" / "conftest.py").write_text("import proj\n")  # pytest imports it the same way
    findings, traced = check(root)
    assert import_failures(findings) == []
    assert traced == 1


def test_without_pytest_configuration_the_tests_folder_alone_is_on_sys_path(tmp_path):
    """No pythonpath, no root conftest: pytest cannot import proj from the tests either."""
    root = make_project(tmp_path, {"pytest.ini": "[pytest]\n"})
    findings, _ = check(root)
    assert relative(root, import_failures(findings)) == ["tests/test_core.py"]
    assert "No module named 'proj'" in import_failures(findings)[0]


IMPORTLIB_CHECKS = """\
if __name__ != "tests.test_core":
    raise RuntimeError(f"named {__name__}")
if os.path.dirname(__file__) in sys.path:
    raise RuntimeError("the tests folder is on sys.path")
"""


def test_importlib_mode_names_the_module_from_the_rootdir_and_leaves_sys_path(tmp_path):
    root = make_project(tmp_path, {"pyproject.toml": (
        '[tool.pytest.ini_options]\npythonpath = ["."]\naddopts = "-q --import-mode=importlib"\n')},
        test_module=IMPORTLIB_CHECKS)
    findings, traced = check(root)
    assert import_failures(findings) == []
    assert traced == 1


def test_importlib_mode_without_pythonpath_puts_nothing_on_sys_path(tmp_path):
    """As under the `pytest` command: neither the tests folder nor the rootdir is importable."""
    root = make_project(tmp_path, {"pytest.ini": "[pytest]\naddopts = --import-mode=importlib\n"},
                        test_module=IMPORTLIB_CHECKS + "assert os.path.dirname(os.path.dirname(__file__)) not in sys.path\n")
    findings, _ = check(root)
    assert relative(root, import_failures(findings)) == ["tests/test_core.py"]
    assert "No module named 'proj'" in import_failures(findings)[0]
    plan = import_plan(str(root / "tests" / "test_core.py"))
    assert (plan.module, plan.sys_path, plan.sys_path_appended) == ("tests.test_core", [], [])


APPEND_CHECKS = """\
if sys.path[-1] != os.path.dirname(__file__):
    raise RuntimeError(f"the tests folder is not last on sys.path: {sys.path}")
"""


def test_append_mode_puts_the_tests_folder_last_on_sys_path(tmp_path):
    root = make_project(tmp_path, {"pytest.ini": "[pytest]\npythonpath = .\naddopts = --import-mode append\n"},
                        test_module=APPEND_CHECKS)
    findings, traced = check(root)
    assert import_failures(findings) == []
    assert traced == 1


def test_prepend_and_append_order_the_conftest_and_test_folders(tmp_path):
    (tmp_path / "tests" / "unit").mkdir(parents=True)
    (tmp_path / "conftest.py").write_text("")
    (tmp_path / "tests" / "unit" / "conftest.py").write_text("")
    (tmp_path / "tests" / "unit" / "__init__.py").write_text("")  # a package: its root is tests/
    test = str(tmp_path / "tests" / "unit" / "test_x.py")
    Path(test).write_text("")
    (tmp_path / "pytest.ini").write_text("[pytest]\npythonpath = src\n")
    prepend = import_plan(test)
    assert prepend.module == "unit.test_x"
    assert prepend.sys_path == [str(tmp_path / "tests"), str(tmp_path), str(tmp_path / "src")]
    assert prepend.sys_path_appended == [] and not prepend.packages_from_files
    (tmp_path / "pytest.ini").write_text("[pytest]\npythonpath = src\naddopts = --import-mode=append\n")
    append = import_plan(test)
    assert append.module == "unit.test_x"
    assert append.sys_path == [str(tmp_path / "src")]
    assert append.sys_path_appended == [str(tmp_path), str(tmp_path / "tests")]


def test_custom_python_files_are_test_modules(tmp_path):
    root = make_project(tmp_path, {"pytest.ini": "[pytest]\npythonpath = .\npython_files = check_*.py\n"},
                        name="check_core.py")
    findings, traced = check(root)
    assert import_failures(findings) == []
    assert traced == 1


def test_a_module_that_is_not_a_test_file_is_imported_as_before(tmp_path):
    """pytest's pythonpath is for its test run: a script beside the tests does not get it."""
    root = make_project(tmp_path, PYTHONPATH)
    (root / "tests" / "helpers.py").write_text(TARGET)
    findings, traced = check(root)
    assert relative(root, import_failures(findings)) == ["tests/helpers.py"]
    assert traced == 1  # the test module's target
    plan = import_plan(str(root / "tests" / "helpers.py"))
    assert (plan.module, plan.root, plan.sys_path) == ("helpers", str(root / "tests"), None)


@pytest.mark.parametrize("file, text", [
    ("pyproject.toml", "[tool.pytest.ini_options\npythonpath = ['.']\n"),
    ("pytest.ini", "pythonpath = .\n[pytest\n"),
    ("setup.cfg", "[tool:pytest]\npythonpath = .\n  [broken\n\x00"),
    ("pytest.ini", "[pytest]\naddopts = --import-mode=sideways '\n"),
])
def test_a_broken_pytest_configuration_never_stops_the_check(tmp_path, file, text):
    root = make_project(tmp_path, {file: text})
    findings, _ = check(root)
    assert {f["code"] for f in findings} <= {"JX901"}
    plan = import_plan(str(root / "tests" / "test_core.py"))
    assert plan.module == "test_core" and plan.sys_path[0] == str(root / "tests")


def test_a_configuration_created_or_changed_later_is_seen(tmp_path):
    """The editor server's process lives long: what it remembers follows the files."""
    make_project(tmp_path, {"pyproject.toml": "[tool.jaxlint]\n"})
    tests = str(tmp_path / "tests")
    assert find_pytest_config(tests).pythonpath == ()
    (tmp_path / "pyproject.toml").write_text('[tool.pytest.ini_options]\npythonpath = ["src"]\n')
    assert find_pytest_config(tests).pythonpath == (str(tmp_path / "src"),)
    (tmp_path / "tests" / "pytest.ini").write_text("[pytest]\npythonpath = ..\n")
    assert find_pytest_config(tests).rootdir == tests
    assert find_pytest_config(tests).pythonpath == (str(tmp_path),)


REGISTRY = """\
import builtins

# A registry that outlives the package's modules (tensorflow_probability's KL table, for distrax):
# registering the same class twice raises, as a module run a second time would.
registered = builtins.__dict__.setdefault("_proj_registry", set())


def register(cls):
    if cls in registered:
        raise ValueError(f"{cls.__name__} has already been registered")
    registered.add(cls)
"""


def test_a_test_file_inside_the_package_forgets_the_package_after_its_job(tmp_path):
    """No pytest configuration: the test file's own folder is pytest's rootdir, but the modules it
    imports from the package around it are the project's all the same (distrax's tests sit next
    to its modules). They are forgotten after its job, so the next file of the same worker imports
    them afresh instead of running one of them a second time against the old ones."""
    (tmp_path / "proj" / "tests").mkdir(parents=True)
    files = {
        "__init__.py": "from proj import base, with_registry\n",
        "base.py": "class Base:\n    pass\n",
        "registry.py": REGISTRY,
        "with_registry.py": "import jax.numpy as jnp\nfrom proj.base import Base\nfrom proj.registry import register\n\n"
                          "register(Base)\n\n\n# jaxlint: args x=f32[3]\ndef double(x):\n    return jnp.sin(x) * 2.0\n",
        "tests/__init__.py": "",
        "tests/a_test.py": "import jax.numpy as jnp\nimport proj\n\n\n# jaxlint: args x=f32[3]\ndef test_helper(x):\n"
                     "    return jnp.cos(x)\n",
    }
    for name, text in files.items():
        (tmp_path / "proj" / name).write_text(text)
    findings, traced = check(tmp_path, "-j", "1", "proj/tests/a_test.py", "proj/with_registry.py")
    assert import_failures(findings) == []
    assert traced == 2
    plan = import_plan(str(tmp_path / "proj" / "tests" / "a_test.py"))
    assert plan.root == str(tmp_path)
