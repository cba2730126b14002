"""A method's parameter that its body maps over together with ``self``
(``tree_map(lambda x, y: x + y, self, o)``): JAX maps trees of one structure only, so the
parameter is another instance of the method's class (brax's ``Base.__sub__(self, o: Any)``),
built by the same rules as ``self`` (instances.py). Only a parameter without an annotation, or
annotated ``Any``: an annotation says what it takes."""
from __future__ import annotations

import ast
import inspect
from typing import Any

_TREE_MAPS = ("tree_map", "tree.map", "tree_util.tree_map")


def co_mapped(definition: ast.AST | None, callee: Any) -> list[str]:
    """The parameters of ``callee`` (its ``def``: ``definition``) that a ``tree_map`` call of its
    body takes beside ``self``, its first parameter."""
    if not isinstance(definition, (ast.FunctionDef, ast.AsyncFunctionDef)) or not definition.args.args:
        return []
    try:
        params = list(inspect.signature(callee).parameters.values())
    except (TypeError, ValueError):
        return []
    open_params = {p.name for p in params[1:] if p.default is p.empty and _open(p.annotation)
                   and p.kind not in (p.VAR_POSITIONAL, p.VAR_KEYWORD)}
    self_name = definition.args.args[0].arg
    found: list[str] = []
    for node in ast.walk(definition):
        if not (isinstance(node, ast.Call) and _is_tree_map(node.func)):
            continue
        trees = [arg.id for arg in node.args[1:] if isinstance(arg, ast.Name)]
        if self_name in trees:
            found += [name for name in trees if name in open_params and name not in found]
    return found


def _open(annotation: Any) -> bool:
    """No annotation, or ``Any`` (a string annotation too)."""
    return annotation is inspect.Parameter.empty or annotation is Any or \
        isinstance(annotation, str) and annotation in ("Any", "typing.Any")


def _is_tree_map(func: ast.AST) -> bool:
    parts = []
    while isinstance(func, ast.Attribute):
        parts.append(func.attr)
        func = func.value
    if isinstance(func, ast.Name):
        parts.append(func.id)
    dotted = ".".join(reversed(parts))
    return any(dotted == name or dotted.endswith("." + name) for name in _TREE_MAPS)
