"""How calls are watched cheaply: the project's modules imported during a ``pytest --jaxlint`` run
are compiled with one more statement at the top of each function body (and lambda), a call that
hands the function's frame to the CallWatcher (watched_calls.py).

Why not a profile hook (``sys.setprofile``): it runs Python code on every call and return of the
session, JAX's own included, and tracing is nearly all Python calls; on diffrax's tests the hook
alone made the suite 1.6x slower. The added call runs only in the project's functions.

As pytest's assertion rewriting does, the file on disk is untouched and no bytecode is written, so
a later run without ``--jaxlint`` imports the module as it is. The added statement takes the place
(line and column) of the body's first statement and never raises, so tracebacks, ``inspect`` and
the source locations JAX records are those of the unchanged file. A module another import hook
loads with its own source loader (jaxtyping's ``--jaxtyping-packages``, which equinox's and
diffrax's test configurations use) gets both rewrites; one loaded some other way is not watched,
and the summary says so.
"""
from __future__ import annotations

import ast
import builtins
import contextlib
import copy
import importlib.abc
import importlib.machinery
import sys
from types import CodeType, ModuleType
from typing import Any, Callable, Iterator, Sequence

from jaxlint import read_digests
from jaxlint.drivers import loops
from jaxlint.drivers.imported_sources import ImportedSources
from jaxlint.worker.importer import spec_after

# A name no source can spell, found through builtins whatever globals a function runs with.
NOTIFY = "@jaxlint_called"


def _quiet() -> None:
    """The added call when no watcher is on: between tests that are not watched, and after the
    run, when jaxlint traces the functions again."""


class WatchedImports(importlib.abc.MetaPathFinder):
    """A ``sys.meta_path`` finder that asks the finders after it and gives a project module's
    loader the added call: the plain source loader, or another import hook's loader built on it
    (jaxtyping's and typeguard's, which rewrite the module's AST too: both rewrites apply)."""

    def __init__(self, is_project: Callable[[str], bool]) -> None:
        self.is_project = is_project
        self.modules: list[str] = []  # the modules compiled with the call
        # path -> sha256 of the bytes compiled (read_digests.py): what the store's entries vouch for
        self.read: dict[str, str] = {}
        self.sources = ImportedSources()  # their bytes: the report reads the code that ran
        self.other_loaders: list[str] = []  # project modules whose loader jaxlint cannot compile through

    def install(self, notify: Callable[[], None]) -> None:
        setattr(builtins, NOTIFY, notify)
        self.put_first()

    def put_first(self) -> None:
        """First in ``sys.meta_path``, ahead of import hooks installed since (a finder ahead of it
        would load the project's modules without the call)."""
        if sys.meta_path[:1] != [self]:
            self.uninstall_finder()
            sys.meta_path.insert(0, self)

    def uninstall_finder(self) -> None:
        if self in sys.meta_path:
            sys.meta_path.remove(self)

    @contextlib.contextmanager
    def calling(self, notify: Callable[[], None]) -> Iterator[None]:
        """The compiled functions' call goes to ``notify`` inside the block, quiet again after
        (the re-traces after the tests: which project files a trace ran)."""
        setattr(builtins, NOTIFY, notify)
        try:
            yield
        finally:
            setattr(builtins, NOTIFY, _quiet)

    def uninstall(self) -> None:
        """No more modules are compiled with the call; those that were keep it, made quiet."""
        self.uninstall_finder()
        setattr(builtins, NOTIFY, _quiet)

    def find_spec(self, fullname: str, path: Sequence[str] | None, target: ModuleType | None = None) -> Any:
        spec = spec_after(self, fullname, path, target)
        if spec is not None and spec.origin and spec.has_location and self.is_project(spec.origin):
            loader = _with_call(spec.loader)
            if loader is None:
                self.other_loaders.append(fullname)
            else:
                loader.read_digests = self.read
                loader.read_sources = self.sources
                spec.loader = loader
                self.modules.append(fullname)
        return spec


class _CompilesWithCall:
    """Mixed into a source loader's class: compile from the source, through the loader's own
    ``source_to_code`` (another hook's rewrite included), with the call added; never from or to
    ``__pycache__``, where a run without jaxlint would find the call."""

    def get_code(self, fullname: str) -> CodeType:
        path = self.get_filename(fullname)  # type: ignore[attr-defined]
        data = self.get_data(path)  # type: ignore[attr-defined]
        read_digests.note(getattr(self, "read_digests", {}), path, data)
        sources = getattr(self, "read_sources", None)
        if sources is not None:
            sources.note(path, data)
        with _compile_adds_call(path):
            return self.source_to_code(data, path)  # type: ignore[attr-defined]


