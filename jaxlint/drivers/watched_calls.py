"""The calls the tests make: for each function defined in the project, the arguments of its first
calls holding arrays or tracers, one per abstract signature.

Calls without arrays are not kept, even of JAX functions: run again after the tests they are
mostly machinery (a metaclass's ``__new__``, a decorator), whose second run changes the process
(equinox's classes wrapped twice made every later trace recurse without end).

Nothing is traced here: tracing runs the function again, which must not happen while tests run
(a function that mutates its arguments or a global would change their outcome). ``lint.py``
traces what was kept once the tests are done. Kept per call: array and tracer leaves of the
arguments and closure cells as ShapeDtypeStructs (the data is dropped), every other leaf as the
object itself (``self``, functions, modules, Python values).
"""
from __future__ import annotations

import contextlib
import fnmatch
import inspect
import os
import sys
import threading
from dataclasses import dataclass, field
from types import CodeType, FrameType
from typing import TYPE_CHECKING, Any, Callable, Iterator

from jaxlint.worker.frames import parameter_names, restore_profile, set_profile

if TYPE_CHECKING:  # placement.py imports JAX: only once a call holds arrays
    from jaxlint.drivers.placement import Placement

MAX_SIGNATURES = 3  # distinct abstract signatures kept per function, first seen first
MAX_CALLS = 200  # calls examined per function: later ones cost time and rarely differ
MAX_TESTS = 3  # node ids kept per function (the test-run store names them to re-run)
# Code objects that are not functions a user names: module and class bodies (not CO_OPTIMIZED),
# comprehensions (functions of their own on Python 3.11), generator expressions. Generators and
# coroutines are skipped by their flags: calling one runs nothing.
_SKIPPED_NAMES = frozenset({"<module>", "<listcomp>", "<dictcomp>", "<setcomp>", "<genexpr>"})
_NOT_RUN = inspect.CO_GENERATOR | inspect.CO_COROUTINE | inspect.CO_ASYNC_GENERATOR
EMPTY_CELL = object()  # a closure cell not yet assigned when the function was called


@dataclass
class Call:
    """One kept call: enough to run the function again on abstract arguments."""

    code: CodeType
    globals: dict[str, Any]
    leaves: list[Any]  # of (parameter values, closure cell values); arrays as ShapeDtypeStructs
    treedef: Any
    x64: bool  # jax_enable_x64 at the call: the trace uses the same
    staged: bool  # it ran under jax.jit (or in a scan or cond body): traced under jit too
    differentiated: bool = False  # it ran under jax.grad, jvp or vjp (JX704 reads it)
    placement: Placement | None = None  # the jit that traced it: its shardings and donation


@dataclass
class Function:
    """What the tests showed of one function (one code object)."""

    code: CodeType
    calls: list[Call] = field(default_factory=list)
    keys: dict[Any, Call] = field(default_factory=dict)  # signature key -> the call kept for it
    examined: int = 0
    tests: list[str] = field(default_factory=list)  # node ids of the first tests that called it
    array_tests: list[str] = field(default_factory=list)  # ... of the first whose call gave a signature

    @property
    def named_tests(self) -> list[str]:
        """The tests the store names to re-run it: those whose calls gave it a signature first (a
        test that calls it with no array would not lint it again), then the first that called it."""
        return list(dict.fromkeys(self.array_tests + self.tests))[:MAX_TESTS]

    @property
    def done(self) -> bool:
        return len(self.calls) >= MAX_SIGNATURES or self.examined >= MAX_CALLS


