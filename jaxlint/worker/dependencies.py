"""Telling a missing optional dependency from a broken import of the project's own.

A module that fails to import because a package outside the project is not installed where
jaxlint runs (``import sklearn`` without scikit-learn) is not an error in the user's code: it is a
coverage entry (kind "dependency-missing"). An ImportError about the project's own modules (a typo
in its import, a module it lacks, a name its module does not define) stays a JX901 finding.

The rule, on the ImportError's ``name`` (the module that was not found, or the one a ``from m
import x`` read):
- the project's own: its top-level package is a module or package of the project (found on
  sys.path inside the project root, or already imported from there), or a file or folder of the
  root is named like it (``import utilz`` beside ``utils.py`` is a typo, not a missing package);
- a dependency: any other module, not installed at all, or installed outside the project (a
  submodule or name an installed package of another version lacks).
An ImportError without a ``name`` (raised by hand) is judged by the ImportError it was raised from
(numpyro's ``raise ImportError("... please install jaxns") from e``); with none, it stays JX901.

Any other exception raised while an installed package's own module body ran (its import, from the
project's) is that package's failure: tensorflow_probability 0.25 raises AttributeError on import
under JAX 0.10. An error raised in an installed package's function that the project's module
called (``jnp.ones(3) @ jnp.ones(4)`` at import) is still the project's.
"""
from __future__ import annotations

import difflib
import importlib.util
import os
import sys

from jaxlint.worker.importer import is_project_file, is_project_module

# How close a missing top-level name must be to a module of the project to read as its typo.
TYPO_CUTOFF = 0.8


def missing_dependency(error: BaseException, roots: list[str]) -> str | None:
    """What is missing outside the project that made the import fail ("optional dependency
    missing: sklearn", or an installed package that raised on import), or None when the failure
    is the project's own.
    ``roots``: the module's import root and the project's (the configuration's folder)."""
    if not isinstance(error, ImportError):
        return _broken_on_import(error, roots)
    name = getattr(error, "name", None)
    cause = error.__cause__ or error.__context__
    if not name and isinstance(cause, ImportError):
        return missing_dependency(cause, roots)  # a message raised by hand over the real failure
    if not isinstance(name, str) or not name or name.startswith("."):
        return None
    top = name.split(".")[0]
    if _is_project_name(top, [r for r in roots if r]):
        return None
    if isinstance(error, ModuleNotFoundError):
        return f"optional dependency missing: {name}"
    return f"installed dependency {name} lacks what the module imports ({error})"


def _broken_on_import(error: BaseException, roots: list[str]) -> str | None:
    """The installed package whose module body was running when ``error`` was raised, or None."""
    frames, tb = [], error.__traceback__
    while tb is not None:
        frames.append(tb)
        tb = tb.tb_next
    for frame in frames:
        path = frame.tb_frame.f_code.co_filename
        if frame.tb_frame.f_code.co_name != "<module>" or any(is_project_file(path, r) for r in roots if r):
            continue
        for marker in ("site-packages", "dist-packages"):
            installed = path.partition(os.sep + marker + os.sep)[2]
            if installed:
                top = installed.split(os.sep)[0].removesuffix(".py")
                return (f"installed dependency broken on import ({type(error).__name__} at "
                        f"{os.path.basename(path)}:{frame.tb_lineno}): {top}")
    return None


def _is_project_name(top: str, roots: list[str]) -> bool:
    module = sys.modules.get(top)
    if module is not None:
        return any(is_project_module(module, root) for root in roots)
    try:
        spec = importlib.util.find_spec(top)
    except (ImportError, ValueError):  # a parent that fails to import, a broken __spec__
        spec = None
    if spec is not None:
        origins = [spec.origin] if spec.origin else list(spec.submodule_search_locations or [])
        return any(isinstance(o, str) and is_project_file(o, root) for o in origins for root in roots)
    names = [name for root in roots for name in _top_level_names(root)]
    return bool(difflib.get_close_matches(top, names, n=1, cutoff=TYPO_CUTOFF))


def _top_level_names(root: str) -> list[str]:
    """The module and package names at the project root (and under src/, the usual layout)."""
    names = []
    for folder in (root, os.path.join(root, "src")):
        try:
            entries = os.listdir(folder)
        except OSError:
            continue
        for entry in entries:
            if entry.endswith(".py"):
                names.append(entry[:-3])
            elif entry.isidentifier() and os.path.isdir(os.path.join(folder, entry)):
                names.append(entry)
    return names
