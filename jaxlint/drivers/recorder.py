"""What ``jaxlint record`` records (the pytest plugin ``pytest_plugin/recording.py`` starts and
stops the recorder): the abstract arguments of the scanned functions (the targets, and every other
JAX function: a plain ``def`` whose body calls into jax), as the tests call them, saved to the
signatures file (see signatures.py).

Inert unless ``JAXLINT_RECORD`` is set (``jaxlint record`` sets it and adds
``-p jaxlint.pytest_plugin.recording`` to ``PYTEST_ADDOPTS``). Its value is JSON:
``{"root": config root, "files": path, "parts": folder, "parent": pid}``, where ``files`` names a
JSON list of the files to scan, discovered by ``jaxlint record`` with the configuration's excludes,
and ``parent`` is the jaxlint process: the test run ends when it does. Each process
that runs tests (the pytest process, or each pytest-xdist worker; the xdist controller runs none)
writes what it saw to a part file of its own in ``parts``; ``jaxlint record`` merges the parts into
the signatures file once the command has finished, so no two processes write that file.
Importing this module loads nothing: the scanner at session start and jax at the first recorded call
(after the user's code imported it, so their JAX configuration applies).

What the hint syntax cannot write (``self``, objects, functions) is not recorded: ``pytest --jaxlint``
lints such calls.
"""
from __future__ import annotations

import ast
import inspect
import json
import os
import sys
import threading
from dataclasses import dataclass, field
from types import CodeType, FrameType
from typing import Any

from jaxlint.worker.frames import parameter_names, restore_profile, set_profile

ENV = "JAXLINT_RECORD"
MAX_SIGNATURES = 3  # distinct signatures kept per function, first seen first
MAX_CALLS = 100  # calls examined per function: later ones cost time and rarely differ
MAX_TEXT = 1000  # characters of one argument: a longer literal is data, not a signature
_LITERALS = (bool, int, float, complex, str, bytes, type(None))

class Unrecordable(Exception):
    """An argument the hint syntax cannot express (an object, a NamedTuple, a typed key...)."""


@dataclass
class Watched:
    """One scanned target and what the tests have shown of it so far."""

    key: str  # signatures.function_key
    target: Any  # model.Target
    signatures: list[dict[str, str]] = field(default_factory=list)
    unrecordable: str | None = None  # why a call was not recorded (the first reason)
    calls: int = 0
    bound_first: bool | None = None  # a classmethod: ``cls`` is bound when the worker resolves it

    @property
    def done(self) -> bool:
        return len(self.signatures) >= MAX_SIGNATURES or self.calls >= MAX_CALLS

    def entry(self) -> dict[str, Any]:
        entry: dict[str, Any] = {"params": list(self.target.params), "signatures": self.signatures}
        if self.unrecordable:
            entry["unrecordable"] = self.unrecordable
        return entry