class ProjectFiles:
    """Which files' functions are linted: under the project root, not excluded by the
    configuration (exclude, extend-exclude, virtual environments, site-packages), not a test
    (pytest's ``python_files`` patterns, ``conftest.py``, anything in a ``test``/``tests`` folder)."""

    TEST_FOLDERS = frozenset({"test", "tests"})

    def __init__(self, root: str, excluded: Callable[[str], bool], test_patterns: list[str]) -> None:
        self.root = os.path.realpath(root)
        self.excluded = excluded
        self.test_patterns = test_patterns or ["test_*.py", "*_test.py"]

    def __contains__(self, filename: str) -> bool:
        if not filename.endswith(".py"):
            return False
        try:
            path = os.path.realpath(filename)
        except (OSError, ValueError):
            return False
        relative = os.path.relpath(path, self.root)
        if relative.startswith(os.pardir + os.sep) or os.path.isabs(relative):
            return False
        parts = relative.split(os.sep)
        if is_test_file(relative, self.test_patterns):
            return False
        folder = self.root
        for part in parts:
            folder = os.path.join(folder, part)
            if self.excluded(folder):
                return False
        return True


def is_test_file(path: str, test_patterns: list[str]) -> bool:
    """A test module (pytest's ``python_files`` patterns, default ``test_*.py`` and ``*_test.py``),
    a ``conftest.py``, or a file in a ``test``/``tests`` folder of ``path`` (relative to the root)."""
    parts = path.split(os.sep)
    name = parts[-1]
    if name == "conftest.py" or any(fnmatch.fnmatch(name, p) for p in test_patterns or ["test_*.py", "*_test.py"]):
        return True
    return bool(ProjectFiles.TEST_FOLDERS & set(parts[:-1]))


class CallWatcher:
    """Keeps calls of project functions, told of each by the call watched_imports.py adds to the
    project's functions (``notify``), or, with ``profile``, by a profile hook on every thread."""

    def __init__(self, files: ProjectFiles, profile: bool = False) -> None:
        self.files = files
        self.profile = profile
        self.functions: dict[int, Function] = {}  # id(code) -> ...; the code object is kept alive
        self._project: dict[str, bool] = {}  # co_filename -> in the project
        self._lock = threading.Lock()
        self._previous: tuple[Any, Any] = (None, None)
        self._on = False
        self._inside = threading.local()  # keeping a call runs code (pytree flattening) that may call back
        self.news = 0  # functions seen and calls kept so far: what a test adds shows it was worth watching
        self.test: str | None = None  # node id of the test running (None: collection)
        self._executed: set[str] | None = None  # executed_files() is recording

    @contextlib.contextmanager
    def executed_files(self) -> Iterator[set[str]]:
        """The files of the project functions that run inside the block (the re-traces after the
        tests: which project code a trace depends on), told by the same call or profile hook."""
        executed: set[str] = set()
        self._executed = executed
        previous = set_profile(self._profile) if self.profile and not self._on else None
        try:
            yield executed
        finally:
            if previous is not None:
                restore_profile(previous)
            self._executed = None

    def start(self) -> None:
        if self.profile and not self._on:
            self._previous = set_profile(self._profile)
        self._on = True

    def stop(self) -> None:
        if self.profile and self._on:
            restore_profile(self._previous)
        self._on = False

    def notify(self) -> None:
        """The call added at the top of each project function: keep the caller's call. Not again
        while keeping one: flattening the arguments calls the project's own pytree functions (a
        profile hook is not called from inside itself either)."""
        if self._executed is not None:
            self._executed.add(sys._getframe(1).f_code.co_filename)
            return
        if self._on and not getattr(self._inside, "active", False):
            self._inside.active = True
            try:
                frame = sys._getframe(1)
                self._called(frame, frame.f_code)
            finally:
                self._inside.active = False

    def _profile(self, frame: FrameType, event: str, arg: Any) -> None:
        # Runs on every call and return of the session: the common case returns at once.
        if event != "call":
            return
        code = frame.f_code
        project = self._project.get(code.co_filename)
        if project is None:
            project = self._project[code.co_filename] = code.co_filename in self.files
        if project:
            if self._executed is not None:
                self._executed.add(code.co_filename)
            else:
                self._called(frame, code)

    def _called(self, frame: FrameType, code: CodeType) -> None:
        function = self.functions.get(id(code))
        if function is None:
            if code.co_flags & _NOT_RUN or not code.co_flags & inspect.CO_OPTIMIZED \
                    or code.co_name in _SKIPPED_NAMES:
                return
            function = self.functions[id(code)] = Function(code)
            self.news += 1
        if self.test is not None and len(function.tests) < MAX_TESTS and self.test not in function.tests:
            function.tests.append(self.test)
        if function.done or "jax" not in sys.modules:  # without JAX no argument is a JAX array
            return
        with self._lock:
            function.examined += 1
            try:
                kept = _keep(frame)
            except Exception:  # watching must never break a test
                return
            if kept is None:
                return
            key, call = kept
            if key not in function.keys:
                function.keys[key] = call
                function.calls.append(call)
                self.news += 1
                if self.test is not None and len(function.array_tests) < MAX_TESTS \
                        and self.test not in function.array_tests:
                    function.array_tests.append(self.test)
            elif call.differentiated:  # the same signature, seen under jax.grad this time
                function.keys[key].differentiated = True


