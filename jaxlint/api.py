"""Lint one function in this process, for tests and notebooks.

    findings = jaxlint.lint(fn, x, y)               # every rule
    jaxlint.assert_clean(fn, x, y)                  # AssertionError listing the findings
    jaxlint.lint_with(select=["JX1"]).lint(fn, x)   # rules chosen like --select / --ignore

Unlike ``jaxlint check`` nothing is imported or isolated: ``fn`` (a function, jit wrapper, bound
method or partial) is traced right here. Every positional and keyword argument after ``fn`` goes
to ``fn``, so its own keywords never collide with jaxlint's options (those live on ``lint_with``).
Arrays (NumPy or JAX) and ShapeDtypeStructs are abstract inputs; every other leaf is a static
value. Fixes are reported, never applied. Errors raised while tracing propagate. The rules
and the settling are ``check``'s for ``fn``'s file: the configuration found from its folder
selects the rules (``lint_with``'s select/ignore laid over it, as check's flags are), and the
findings are settled as ``check`` settles them (engine/settle.py): ``# noqa`` comments and the
configuration's per-file-ignores apply.

JX101 sees the vmap calls made from ``fn``'s own file (the file of the Python function behind
any wrapper); vmaps in helpers from other files are traced but not examined. Findings point into
that file. To see functions JAX traced before (its trace cache would skip the Python code),
``lint`` clears JAX's caches before tracing and again afterwards, so later calls compile once more.
"""
from __future__ import annotations

import functools
import inspect
import io
import os
import sys
from dataclasses import dataclass
from typing import Any, Callable, Iterable

from jaxlint.analysis.program import program_findings
from jaxlint.config import Config, Layer, load_config
from jaxlint.config.selection import select_rules
from jaxlint.engine.settle import settle
from jaxlint.ir.truncations import TruncationRecorder
from jaxlint.model import Finding, Settings, Target
from jaxlint.report import summary as report
from jaxlint.rules import Rule, rule_classes
from jaxlint.rules.base import SourceContext
from jaxlint.rules.runner import run_source_rules
from jaxlint.scan.index import SourceIndex
from jaxlint.text import read_source
from jaxlint.worker import instrument as record
from jaxlint.worker.argsources import ArgumentSet
from jaxlint.worker.inprocess import recording_vmaps, target_for
from jaxlint.worker.retrace import ModuleRetracer
from jaxlint.worker.trace import format_signature, trace_function

Selectors = str | Iterable[str] | None


@dataclass(frozen=True)
class Linter:
    """Rules chosen once (``lint_with``); ``lint`` and ``assert_clean`` pass everything else to ``fn``."""

    select: tuple[str, ...] | None = None
    ignore: tuple[str, ...] | None = None

    def lint(self, fn: Callable[..., Any], /, *args: Any, **kwargs: Any) -> list[Finding]:
        """The findings of tracing ``fn(*args, **kwargs)``, sorted by location."""
        return self._run(fn, args, kwargs)[0]

    def assert_clean(self, fn: Callable[..., Any], /, *args: Any, **kwargs: Any) -> None:
        """Raise AssertionError with the findings as ``jaxlint check`` prints them, if any."""
        findings, sources = self._run(fn, args, kwargs)
        if findings:
            text = io.StringIO()
            report.write_findings(findings, sources, text)
            count = f"{len(findings)} finding{'s' if len(findings) != 1 else ''}"
            raise AssertionError(f"jaxlint: {count} in {_name(fn)}:\n{text.getvalue()}")

    def rules(self) -> list[type[Rule]]:
        """The rules ``select`` and ``ignore`` choose, as ``jaxlint check --select/--ignore``
        chooses them without a configuration file (``lint`` lays them over the configuration of
        ``fn``'s file, as check lays its flags over the file's keys)."""
        return select_rules(self.select, self.ignore)

    def _run(self, fn: Callable[..., Any], args: tuple, kwargs: dict) -> tuple[list[Finding], dict[str, str]]:
        function = _python_function(fn)
        code = getattr(function, "__code__", None)
        path = code.co_filename if code is not None else "<unknown>"
        config = _config(path, Layer("jaxlint.lint_with", os.getcwd(), select=_listed(self.select),
                                     ignore=_listed(self.ignore)))
        chosen = rule_classes(r.code for r in config.rules()) if config is not None else self.rules()
        if not chosen:  # an empty list of findings would read as "clean"
            raise ValueError("no rule is selected, so lint would check nothing")
        text = _read(path)
        target = _target(function, path, text)
        arguments = ArgumentSet("api", record.abstractify(tuple(args)),
                                {k: record.abstractify(v) for k, v in kwargs.items()})
        codes, index = {r.code for r in chosen}, SourceIndex(path, text)
        settings = config.settings() if config is not None else Settings()
        with recording_vmaps(path, getattr(function, "__globals__", {})):
            with TruncationRecorder() as truncations:
                closed = trace_function(fn, arguments)
            findings = program_findings(chosen, codes, path, text, target, closed, format_signature(arguments),
                                        index, settings, vmap_records=record.VMAP_RECORDS,
                                        truncations=truncations)
        if text:  # the source rules, over fn's whole file (as jaxlint check runs them)
            module = sys.modules.get(getattr(function, "__module__", None) or "")
            retrace = ModuleRetracer(module, path, settings) if module is not None else None
            findings += run_source_rules(chosen, SourceContext(path, text, index, settings, retrace), codes)
        # As check reports them: per-file-ignores and suppression comments apply (JX800 stays
        # quiet: one function's trace does not say which of the file's comments are unused).
        findings = settle(path, text, findings, codes, config)
        findings.sort(key=lambda f: (f.path, f.span.start_line, f.span.start_col, f.code))
        return findings, {path: text}


