import os
import shutil
import subprocess

import pytest

from jaxlint.scan import mentions_jax
from jaxlint.scan.discover import discover, find_root, module_name


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


def test_files_named_explicitly_are_kept_whatever_their_suffix(tmp_path):
    # As ruff does: a script with a shebang and no suffix is what pre-commit's types: [python] passes.
    script = touch(tmp_path / "train")
    txt = touch(tmp_path / "r.txt")
    assert discover([script, txt]) == sorted([script, txt])
    # Walking a folder finds .py files only, and says when there is none.
    empty: list[str] = []
    assert discover([str(tmp_path)], empty=empty) == [] and empty == [str(tmp_path)]


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


def test_excludes_come_from_the_configuration(tmp_path):
    from jaxlint.config import load_config

    touch(tmp_path / "jaxlint.toml", 'extend-exclude = ["gen*", "pkg/skip.py"]\n')
    keep = touch(tmp_path / "pkg" / "keep.py")
    touch(tmp_path / "pkg" / "skip.py")
    touch(tmp_path / "generated" / "g.py")
    touch(tmp_path / "gen_x.py")
    other = touch(tmp_path / "other" / "pkg" / "skip.py")  # pkg/skip.py is relative to the config
    assert discover([str(tmp_path)], load_config([str(tmp_path)])) == sorted([keep, other])


def test_force_exclude_checks_folders_up_to_the_project_root_only(tmp_path):
    from jaxlint.config import load_config

    # A project living inside a folder named like a default exclude is still checked.
    root = tmp_path / "build" / "proj"
    touch(root / "pyproject.toml", "[tool.jaxlint]\nforce-exclude = true\n")
    mine = touch(root / "src" / "m.py")
    touch(root / "dist" / "d.py")
    touch(root / "env" / "pyvenv.cfg")
    touch(root / "env" / "lib" / "e.py")
    explicit = [mine, str(root / "dist" / "d.py"), str(root / "env" / "lib" / "e.py")]
    assert discover(explicit, load_config(explicit)) == [mine]
    assert discover(explicit) == sorted(explicit)  # no configuration: force-exclude is off


def test_git_ignored_is_empty_without_git_or_outside_a_work_tree(tmp_path, monkeypatch):
    from jaxlint.scan.discover import git_ignored

    touch(tmp_path / ".gitignore", "*.py\n")
    touch(tmp_path / "a.py")
    assert git_ignored(str(tmp_path)) == set()  # not a git work tree (git is not even started)
    (tmp_path / ".git").mkdir()  # git would be asked: there is none
    monkeypatch.setenv("PATH", str(tmp_path / "nowhere"))
    assert git_ignored(str(tmp_path)) == set()  # no git at all
    assert discover([str(tmp_path)]) == [str(tmp_path / "a.py")]


@pytest.mark.skipif(shutil.which("git") is None, reason="needs git")
def test_git_ignored_finds_work_trees_whose_git_folder_is_elsewhere(tmp_path, monkeypatch):
    """git is started only where it can find a work tree (a ``.git`` above, or GIT_DIR): a
    ``.git`` file (a linked worktree, a submodule) and git's environment count too."""
    from jaxlint.scan.discover import git_ignored

    work = tmp_path / "work"
    subprocess.run(["git", "init", "-q", f"--separate-git-dir={tmp_path / 'repo.git'}", str(work)], check=True)
    assert (work / ".git").is_file()
    touch(work / ".gitignore", "gen/\n")
    touch(work / "pkg" / "gen" / "g.py")
    touch(work / "pkg" / "m.py")
    assert git_ignored(str(work)) == {"pkg/gen/"}
    assert git_ignored(str(work / "pkg")) == {"gen/"}  # a folder below the work tree's top

    bare = tmp_path / "bare"
    touch(bare / ".gitignore", "*_gen.py\n")
    touch(bare / "m_gen.py")
    touch(bare / "m.py")
    assert git_ignored(str(bare)) == set()  # no .git: git is not asked
    subprocess.run(["git", "init", "-q", "--bare", str(tmp_path / "elsewhere.git")], check=True)
    monkeypatch.setenv("GIT_DIR", str(tmp_path / "elsewhere.git"))
    monkeypatch.setenv("GIT_WORK_TREE", str(bare))
    assert git_ignored(str(bare)) == {"m_gen.py"}


