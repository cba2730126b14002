"""Signatures from the examples files (``[tool.jaxlint] examples = [...]``).

An examples file calls ``jaxlint.example(fn, *args, **kwargs)`` (see ``jaxlint.worker.examples_api``).
``run_examples`` executes it once per analyzed module, right after the module is imported, so
``from mypkg.train import train_step`` binds the very objects jaxlint resolves. A registration
matches a target when both unwrap to the same code: same file, first line and name (so an
examples file that imports the module under another name still matches).

An examples file that raises is one JX901 finding on the analyzed module, at line 1 (the file
itself may not be analyzed, and it is run for each module); the message names the examples file
and its line. Registrations made before the error are still used; the other targets are traced.

Cost: an examples file may build real parameters, so it runs only for modules it registers
something in. The first run in a worker learns which source files its registrations point into;
later modules outside that set skip it (exact as long as the file registers the same functions
on every run). A run that raised teaches nothing: the file runs again for the next module.
"""
from __future__ import annotations

import dataclasses
import functools
import hashlib
import importlib.util
import inspect
import itertools
import os
import sys
from dataclasses import dataclass
from types import CodeType
from typing import Any

import jax

from jaxlint.model import Finding, Job, Span
from jaxlint.rules.analysis_failures import ImportErrorRule
from jaxlint.scan import discover
from jaxlint.worker import examples_api
from jaxlint.worker.argsources import ArgumentRequest, ArgumentSet
from jaxlint.worker.errors import describe_error, user_frames
from jaxlint.worker.importer import is_project_module
from jaxlint.worker.instrument import abstractify

_UNBOUND = object()
CodeKey = tuple[str, int, str]  # real path of the file, first line, name
_names = itertools.count()
# (examples file, sha256 of its bytes) -> real paths of the files its registrations point into.
_REACHES: dict[tuple[str, str], frozenset[str]] = {}


@dataclass
class Registration:
    """One usable ``jaxlint.example`` call, matched to targets by ``key``."""

    key: CodeKey
    args: tuple  # abstract: arrays are ShapeDtypeStructs
    kwargs: dict
    bound: Any = _UNBOUND  # the object of a registered bound method or module instance
    call: Any = None  # what to trace instead of the target (a linen ``model.apply``)
    function: Any = None  # what was registered: traced itself when it is no scanned target
    examples_file: str = ""  # the configured file that made it (an input of the module's result)


def arguments(request: ArgumentRequest) -> list[ArgumentSet]:
    code = code_of(request.function)
    if code is None:
        return []
    key, found = _key(code), []
    for entry in request.examples:
        if entry.key != key:
            continue
        args = entry.args
        # A bound method or module instance was registered; the target resolved from its class
        # is a plain function that takes the object first (a classmethod resolves bound already).
        if entry.bound is not _UNBOUND and not inspect.ismethod(request.function):
            args = (entry.bound, *args)
        kwargs = entry.kwargs
        if entry.call is None and request.target.kind in ("jit-decorated", "jit-bound"):
            args, kwargs = weak_scalars(request.target, args, kwargs)
        found.append(ArgumentSet("examples", args, kwargs, call=entry.call))
    return found


def weak_scalars(target: Any, args: tuple, kwargs: dict) -> tuple[tuple, dict]:
    """A Python int or float passed for a jitted function's traced (not static) parameter is what
    jit traces as a weakly typed scalar input: so it is here, as a weakly typed ShapeDtypeStruct,
    rather than a constant of the trace (JX206 reads the weak input; other rules see the same
    operations, as jit would have traced them)."""
    params, static = target.params, set(target.static_argnames)
    static.update(params[i] for i in target.static_argnums if -len(params) <= i < len(params))

    def weak(leaf: Any) -> Any:
        if type(leaf) is float:
            return jax.ShapeDtypeStruct((), jax.dtypes.canonicalize_dtype(float), weak_type=True)
        if type(leaf) is int and -2 ** 31 <= leaf < 2 ** 31:
            return jax.ShapeDtypeStruct((), jax.dtypes.canonicalize_dtype(int), weak_type=True)
        return leaf

    traced = lambda name, value: value if name in static else jax.tree_util.tree_map(weak, value)  # noqa: E731
    names = [params[i] if i < len(params) else None for i in range(len(args))]
    return (tuple(traced(name, value) for name, value in zip(names, args)),
            {name: traced(name, value) for name, value in kwargs.items()})


