"""The part of a project file that a module's analysis ran: a digest that an edit of a function
the analysis never called leaves unchanged (result cache).

A module's result depends on the project files it imported, but only on the code of theirs that
ran. When the worker traced nothing, it knows every function that ran (``Result.ran``); an edit
confined to the bodies of the others (a fix in a helper only other modules call) cannot change
the result. The digest keeps everything that runs at import (module and class level, decorators,
default values, annotations, docstrings) and the functions that ran, whole; the body of every
other function is replaced by a marker. When the worker traced something, every function counts
as run (``RAN_ALL``). Comments and positions are never part of it, so lines that move do not count
(a result that names the file is never judged by this digest: the cache checks).
"""
from __future__ import annotations

import ast
import hashlib
import os
import re
from typing import Collection

from jaxlint.model import RAN_ALL

# What an unrun function's body becomes (a string no source holds in that place by accident).
_UNRUN = "jaxlint: body of a function the analysis did not run"


def ran_digest(data: bytes, ran: Collection[str]) -> str | None:
    """sha256 of ``data``'s syntax tree with the bodies of functions whose qualified names are not
    in ``ran`` left out; None when ``data`` does not parse (then only its bytes can tell)."""
    try:
        tree = ast.parse(data)
    except (SyntaxError, ValueError):  # ValueError: null bytes
        return None
    if RAN_ALL not in ran:
        _blank(tree, "", frozenset(ran))
    return hashlib.sha256(ast.dump(tree, include_attributes=False).encode("utf-8", "surrogatepass")).hexdigest()


def _blank(node: ast.AST, prefix: str, ran: frozenset[str]) -> None:
    """Blank the bodies of the functions under ``node`` that did not run; ``prefix``: the
    qualified-name prefix of what ``node`` defines (as Python's ``co_qualname`` spells it)."""
    for child in ast.iter_child_nodes(node):
        if isinstance(child, (ast.FunctionDef, ast.AsyncFunctionDef)):
            qualname = prefix + child.name
            if qualname in ran:
                _blank(child, qualname + ".<locals>.", ran)
            else:
                docstring = child.body[:1] if ast.get_docstring(child, clean=False) is not None else []
                child.body = [*docstring, ast.Expr(ast.Constant(_UNRUN))]
        elif isinstance(child, ast.ClassDef):
            _blank(child, prefix + child.name + ".", ran)
        else:
            _blank(child, prefix, ran)


def names_file(text: str, path: str) -> bool:
    """Whether ``text`` names the file ``path``: its name, not inside a longer one (a result that
    names ``_ad.py`` may carry its lines; one that names ``test_ad.py`` does not)."""
    return re.search(r"(?<![\w.-])" + re.escape(os.path.basename(path)), text) is not None
