"""The modules of a base class's own package that define its subclasses, imported before
subclasses.py lists them: a worker checking dynamax's ``ssm.py`` has not imported the hidden
Markov models that subclass its ``SSM``, and Python knows a subclass only once its module ran.
Which modules: those whose source declares a class with the base's name, or one of the subclasses'
names found so far, among its bases (read as text, once per package and worker: no module runs to
find them). A test module, or one whose import fails, is left out."""
from __future__ import annotations

import functools
import re
import sys
from pathlib import Path

from jaxlint.worker import guards
from jaxlint.worker.instrument import unrecorded

_CLASS = re.compile(r"^[ \t]*class[ \t]+(\w+)[ \t]*\(([^)]*)\)", re.MULTILINE)
_MAX_FILES = 2000  # a package larger than this is not read
_MAX_IMPORTS = 40  # the modules imported for one base at most


def import_defining_modules(base: type) -> None:
    """Import the modules of ``base``'s top-level package that define its subclasses, at any
    depth (once per base and worker; what fails to import is skipped)."""
    package = base.__module__.partition(".")[0]
    if package not in sys.modules:
        return
    for module in _defining_modules(package, base.__name__):
        if module in sys.modules:
            continue
        with unrecorded():  # the package's own code, not the checked module's doing
            guards.guarded_import(module)  # an optional dependency missing, a module that fails: None


@functools.lru_cache(maxsize=256)
def _defining_modules(package: str, name: str) -> tuple[str, ...]:
    declared = [(module, owner, set(re.findall(r"\w+", bases))) for module, owner, bases in _class_bases(package)]
    names, matched, modules = {name}, set(), []
    while True:
        found = [i for i, (_, _, words) in enumerate(declared) if i not in matched and words & names]
        if not found:
            return tuple(modules[:_MAX_IMPORTS])
        for i in found:
            module, owner, _ = declared[i]
            matched.add(i)
            names.add(owner)
            if module not in modules:
                modules.append(module)


@functools.lru_cache(maxsize=32)
def _class_bases(package: str) -> tuple[tuple[str, str, str], ...]:
    """(module, class, the text of its bases) for each class the package's files declare."""
    roots = [Path(p) for p in getattr(sys.modules.get(package), "__path__", [])]
    found = []
    for root in roots:
        files = sorted(root.rglob("*.py"))
        if len(files) > _MAX_FILES:
            return ()
        for path in files:
            parts = (package, *path.relative_to(root).with_suffix("").parts)
            if parts[-1] in ("__init__", "__main__"):
                parts = parts[:-1] if parts[-1] == "__init__" else ()
            module = ".".join(parts)
            if not module or "test" in module:
                continue
            try:
                text = path.read_text(encoding="utf-8", errors="replace")
            except OSError:
                continue
            found += [(module, match[1], match[2]) for match in _CLASS.finditer(text)]
    return tuple(found)