_LOADER_CLASSES: dict[type, type] = {}


def _with_call(loader: Any) -> Any:
    """A copy of ``loader`` that compiles with the call, or None for a loader that does not
    compile Python source the standard way (an extension module, a zip file)."""
    if not isinstance(loader, importlib.machinery.SourceFileLoader):
        return None
    cls = type(loader)
    if issubclass(cls, _CompilesWithCall):
        return loader
    watched = _LOADER_CLASSES.get(cls)
    if watched is None:
        watched = _LOADER_CLASSES[cls] = type(f"Watched{cls.__name__}", (_CompilesWithCall, cls), {})
    copied = copy.copy(loader)
    copied.__class__ = watched
    return copied


@contextlib.contextmanager
def _compile_adds_call(path: str) -> Iterator[None]:
    """While a loader compiles ``path``: its ``compile`` of the module (source, or the AST its own
    rewrite made) gets the call. ``builtins.compile`` is swapped for that one call because every
    loader, the standard one included, reaches the compiler through it; other files compiled
    meanwhile (another thread) pass through unchanged."""
    original = builtins.compile

    def compile_with_call(source: Any, filename: Any, mode: str, flags: int = 0, *args: Any, **kwargs: Any) -> Any:
        if filename == path and mode == "exec" and not flags & ast.PyCF_ONLY_AST:
            try:
                tree = source if isinstance(source, ast.Module) else \
                    original(source, filename, mode, flags | ast.PyCF_ONLY_AST, *args, **kwargs)
                source = ast.fix_missing_locations(_rewritten(tree, path))
            except (ValueError, RecursionError):  # too deep to rewrite: compiled as it is, not watched
                pass
        return original(source, filename, mode, flags, *args, **kwargs)

    builtins.compile = compile_with_call
    try:
        yield
    finally:
        builtins.compile = original


def compile_with_call(source: bytes, path: str) -> CodeType:
    """A script's code with the call added, as ``python SCRIPT`` would compile it (``jaxlint run``
    runs the script itself, which no import hook sees). Raises SyntaxError as ``compile`` does."""
    tree = compile(source, path, "exec", ast.PyCF_ONLY_AST, dont_inherit=True)
    try:
        tree = ast.fix_missing_locations(_rewritten(tree, path))
    except RecursionError:  # too deep to rewrite: compiled as it is, not watched
        return compile(source, path, "exec", dont_inherit=True)
    return compile(tree, path, "exec", dont_inherit=True)


def _rewritten(tree: ast.Module, path: str) -> ast.Module:
    """The module with the call added to its functions, and its loops counted when a run-time
    rule reads them (loops.py)."""
    if loops.counting():
        tree = loops.CountLoops(path).visit(tree)
    return AddNotify().visit(tree)


class AddNotify(ast.NodeTransformer):
    """``def f(...): body`` -> ``def f(...): @jaxlint_called(); body`` (after a docstring);
    ``lambda ...: value`` -> ``lambda ...: @jaxlint_called() or value`` (the call returns None)."""

    def visit_FunctionDef(self, node: ast.FunctionDef) -> ast.FunctionDef:
        self.generic_visit(node)
        first = 1 if _is_docstring(node.body[0]) else 0  # the docstring stays ``__doc__``
        statement = ast.copy_location(ast.Expr(_notify_call()), node.body[min(first, len(node.body) - 1)])
        node.body.insert(first, statement)
        ast.copy_location(statement.value, statement)
        return node

    def visit_Lambda(self, node: ast.Lambda) -> ast.Lambda:
        self.generic_visit(node)
        call = ast.copy_location(_notify_call(), node.body)
        node.body = ast.copy_location(ast.BoolOp(op=ast.Or(), values=[call, node.body]), node.body)
        return node

    # Calling a coroutine or an async generator runs none of its body: nothing to watch.
    def visit_AsyncFunctionDef(self, node: ast.AsyncFunctionDef) -> ast.AsyncFunctionDef:
        self.generic_visit(node)
        return node


def _notify_call() -> ast.Call:
    return ast.Call(func=ast.Name(id=NOTIFY, ctx=ast.Load()), args=[], keywords=[])


def _is_docstring(statement: ast.stmt) -> bool:
    return (isinstance(statement, ast.Expr) and isinstance(statement.value, ast.Constant)
            and isinstance(statement.value.value, str))


def imported_already(is_project: Callable[[str], bool]) -> list[str]:
    """Project modules imported before the finder was installed (by a plugin, say): their
    functions make no call, only a profile hook sees them."""
    found = []
    for name, module in list(sys.modules.items()):
        path = getattr(module, "__file__", None)
        if isinstance(path, str) and is_project(path):
            found.append(name)
    return sorted(found)
