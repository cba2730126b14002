import os

import pytest

from jaxlint.discover import discover, find_root, mentions_jax, module_name


def touch(path, text=""):
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(text)
    return str(path)


def test_walks_folders_sorted_absolute(tmp_path):
    b = touch(tmp_path / "pkg" / "b.py")
    a = touch(tmp_path / "pkg" / "a.py")
    init = touch(tmp_path / "pkg" / "__init__.py")
    deep = touch(tmp_path / "pkg" / "sub" / "deep.py")
    touch(tmp_path / "pkg" / "stubs.pyi")
    touch(tmp_path / "pkg" / "notes.txt")
    touch(tmp_path / "pkg" / "mod.pyc")
    assert discover([str(tmp_path)]) == sorted([a, b, init, deep])
    assert all(os.path.isabs(p) for p in discover([str(tmp_path)]))


@pytest.mark.parametrize(
    "skipped",
    [".git", ".venv", ".tox", ".mypy_cache", "__pycache__", "build", "dist", "site-packages", "node_modules"],
)
def test_skips_excluded_folders(tmp_path, skipped):
    keep = touch(tmp_path / "src" / "keep.py")
    touch(tmp_path / skipped / "x.py")
    touch(tmp_path / "src" / skipped / "nested" / "y.py")
    assert discover([str(tmp_path)]) == [keep]


def test_skips_virtualenvs_under_any_name(tmp_path):
    keep = touch(tmp_path / "app.py")
    touch(tmp_path / "myenv" / "pyvenv.cfg", "home = /usr/bin\n")
    touch(tmp_path / "myenv" / "lib" / "python3.11" / "m.py")
    touch(tmp_path / "myenv" / "bin" / "activate_this.py")
    assert discover([str(tmp_path)]) == [keep]


def test_explicit_paths_are_kept(tmp_path):
    hidden = touch(tmp_path / ".venv" / "lib" / "x.py")
    built = touch(tmp_path / "build" / "y.py")
    venv_file = touch(tmp_path / "env" / "z.py")
    touch(tmp_path / "env" / "pyvenv.cfg")
    assert discover([hidden, built, venv_file]) == sorted([hidden, built, venv_file])
    # an explicitly given folder is walked even if it would be skipped as a child
    assert discover([str(tmp_path / "build")]) == [built]


def test_explicit_non_py_files_dropped(tmp_path):
    stub = touch(tmp_path / "m.pyi")
    txt = touch(tmp_path / "r.txt")
    assert discover([stub, txt]) == []


def test_deduplicates_and_accepts_relative_paths(tmp_path, monkeypatch):
    a = touch(tmp_path / "a.py")
    monkeypatch.chdir(tmp_path)
    assert discover([".", "a.py", a, str(tmp_path)]) == [a]


def test_missing_path_raises(tmp_path):
    missing = str(tmp_path / "nope")
    with pytest.raises(FileNotFoundError) as info:
        discover([str(tmp_path), missing])
    assert info.value.filename == missing
    assert missing in str(info.value)


@pytest.mark.parametrize(
    "source",
    ["import jax\n", "import jax.numpy as jnp\n", "from jax import jit\n", "x = 1  # uses jax\n"],
)
def test_mentions_jax(source):
    assert mentions_jax(source)


@pytest.mark.parametrize("source", ["import numpy\n", "import jaxlib\n", "my_jax = 1\n", "import flax\n", ""])
def test_does_not_mention_jax(source):
    assert not mentions_jax(source)


def test_find_root_and_module_name(tmp_path):
    touch(tmp_path / "proj" / "pkg" / "__init__.py")
    touch(tmp_path / "proj" / "pkg" / "sub" / "__init__.py")
    mod = touch(tmp_path / "proj" / "pkg" / "sub" / "mod.py")
    init = str(tmp_path / "proj" / "pkg" / "__init__.py")
    script = touch(tmp_path / "proj" / "script.py")
    root = str(tmp_path / "proj")
    assert find_root(mod) == root
    assert find_root(init) == root
    assert find_root(script) == root
    assert module_name(mod, root) == "pkg.sub.mod"
    assert module_name(init, root) == "pkg"
    assert module_name(str(tmp_path / "proj" / "pkg" / "sub" / "__init__.py"), root) == "pkg.sub"
    assert module_name(script, root) == "script"


def test_find_root_stops_at_gap_in_packages(tmp_path):
    # tests/ has no __init__.py, so tests/unit is a top-level package rooted at tests/
    touch(tmp_path / "tests" / "unit" / "__init__.py")
    mod = touch(tmp_path / "tests" / "unit" / "test_x.py")
    assert find_root(mod) == str(tmp_path / "tests")
    assert module_name(mod, find_root(mod)) == "unit.test_x"


def test_module_name_outside_root(tmp_path):
    mod = touch(tmp_path / "a" / "m.py")
    with pytest.raises(ValueError):
        module_name(mod, str(tmp_path / "b"))
