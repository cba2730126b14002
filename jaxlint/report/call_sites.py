"""What the calls of a function in its own file pass each parameter: a float, int or bool literal
(``update(params, batch, 0.01)``, or a name the calling scope binds to one: ``LR = 1e-3``), an
iterator (a generator expression, ``iter(...)``, a call of a generator def of the file), or a list
of dicts (``[{"w": ..., "b": ...}]``). Evidence for a suggested hint where the body's use says
less; a parameter the calls disagree on is left out. Never imports JAX or the user's code.
"""
from __future__ import annotations

import ast

from jaxlint.report.parameter_use import ParameterUse, module_defs
from jaxlint.scan.index import SourceIndex

_LITERALS = ((bool, "bool"), (int, "int"), (float, "float"))


def call_site_uses(index: SourceIndex, function: ast.FunctionDef | ast.AsyncFunctionDef) -> dict[str, ParameterUse]:
    """Per parameter of a module-level ``function``, the kind every call of it in the file that
    says anything agrees on."""
    if index.tree is None or module_defs(index).get(function.name) is not function:
        return {}
    positional = [a.arg for a in (*function.args.posonlyargs, *function.args.args)]
    seen: dict[str, list[ParameterUse]] = {}
    for call in index.memo("call-sites", lambda: _calls(index)).get(function.name, []):
        if any(isinstance(a, ast.Starred) for a in call.args):
            continue
        passed = list(zip(positional, call.args)) + [(k.arg, k.value) for k in call.keywords if k.arg]
        for name, value in passed:
            use = _passed(index, value, call)
            if use is not None:
                seen.setdefault(name, []).append(use)
    return {name: uses[0] for name, uses in seen.items()
            if all((u.kind, u.element_keys) == (uses[0].kind, uses[0].element_keys) for u in uses)}


def _calls(index: SourceIndex) -> dict[str, list[ast.Call]]:
    """The file's calls of a plain name, by that name."""
    found: dict[str, list[ast.Call]] = {}
    for node in index.calls:
        if isinstance(node.func, ast.Name):
            found.setdefault(node.func.id, []).append(node)
    return found


def _passed(index: SourceIndex, value: ast.expr, call: ast.Call) -> ParameterUse | None:
    """What one argument expression is, following a name to its one binding in the calling scope."""
    if isinstance(value, ast.Name):
        value = _bound(index, value.id, call)  # type: ignore[assignment]
        if value is None:
            return None
    if isinstance(value, ast.UnaryOp) and isinstance(value.op, (ast.USub, ast.UAdd)):
        value = value.operand
    if isinstance(value, ast.Constant):
        return next((ParameterUse(kind) for python, kind in _LITERALS if isinstance(value.value, python)), None)
    if isinstance(value, ast.GeneratorExp):
        return ParameterUse("iterator")
    if isinstance(value, ast.Call) and isinstance(value.func, ast.Name):
        if value.func.id == "iter":
            return ParameterUse("iterator")
        called = module_defs(index).get(value.func.id)
        if called is not None and any(isinstance(n, (ast.Yield, ast.YieldFrom)) for n in ast.walk(called)):
            return ParameterUse("iterator")
    element = value.elt if isinstance(value, ast.ListComp) else value.elts[0] if isinstance(
        value, ast.List) and value.elts else None
    if isinstance(element, ast.Dict) and all(isinstance(k, ast.Constant) and isinstance(k.value, str)
                                             for k in element.keys):
        return ParameterUse("sequence", element_keys=[k.value for k in element.keys])  # type: ignore[union-attr]
    return None


def _bound(index: SourceIndex, name: str, at: ast.AST) -> ast.expr | None:
    """The value of the one plain assignment of ``name`` in the function around ``at``, else in
    the module (none when it is bound more than once: which value reaches the call is unknown)."""
    scope: ast.AST | None = at
    while scope is not None and not isinstance(scope, (ast.FunctionDef, ast.AsyncFunctionDef, ast.Module)):
        scope = index.parent(scope)
    for body in dict.fromkeys([scope, index.tree]):
        if isinstance(body, (ast.FunctionDef, ast.AsyncFunctionDef)) and name in {
                a.arg for a in (*body.args.posonlyargs, *body.args.args, *body.args.kwonlyargs)}:
            return None  # a parameter of the calling function: its value is its caller's
        nodes = _statements(body)
        values = [n.value for n in nodes if isinstance(n, ast.Assign) and len(n.targets) == 1
                  and isinstance(n.targets[0], ast.Name) and n.targets[0].id == name]
        stores = [n for n in nodes if isinstance(n, ast.Name) and n.id == name and isinstance(n.ctx, ast.Store)]
        if stores:  # bound here: by one plain assignment, or in a way not followed (a for loop, twice)
            return values[0] if len(values) == len(stores) == 1 else None
    return None


def _statements(scope: ast.AST | None) -> list[ast.AST]:
    """The nodes of one scope, not those of the defs and classes inside it."""
    found, todo = [], list(ast.iter_child_nodes(scope)) if scope is not None else []
    while todo:
        node = todo.pop()
        if not isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef, ast.Lambda)):
            found.append(node)
            todo += ast.iter_child_nodes(node)
    return found