@pytest.mark.parametrize("pattern, path, matched", [
    ("tests", "proj/a/tests", True),  # no slash: any file or folder of that name
    ("tests/*.py", "proj/tests/x/y.py", True),  # `*` crosses folders, as in ruff (globset)
    ("tests/*.py", "other/tests/y.py", False),  # with a slash: relative to the base
    ("**/conftest.py", "proj/conftest.py", True),
    ("**/conftest.py", "proj/a/b/conftest.py", True),
    ("{src,lib}/gen_?.py", "proj/lib/gen_1.py", True),
    ("src/[!t]*.py", "proj/src/t.py", False),
    ("src/[!t]*.py", "proj/src/u.py", True),
    ("../other/*.py", "other/z.py", True),
    ("./tests/*", "proj/tests/a.py", True),
    ("a+b", "proj/a+b", True),  # regex characters are literal
    ("a+b", "proj/aab", False),
])
def test_path_patterns(tmp_path, pattern, path, matched):
    from jaxlint.config.globs import PathPattern

    base = tmp_path / "[x]" / "proj"  # glob characters in the base folder are literal
    assert PathPattern(pattern, str(base)).matches(str(base.parent / path)) is matched


def test_an_unpacked_release_is_not_a_package(tmp_path):
    """``pkg-1.0/`` holding an ``__init__.py`` (some source releases do): no import names it, so
    its modules import from inside it, as pytest would import them."""
    from helpers import check_in_process

    from jaxlint.rules import all_rules

    release = tmp_path / "pkg-1.0"
    touch(release / "__init__.py")
    touch(release / "pkg" / "__init__.py")
    mod = touch(release / "pkg" / "mod.py", "import jax\nimport jax.numpy as jnp\n\n\n"
                "# jaxlint: args x=f32[3]\n@jax.jit\ndef safe_log(x):\n"
                "    return jnp.where(x > 0, jnp.log(x), 0.0)\n")
    assert find_root(mod) == str(release)
    assert module_name(mod, find_root(mod)) == "pkg.mod"
    result = check_in_process([str(release)], all_rules())
    assert [(f.code, f.span.start_line) for f in result.findings] == [("JX501", 8)]


def test_a_file_and_a_symlink_to_it_are_one_file_listed_by_its_real_name(tmp_path):
    real = touch(tmp_path / "pkg" / "good.py")
    (tmp_path / "pkg" / "link.py").symlink_to("good.py")
    assert discover([str(tmp_path)]) == [real]
    assert discover([str(tmp_path / "pkg" / "link.py"), real]) == [real]


def test_a_file_named_only_through_a_symlink_keeps_the_name_given(tmp_path):
    touch(tmp_path / "good.py")
    link = tmp_path / "link.py"
    link.symlink_to("good.py")
    assert discover([str(link)]) == [str(link)]


def test_hard_links_are_one_file(tmp_path):
    a = touch(tmp_path / "a.py")
    os.link(a, tmp_path / "b.py")
    assert discover([str(tmp_path)]) == [a]


def test_a_folder_symlink_is_walked_only_when_named(tmp_path):
    outside = touch(tmp_path / "outside" / "m.py")
    project = tmp_path / "project"
    keep = touch(project / "keep.py")
    (project / "linked").symlink_to(tmp_path / "outside")
    (project / "loop").symlink_to(project)  # a cycle: never followed while walking
    assert discover([str(project)]) == [keep]
    assert discover([str(project / "linked")]) == [str(project / "linked" / "m.py")]
    # Named beside its target, the folder's files are listed once, under their real names.
    assert discover([str(project / "linked"), str(tmp_path / "outside")]) == [outside]


def test_a_broken_symlink_is_listed_not_an_error(tmp_path):
    keep = touch(tmp_path / "keep.py")
    broken = tmp_path / "broken.py"
    broken.symlink_to("missing.py")
    assert discover([str(tmp_path)]) == sorted([keep, str(broken)])
    assert discover([str(broken)]) == [str(broken)]