def _keep(frame: FrameType) -> tuple[Any, Call] | None:
    """(signature key, call) when the call's arguments or closure hold an array or a tracer."""
    import jax
    import numpy as np

    from jaxlint.drivers.placement import call_placement
    from jaxlint.jaxapi import tracers

    code, local = frame.f_code, frame.f_locals
    params = [local[name] for name in parameter_names(code)]
    free = [local.get(name, EMPTY_CELL) for name in code.co_freevars]
    leaves, treedef = jax.tree_util.tree_flatten((params, free), is_leaf=tracers.iterable_leaf)
    abstract, any_array, staged, differentiated = [], False, False, False
    for leaf in leaves:
        if isinstance(leaf, jax.Array) or (isinstance(leaf, np.ndarray) and leaf.dtype.kind not in "OSUV"):
            abstract.append(_abstract(leaf))
            any_array = True
            staged = staged or tracers.is_staged(leaf)
            differentiated = differentiated or tracers.is_differentiated(leaf)
        else:
            abstract.append(leaf)
    if not any_array:
        return None
    x64 = bool(jax.config.read("jax_enable_x64"))
    # A jit's shardings and donation are not in the tracers it passes: read from the jit itself.
    placement = call_placement(frame, params, len(jax.tree_util.tree_leaves(free, is_leaf=tracers.iterable_leaf))) \
        if staged else None
    try:
        key = hash((treedef, x64, staged, tuple(_signature_item(leaf) for leaf in abstract),
                    placement.key() if placement is not None else None))
    except TypeError:  # aux data of a pytree node that cannot be hashed: every call is new
        key = id(frame)
    return key, Call(code, frame.f_globals, abstract, treedef, x64, staged, differentiated, placement)


def _abstract(leaf: Any) -> Any:
    import jax

    from jaxlint.jaxapi import jaxprs

    if isinstance(leaf, jax.Array):
        return jaxprs.shape_dtype_struct(leaf)
    return jax.ShapeDtypeStruct(leaf.shape, jax.dtypes.canonicalize_dtype(leaf.dtype))


def _signature_item(leaf: Any) -> Any:
    """What of a leaf makes another trace: shape and dtype of arrays, the value of literals, the
    code of functions, the type of any other object (a new instance of a class traces alike)."""
    import jax

    if isinstance(leaf, jax.ShapeDtypeStruct):
        return ("array", leaf.shape, str(leaf.dtype), bool(getattr(leaf, "weak_type", False)))
    if leaf is None or isinstance(leaf, (bool, int, float, complex, str, bytes)):
        return (type(leaf), repr(leaf))
    code = getattr(leaf, "__code__", None)
    if code is not None:
        return ("function", id(code))
    return ("object", type(leaf))