class Recorder:
    """A profile hook matching each Python call to a scanned target by file and first line
    (a ``g = jax.jit(f)`` target by the name of ``f``)."""

    def __init__(self, root: str, part: str, by_file: dict[str, dict[Any, list[Watched]]]) -> None:
        self.root, self.part = root, part  # part: the file this process's entries go to
        self.by_file = by_file  # real path -> {first line or def name: targets}
        self._lookup: dict[str, dict[Any, list[Watched]] | None] = {}  # co_filename -> by_file entry
        self._lock = threading.RLock()
        self._previous: tuple[Any, Any] = (None, None)
        # Signatures seen at a call, kept only if that call returns a value: a call the test
        # expects to raise (pytest.raises) is no signature to trace.
        self._pending: dict[int, tuple[Watched, dict[str, str]]] = {}

    @classmethod
    def from_settings(cls, settings: dict[str, Any], test_patterns: list[str] | None = None) -> Recorder:
        from jaxlint import scan
        from jaxlint.config import signatures
        from jaxlint.drivers.watched_calls import is_test_file
        from jaxlint.scan.functions import jax_functions
        from jaxlint.scan.index import SourceIndex
        from jaxlint.text import read_source

        root = settings["root"]
        with open(settings["files"], encoding="utf-8") as listing:
            files = json.load(listing)
        by_file: dict[str, dict[Any, list[Watched]]] = {}
        for path in files:
            try:
                text = read_source(path).text
                targets = scan.scan_source(path, text)
                firsts = {target.first_line for target in targets}
                # A plain JAX function is traced by `check` once a signature is recorded for it (a
                # test is not: it is what calls them).
                if not is_test_file(os.path.relpath(os.path.realpath(path), os.path.realpath(root)),
                                    test_patterns or []):
                    targets += [f.target() for f in jax_functions(SourceIndex(path, text, targets))
                                if f.first_line not in firsts and "<locals>" not in f.qualname]
            except Exception:  # a file that does not parse: `jaxlint check` reports it
                continue
            table: dict[Any, list[Watched]] = {}
            for target in targets:
                watched = Watched(signatures.function_key(path, root, target.qualname), target)
                where = target.name if target.kind == "jit-bound" else target.first_line
                table.setdefault(where, []).append(watched)
            if table:
                by_file[os.path.realpath(path)] = table
        worker = os.environ.get("PYTEST_XDIST_WORKER", "main")
        part = os.path.join(settings["parts"], f"{worker}-{os.getpid()}.json")
        return cls(root, part, by_file)

    def start(self) -> None:
        self._previous = set_profile(self._profile)

    def stop(self) -> None:
        restore_profile(self._previous)

    def _profile(self, frame: FrameType, event: str, arg: Any) -> None:
        # Runs on every call and return of the test session: the common case must stay cheap.
        if event == "return" and self._pending:
            self._returned(frame, arg)
            return
        if event != "call":
            return
        code = frame.f_code
        table = self._lookup.get(code.co_filename, False)
        if table is False:
            try:
                real = os.path.realpath(code.co_filename)
            except (OSError, ValueError):  # an exception here would turn the hook off for good
                real = code.co_filename
            table = self._lookup[code.co_filename] = self.by_file.get(real)
        if table is None:
            return
        by_line, by_name = table.get(code.co_firstlineno), table.get(code.co_name)
        if not (by_line or by_name) or code.co_flags & (inspect.CO_GENERATOR | inspect.CO_COROUTINE):
            return
        with self._lock:
            for item in (by_line or []) + (by_name or []):
                if not item.done and _matches(code, item.target):
                    try:
                        signature = _observe(item, frame)
                    except Exception as error:  # recording must never break a test
                        item.unrecordable = item.unrecordable or f"jaxlint could not record: {error}"
                        continue
                    if signature is not None:
                        self._pending[id(frame)] = (item, signature)

    def _returned(self, frame: FrameType, value: Any) -> None:
        """The profile hook sees a raising call return None: only a value commits the signature."""
        with self._lock:
            pending = self._pending.pop(id(frame), None)
            if pending is None or value is None:
                return
            item, signature = pending
            if signature not in item.signatures and len(item.signatures) < MAX_SIGNATURES:
                item.signatures.append(signature)

    def save(self) -> None:
        """This process's entries, to its part file (written whole, then renamed into place)."""
        from jaxlint.text import write_text_atomic

        called = {w.key: w.entry() for table in self.by_file.values() for group in table.values()
                  for w in group if w.calls}
        try:
            write_text_atomic(self.part, json.dumps({"functions": called}), prefix=".part-")
        except OSError as error:
            print(f"jaxlint: cannot save the recorded signatures: {error}", file=sys.stderr)


def _matches(code: CodeType, target: Any) -> bool:
    if code.co_name != target.name:
        return False
    # A jit-bound target wraps a module-level def (co_qualname is Python 3.11+).
    return target.kind != "jit-bound" or getattr(code, "co_qualname", code.co_name) == code.co_name


def _observe(item: Watched, frame: FrameType) -> dict[str, str] | None:
    """The call's arguments as hint text, if they make a signature not seen yet."""
    item.calls += 1
    code, local = frame.f_code, frame.f_locals
    names = parameter_names(code)
    params = item.target.params
    if sorted(names) != sorted(params):
        return None  # not the function the scan saw (a same-named def elsewhere in the file)
    if item.bound_first is None:
        item.bound_first = _is_classmethod(frame, item.target)
    from jaxlint.worker.instrument import abstractify  # imports jax: only once user code is running

    signature: dict[str, str] = {}
    for index, name in enumerate(params):
        if index == 0 and item.bound_first:
            continue
        try:
            signature[name] = _text(abstractify(local[name]), name, frame.f_globals)
        except Unrecordable as error:
            if not _at_default(frame, item.target, name, local):
                item.unrecordable = item.unrecordable or str(error)
                return None
            # Left out: the worker's call uses the same default.
    if signature not in item.signatures and _round_trips(signature):
        return signature
    return None


def _text(value: Any, path: str, namespace: dict[str, Any]) -> str:
    """Hint text of an abstractified value; Unrecordable when parse_hint could not read it back.
    An array sharded over a mesh the function's module holds is written with its mesh axes."""
    from jaxlint.scan import hints

    _check(value, f"argument {path}")
    text = hints.format_abstract(_with_shards(value, namespace))
    if len(text) > MAX_TEXT:
        raise Unrecordable(f"argument {path}: a value of {len(text)} characters")
    return text