def registered_instance(request: ArgumentRequest) -> Any:
    """An instance of the class defining the method ``request.target`` that an examples file
    registered (its bound method or the module instance itself), else None."""
    owner: Any = request.module
    for part in request.target.qualname.split(".")[:-1]:
        owner = getattr(owner, part, None)
    if not isinstance(owner, type):
        return None
    return next((entry.bound for entry in request.examples
                 if entry.bound is not _UNBOUND and isinstance(entry.bound, owner)), None)


def run_examples(job: Job, codes: set[str]) -> tuple[list[Registration], list[Finding]]:
    """Run the examples files for the module of ``job`` (already imported): its registrations
    (for ``arguments``, through ArgumentRequest.examples) and the findings about failures."""
    findings: list[Finding] = []
    registrations: list[Registration] = []
    here = _real(job.path)
    examples_api.REGISTRY.clear()  # calls made elsewhere (the module itself) are not used
    for file in job.settings.examples:
        key = _file_key(file)
        if key in _REACHES and here not in _REACHES[key]:
            continue
        entries, error = _execute(file)
        entries = [_unfold(entry) for entry in entries]
        keys = [_target_key(entry.function, entry.kwargs) for entry in entries]
        if error is None:
            _REACHES[key] = frozenset(k[0] for k in keys if k is not None)
        elif ImportErrorRule.code in codes:
            findings.append(_failure(job, file, error))
        for entry, target in zip(entries, keys):
            if target is None or target[0] != here:
                continue  # unusable, or registers a function of another module
            try:
                registrations.append(dataclasses.replace(_registration(entry, target), examples_file=file))
            except Exception as error:  # e.g. a linen module whose init fails on these shapes
                if ImportErrorRule.code in codes:
                    findings.append(_failure(job, entry.file, error, entry.line))
    return registrations, findings


def code_of(function: Any) -> CodeType | None:
    """The code object under jit wrappers, decorators using functools.wraps and bound methods."""
    try:
        unwrapped = inspect.unwrap(function)
        unwrapped = inspect.unwrap(getattr(unwrapped, "__func__", unwrapped))
    except Exception:  # a __wrapped__ cycle, or a user __getattr__ that raises
        return None
    code = getattr(unwrapped, "__code__", None)
    return code if isinstance(code, CodeType) else None


def _linen_module() -> type | None:
    """flax.linen.Module if the user's code imported flax (never imported here: it is slow)."""
    linen = sys.modules.get("flax.linen")
    return getattr(linen, "Module", None)


def _key(code: CodeType) -> CodeKey:
    return (_real(code.co_filename), code.co_firstlineno, code.co_name)


def _unfold(entry: examples_api.Example) -> examples_api.Example:
    """``example(partial(f, a), b)`` registers ``f(a, b)``."""
    fn, args, kwargs = entry.function, entry.args, entry.kwargs
    while isinstance(fn, functools.partial):
        fn, args, kwargs = fn.func, (*fn.args, *args), {**fn.keywords, **kwargs}
    return dataclasses.replace(entry, function=fn, args=args, kwargs=kwargs)


def _is_linen_apply(fn: Any) -> bool:
    linen = _linen_module()
    return (linen is not None and inspect.ismethod(fn) and isinstance(fn.__self__, linen)
            and fn.__name__ == "apply")


def _target_key(fn: Any, kwargs: dict) -> CodeKey | None:
    """The code of the target a registered callable stands for (None: matches nothing)."""
    try:
        code = _target_code(fn, kwargs)
    except Exception:  # e.g. apply(method="missing"): the trace would fail the same way
        return None
    return None if code is None else _key(code)


def _target_code(fn: Any, kwargs: dict) -> CodeType | None:
    if _is_linen_apply(fn):
        method = kwargs.get("method") or "__call__"  # apply runs __call__ unless method= says
        return code_of(getattr(type(fn.__self__), method) if isinstance(method, str) else method)
    code = code_of(fn)
    if code is None and callable(fn) and not isinstance(fn, type):
        code = code_of(type(fn).__call__)  # a module instance (Equinox, linen): its __call__
    return code


