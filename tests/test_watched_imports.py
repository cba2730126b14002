"""The project's modules compiled with the watching call (drivers/watched_imports.py): the
functions behave as they did, the watcher hears each call with the function's own frame, and
nothing of it reaches the disk or outlives the run."""
from __future__ import annotations

import ast
import builtins
import importlib.abc
import importlib.machinery
import importlib.util
import py_compile
import sys
import textwrap
import traceback
from pathlib import Path
from types import FrameType
from typing import Iterator

import pytest

from jaxlint.drivers.watched_imports import NOTIFY, AddNotify, WatchedImports, imported_already

SOURCE = textwrap.dedent('''\
    """Module docstring."""
    from __future__ import annotations


    def documented(x):
        """Doc."""
        return x + 1


    def only_a_docstring():
        """Nothing else."""


    def outer(x):
        def inner(y):
            return x * y
        return inner


    class Model:
        def apply(self, x):
            return [x, super().__init__()]


    square = lambda x: x * x


    def counting(n):
        yield from range(n)


    def raises():
        value = 1
        raise ValueError(value)
    ''')


@pytest.fixture
def heard() -> Iterator[list[FrameType]]:
    """The frames the added call reports, as the CallWatcher receives them."""
    frames: list[FrameType] = []
    previous = getattr(builtins, NOTIFY, None)
    setattr(builtins, NOTIFY, lambda: frames.append(sys._getframe(1)))
    yield frames
    if previous is None:
        delattr(builtins, NOTIFY)
    else:
        setattr(builtins, NOTIFY, previous)


def compiled(source: str, filename: str = "model.py") -> dict:
    tree = AddNotify().visit(ast.parse(source, filename))
    namespace: dict = {"__name__": "model"}
    exec(compile(ast.fix_missing_locations(tree), filename, "exec", dont_inherit=True), namespace)
    return namespace


def test_functions_behave_as_before_and_each_call_is_heard_with_its_own_frame(heard: list[FrameType]) -> None:
    model = compiled(SOURCE)
    assert heard == []  # defining is not calling
    assert model["__doc__"] == "Module docstring."
    assert model["documented"](1) == 2 and model["documented"].__doc__ == "Doc."
    assert model["only_a_docstring"]() is None and model["only_a_docstring"].__doc__ == "Nothing else."
    assert model["outer"](2)(3) == 6
    assert model["Model"]().apply(4) == [4, None]
    assert model["square"](5) == 25
    assert list(model["counting"](3)) == [0, 1, 2]
    names = [frame.f_code.co_name for frame in heard]
    assert names == ["documented", "only_a_docstring", "outer", "inner", "apply", "<lambda>", "counting"]
    # The frame is the function's own, at its start: the arguments are all there is in it.
    assert heard[0].f_locals == {"x": 1}
    assert heard[3].f_locals == {"y": 3, "x": 2}


def test_tracebacks_and_annotations_are_those_of_the_file(heard: list[FrameType]) -> None:
    model = compiled(SOURCE)
    with pytest.raises(ValueError) as raised:
        model["raises"]()
    line = traceback.extract_tb(raised.tb)[-1]
    assert (line.name, line.lineno) == ("raises", SOURCE.splitlines().index("    raise ValueError(value)") + 1)
    assert model["documented"].__code__.co_firstlineno == 5
    assert model["outer"].__annotations__ == {}  # `from __future__` still applies: no error at import


def test_project_modules_are_compiled_with_the_call_and_nothing_is_written(
        tmp_path: Path, heard: list[FrameType]) -> None:
    package = tmp_path / "watchedpkg"
    package.mkdir()
    (package / "__init__.py").write_text("")
    (package / "model.py").write_text(SOURCE)
    (tmp_path / "elsewhere.py").write_text("def plain(x):\n    return x\n")
    imports = WatchedImports(lambda path: str(package) in path)
    sys.path.insert(0, str(tmp_path))
    imports.install(getattr(builtins, NOTIFY))
    try:
        import elsewhere  # type: ignore[import-not-found]
        from watchedpkg import model  # type: ignore[import-not-found]

        assert model.documented(1) == 2 and elsewhere.plain(1) == 1
        assert [frame.f_code.co_name for frame in heard] == ["documented"]
        assert imports.modules == ["watchedpkg", "watchedpkg.model"]
        assert imported_already(lambda path: str(package) in path) == ["watchedpkg", "watchedpkg.model"]
    finally:
        imports.uninstall()
        sys.path.remove(str(tmp_path))
        for name in ("watchedpkg", "watchedpkg.model", "elsewhere"):
            sys.modules.pop(name, None)
    assert sys.meta_path.count(imports) == 0
    assert not (package / "__pycache__").exists()  # a later run without jaxlint compiles the file as it is
    assert (package / "model.py").read_text() == SOURCE
    assert getattr(builtins, NOTIFY)() is None  # the call the module keeps is quiet from now on