def _with_shards(tree: Any, namespace: dict[str, Any]) -> Any:
    """``tree`` with each array sharded over a mesh the worker finds again (the namespace's one mesh
    with the sharding's axes, of the same shape: ``argsources.hint.module_mesh``) as an ArraySpec
    naming its mesh axes; any other array stays as it is (recorded without its sharding)."""
    import jax

    from jaxlint.jaxapi import shardings
    from jaxlint.scan.hints import sharded_spec
    from jaxlint.worker.argsources.hint import module_meshes

    if type(tree) in (tuple, list):
        return type(tree)(_with_shards(child, namespace) for child in tree)
    if type(tree) is dict:
        return {key: _with_shards(child, namespace) for key, child in tree.items()}
    if not isinstance(tree, jax.ShapeDtypeStruct):
        return tree
    sharding = getattr(tree, "sharding", None)
    shards = shardings.shards_of(sharding)
    axes = {axis for dim in shards or () for axis in dim}
    if not axes:
        return tree
    meshes = [mesh for _, mesh in module_meshes(namespace) if axes <= set(mesh.axis_names)]
    if len(meshes) != 1 or tuple(dict(meshes[0].shape).items()) != tuple(dict(sharding.mesh.shape).items()):
        return tree
    return sharded_spec(tree, shards)


def _check(tree: Any, path: str) -> None:
    import jax

    from jaxlint.scan.hints import DTYPES, is_key

    if isinstance(tree, jax.ShapeDtypeStruct):
        dtype = getattr(tree.dtype, "name", str(tree.dtype))
        if dtype not in DTYPES.values() and not is_key(dtype):  # typed keys: key<fry>[]
            raise Unrecordable(f"{path}: a {dtype} array")
        if not all(isinstance(d, int) for d in tree.shape):
            raise Unrecordable(f"{path}: a symbolic shape {tree.shape}")
    elif type(tree) in (tuple, list):
        for index, child in enumerate(tree):
            _check(child, f"{path}[{index}]")
    elif type(tree) is dict:
        for key, child in tree.items():
            if type(key) not in _LITERALS or not _literal(key):
                raise Unrecordable(f"{path}: a dict key {type(key).__name__}")
            _check(child, f"{path}[{key!r}]")
    elif type(tree) not in _LITERALS or not _literal(tree):
        raise Unrecordable(f"{path}: {_describe(tree)}")


def _literal(value: Any) -> bool:
    """repr() reads back as an equal value (not nan or inf)."""
    try:
        return ast.literal_eval(repr(value)) == value
    except (ValueError, TypeError, SyntaxError, MemoryError, RecursionError):
        return False


def _describe(value: Any) -> str:
    if isinstance(value, (int, float, complex)):
        return repr(value)  # nan, inf
    return f"<{type(value).__name__} object>"


def _round_trips(signature: dict[str, str]) -> bool:
    from jaxlint.scan import hints

    try:
        hints.parse_hint(", ".join(f"{name}={text}" for name, text in signature.items()))
    except hints.HintError:
        return False
    return True


def _function(frame: FrameType, target: Any) -> tuple[Any, Any]:
    """(owner, attribute) the target is reached through from its module, or (None, None)."""
    qualname = target.name if target.kind == "jit-bound" else target.qualname
    owner, _, name = qualname.rpartition(".")
    holder = frame.f_globals.get(owner) if owner else None
    if owner and holder is None:
        return None, None
    value = inspect.getattr_static(holder, name, None) if holder is not None else frame.f_globals.get(name)
    return holder, value


def _is_classmethod(frame: FrameType, target: Any) -> bool:
    try:
        return isinstance(_function(frame, target)[1], classmethod)
    except Exception:
        return False


def _at_default(frame: FrameType, target: Any, name: str, local: dict[str, Any]) -> bool:
    """The parameter holds its default (e.g. ``activation=jax.nn.relu``): it can be left out,
    unless it comes before ``*args`` values that must then be passed positionally."""
    try:
        value = _function(frame, target)[1]
        function = inspect.unwrap(getattr(value, "__func__", value))
        if getattr(function, "__code__", None) is not frame.f_code:
            return False
        parameter = inspect.signature(function).parameters[name]
    except Exception:
        return False
    if parameter.default is inspect.Parameter.empty or local[name] is not parameter.default:
        return False
    code = frame.f_code
    varargs = code.co_varnames[code.co_argcount + code.co_kwonlyargcount] \
        if code.co_flags & inspect.CO_VARARGS else None
    return parameter.kind is inspect.Parameter.KEYWORD_ONLY or not (varargs and local[varargs])