def _registration(entry: examples_api.Example, key: CodeKey) -> Registration:
    registration = _registered(entry, key)
    registration.function = entry.function
    return registration


def _registered(entry: examples_api.Example, key: CodeKey) -> Registration:
    fn = entry.function
    # Each keyword on its own: mapping over the dict would sort the keys (and the signature).
    args, kwargs = abstractify(entry.args), {k: abstractify(v) for k, v in entry.kwargs.items()}
    linen = _linen_module()
    if linen is not None and isinstance(fn, linen):
        # A bare linen module only runs inside ``apply``: trace ``model.apply`` with the
        # variables ``model.init`` would create, as shapes (nothing is computed).
        return Registration(key, (_init_shapes(fn, args, kwargs), *args), kwargs, call=fn.apply)
    if _is_linen_apply(fn):
        return Registration(key, args, kwargs, call=fn)  # traced as written: apply runs the target
    if inspect.ismethod(fn):
        return Registration(key, args, kwargs, bound=abstractify(fn.__self__))
    if code_of(fn) is None:  # an instance whose __call__ is the target (an Equinox module)
        return Registration(key, args, kwargs, bound=abstractify(fn))
    return Registration(key, args, kwargs)


def _init_shapes(model: Any, args: tuple, kwargs: dict) -> Any:
    """``jax.eval_shape(model.init)``: ShapeDtypeStruct leaves are inputs, others static."""
    leaves, treedef = jax.tree_util.tree_flatten((args, kwargs))
    dynamic = [i for i, leaf in enumerate(leaves) if isinstance(leaf, jax.ShapeDtypeStruct)]

    def init(key: Any, *values: Any) -> Any:
        filled = list(leaves)
        for index, value in zip(dynamic, values):
            filled[index] = value
        call_args, call_kwargs = jax.tree_util.tree_unflatten(treedef, filled)
        return model.init(key, *call_args, **call_kwargs)

    return jax.eval_shape(init, jax.random.PRNGKey(0), *[leaves[i] for i in dynamic])


def _execute(file: str) -> tuple[list[examples_api.Example], BaseException | None]:
    """Run an examples file as a fresh module; its registrations and the error it raised."""
    root = discover.find_root(file)
    if root not in sys.path:
        sys.path.insert(0, root)  # its helpers import the way pytest would find them
    name = f"_jaxlint_examples_{next(_names)}"
    spec = importlib.util.spec_from_file_location(name, file)
    module = importlib.util.module_from_spec(spec)
    modules, start = set(sys.modules), len(examples_api.REGISTRY)
    sys.modules[name] = module
    error = None
    try:
        spec.loader.exec_module(module)
    except BaseException as raised:  # SystemExit included: the module's other targets go on
        error = raised
    finally:
        entries = examples_api.REGISTRY[start:]
        del examples_api.REGISTRY[start:]
        # Helpers it imported from its own folder would be stale for the next module.
        for new in set(sys.modules) - modules:
            if new == name or is_project_module(sys.modules.get(new), root):
                del sys.modules[new]
    return entries, error


def _failure(job: Job, file: str, error: BaseException, line: int | None = None) -> Finding:
    """JX901 on the analyzed module: the examples file raised (or one entry in it, at ``line``)."""
    root = job.settings.root or os.path.dirname(file)
    shown = os.path.relpath(file, root)
    shown = file if shown.startswith("..") else shown
    if line is None:
        frame, raised = user_frames(error, file)
        where = f"{shown}:{frame.lineno}" if frame is not None else shown
        message = (f"the examples file {where} raised {describe_error(error)}{raised}; the examples "
                   "it registers after that line are missing")
    else:
        message = f"the example at {shown}:{line} cannot be used: {describe_error(error)}"
    return ImportErrorRule.finding(job.path, Span(1, 0, 1, 0), message)


def _file_key(file: str) -> tuple[str, str]:
    """The file and the sha256 of its bytes: a worker the editor server keeps warm sees an edit
    that keeps the file's size and times (in the same tick of the clock)."""
    try:
        with open(file, "rb") as handle:
            return (file, hashlib.sha256(handle.read()).hexdigest())
    except OSError:
        return (file, "")


def _real(path: str) -> str:
    return os.path.normcase(os.path.realpath(path))