def lint_with(*, select: Selectors = None, ignore: Selectors = None) -> Linter:
    """A Linter with rules chosen like ``--select``/``--ignore``: codes, prefixes (``JX1``) or names,
    as a list or a comma-separated string. An unknown selector raises ValueError here; a choice
    that leaves no rule (``select=[]``) raises it at ``lint``, which would check nothing."""
    linter = Linter(_selectors(select), _selectors(ignore))
    linter.rules()  # unknown selectors raise here, not at lint
    return linter


def lint(fn: Callable[..., Any], /, *args: Any, **kwargs: Any) -> list[Finding]:
    """Trace ``fn(*args, **kwargs)`` here with every rule on; see the module docstring."""
    return Linter().lint(fn, *args, **kwargs)


def assert_clean(fn: Callable[..., Any], /, *args: Any, **kwargs: Any) -> None:
    """``lint`` that raises AssertionError listing the findings, for tests."""
    Linter().assert_clean(fn, *args, **kwargs)


def _selectors(value: Selectors) -> tuple[str, ...] | None:
    if value is None:
        return None
    parts = value.split(",") if isinstance(value, str) else list(value)
    return tuple(p.strip() for p in parts if p.strip())


def _python_function(fn: Any) -> Any:
    """The Python function behind jit wrappers, bound methods and partials (its file and qualname)."""
    for _ in range(32):  # bounded: an object whose __getattr__ invents __wrapped__
        if isinstance(fn, functools.partial):
            fn = fn.func
        elif inspect.ismethod(fn):
            fn = fn.__func__
        elif getattr(fn, "__wrapped__", None) is not None:
            fn = fn.__wrapped__
        else:
            break
    return fn


def _name(fn: Any) -> str:
    function = _python_function(fn)
    return getattr(function, "__qualname__", None) or getattr(function, "__name__", None) or repr(fn)


def _listed(selectors: tuple[str, ...] | None) -> list[str] | None:
    return None if selectors is None else list(selectors)


def _config(path: str, chosen: Layer) -> Config | None:
    """The configuration ``jaxlint check`` would use for ``path`` (found from its folder: rule
    selection, rule options, signatures file, per-file-ignores), with ``lint_with``'s selection
    laid over it as check lays its flags; None when it cannot be read (the defaults)."""
    try:
        return load_config([path], overrides=[chosen])
    except Exception:
        return None


def _read(path: str) -> str:
    try:
        return read_source(path).text
    except Exception:  # <stdin>, a notebook cell, a deleted file: findings without excerpts
        return ""


def _target(function: Any, path: str, text: str) -> Target:
    """The scanned target of that function (the CLI's spans), else one built from its code object."""
    code = getattr(function, "__code__", None)
    try:
        params = list(inspect.signature(function).parameters)
    except (TypeError, ValueError):
        params = []
    return target_for(path, text, getattr(function, "__name__", _name(function)), _name(function),
                      code.co_firstlineno if code is not None else 1, params)


__all__ = ["Linter", "assert_clean", "lint", "lint_with"]