def test_a_syntax_error_is_reported_as_python_reports_it(tmp_path: Path) -> None:
    (tmp_path / "broken_watched.py").write_text("def f(:\n    pass\n")
    imports = WatchedImports(lambda path: str(tmp_path) in path)
    sys.path.insert(0, str(tmp_path))
    imports.install(lambda: None)
    try:
        with pytest.raises(SyntaxError) as raised:
            import broken_watched  # type: ignore[import-not-found]  # noqa: F401
        assert raised.value.filename.endswith("broken_watched.py") and raised.value.lineno == 1
    finally:
        imports.uninstall()
        sys.path.remove(str(tmp_path))
        sys.modules.pop("broken_watched", None)


class DoublingLoader(importlib.machinery.SourceFileLoader):
    """An import hook's loader that rewrites the module's AST too (as jaxtyping's and typeguard's
    do): every integer constant doubled."""

    def source_to_code(self, data, path, *, _optimize=-1):  # type: ignore[override]
        tree = compile(data, path, "exec", ast.PyCF_ONLY_AST, dont_inherit=True)
        for node in ast.walk(tree):
            if isinstance(node, ast.Constant) and type(node.value) is int:
                node.value *= 2
        return compile(tree, path, "exec", dont_inherit=True)


class OtherHook(importlib.abc.MetaPathFinder):
    """Finds ``hooked_*`` modules in ``folder``: sources with DoublingLoader, ``.pyc`` files with
    the sourceless loader, which jaxlint cannot compile through."""

    def __init__(self, folder: Path) -> None:
        self.folder = folder

    def find_spec(self, fullname, path, target=None):  # type: ignore[no-untyped-def]
        if not fullname.startswith("hooked_"):
            return None
        source, compiled_file = self.folder / f"{fullname}.py", self.folder / f"{fullname}.pyc"
        if source.exists():
            return importlib.util.spec_from_file_location(fullname, source,
                                                          loader=DoublingLoader(fullname, str(source)))
        return importlib.util.spec_from_file_location(
            fullname, compiled_file, loader=importlib.machinery.SourcelessFileLoader(fullname, str(compiled_file)))


def test_another_hooks_loader_keeps_its_rewrite_and_a_loader_without_source_is_named(
        tmp_path: Path, heard: list[FrameType]) -> None:
    (tmp_path / "hooked_source.py").write_text("def three():\n    return 3\n")
    (tmp_path / "plain.py").write_text("def four():\n    return 4\n")
    py_compile.compile(str(tmp_path / "plain.py"), cfile=str(tmp_path / "hooked_compiled.pyc"))
    other = OtherHook(tmp_path)
    imports = WatchedImports(lambda path: str(tmp_path) in path)
    sys.meta_path.insert(0, other)
    imports.install(getattr(builtins, NOTIFY))
    try:
        import hooked_compiled  # type: ignore[import-not-found]
        import hooked_source  # type: ignore[import-not-found]

        assert hooked_source.three() == 6  # the other hook's rewrite
        assert [frame.f_code.co_name for frame in heard] == ["three"]  # and jaxlint's
        assert hooked_compiled.four() == 4 and len(heard) == 1
        assert imports.modules == ["hooked_source"] and imports.other_loaders == ["hooked_compiled"]
        assert isinstance(hooked_source.__loader__, DoublingLoader)
    finally:
        imports.uninstall()
        sys.meta_path.remove(other)
        for name in ("hooked_source", "hooked_compiled"):
            sys.modules.pop(name, None)


def test_a_finder_installed_later_is_overtaken_when_asked(tmp_path: Path) -> None:
    imports = WatchedImports(lambda path: False)
    other = OtherHook(tmp_path)
    imports.install(lambda: None)
    sys.meta_path.insert(0, other)
    try:
        imports.put_first()
        assert sys.meta_path[:2] == [imports, other]
    finally:
        imports.uninstall()
        sys.meta_path.remove(other)
