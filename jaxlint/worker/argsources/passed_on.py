"""Function stand-ins for the parameters a function passes on as functions (issue 48): a parameter
the body never uses as a value of its own, but calls, or hands to something that calls it:

=====================================================================  ================================
the parameter ``p`` is                                                  stand-in (worker/standins.py)
=====================================================================  ================================
called: ``p(x)``                                                        its first argument
the body of ``jax.lax.scan(p, ...)``                                    ``(carry, x)``
the condition of ``jax.lax.while_loop(p, ...)``                         ``False``
the body of ``jax.lax.while_loop(c, p, ...)``, the branches of          its first argument
``jax.lax.cond(pred, p, q, ...)``, ``jax.lax.map(p, ...)``, the
function of ``jax.vmap``, ``jax.jit``, ``jax.checkpoint``, ``jax.jvp``,
``jax.tree_util.tree_map``, ... and ``functools.partial(p, ...)``
the body of ``jax.lax.fori_loop(lo, hi, p, ...)``                       its second argument
the function of ``jax.grad``, ``jax.value_and_grad``                    ``-0.5*sum(x**2)``
an argument of a function or class of the same project (its top-level   what that parameter of the
package) whose matching parameter takes a function: by its name or      callee is given, by these
``Callable`` annotation (``fn``), or by this table, read from the       rules, three levels deep
callee's own code (its ``__init__``'s for a class)
=====================================================================  ================================

A name of a log-density, a loss or an energy (standins.SCALAR_NAME) gives ``-0.5*sum(x**2)``
where the table says "its first argument". Every use of the parameter must be one of these (or
``p is None``, ``callable(p)``): a parameter also read as a value (``p.x``, ``p * 2``, passed to an
unknown callable, or to a callee that uses it as an array) gets nothing here and stays as before.
Names are resolved to the objects the module holds (its globals, the function's closure), so an
alias (``from jax import lax as L``) is the same primitive, and a local of that name is nothing.
"""
from __future__ import annotations

import ast
import functools
import inspect
import textwrap
from typing import Any, Callable

from jaxlint.worker import standins

DEPTH = 3  # how many callees deep a parameter is followed
_FUNCTIONS = (ast.FunctionDef, ast.AsyncFunctionDef, ast.Lambda)
_NEUTRAL_CALLS = ("callable", "isinstance")
# A JAX function's slots that take a function: (module, name) -> {position or keyword: stand-in name}
_JAX_SLOTS = {
    ("jax.lax", "scan"): {0: "SCAN_BODY", "f": "SCAN_BODY"},
    ("jax.lax", "while_loop"): {0: "FALSE", "cond_fun": "FALSE", 1: "FIRST", "body_fun": "FIRST"},
    ("jax.lax", "fori_loop"): {2: "SECOND", "body_fun": "SECOND"},
    ("jax.lax", "cond"): {1: "FIRST", 2: "FIRST", "true_fun": "FIRST", "false_fun": "FIRST"},
    ("jax.lax", "map"): {0: "FIRST", "f": "FIRST"},
    ("jax.lax", "associative_scan"): {0: "FIRST", "fn": "FIRST"},
    ("jax", "grad"): {0: "SCALAR", "fun": "SCALAR"},
    ("jax", "value_and_grad"): {0: "SCALAR", "fun": "SCALAR"},
    **{("jax", name): {0: "FIRST", "fun": "FIRST"} for name in (
        "vmap", "jit", "checkpoint", "remat", "jacfwd", "jacrev", "hessian", "eval_shape", "jvp", "vjp",
        "linearize", "custom_jvp", "custom_vjp", "named_call")},
    ("jax.tree_util", "tree_map"): {0: "FIRST", "f": "FIRST"},
    ("jax.tree", "map"): {0: "FIRST", "f": "FIRST"},
    ("functools", "partial"): {0: "FIRST", "func": "FIRST"},
}


def stand_ins(definition: ast.AST | None, function: Any, given: dict[str, Any]) -> dict[str, Any]:
    """A stand-in for each parameter of ``definition`` (the target ``function``'s def) without a
    default that the body only passes on as a function; those ``given`` a value that is not a
    stand-in (a factory's state) are left as they are."""
    if not isinstance(definition, (ast.FunctionDef, ast.AsyncFunctionDef)):
        return {}
    resolver = _Resolver(function)
    if resolver.project is None:
        return {}
    found = {}
    for name in _required(definition):
        if name in given and not isinstance(given[name], standins.StandIn):
            continue
        stand_in = _parameter_stand_in(definition, name, resolver, DEPTH)
        if stand_in is not None:
            found[name] = stand_in
    return found


def _required(definition: ast.FunctionDef | ast.AsyncFunctionDef) -> list[str]:
    """The parameters without a default (not ``self``, ``*args``, ``**kwargs``)."""
    arguments = definition.args
    positional = [*arguments.posonlyargs, *arguments.args]
    required = positional[:len(positional) - len(arguments.defaults)]
    required += [arg for arg, default in zip(arguments.kwonlyargs, arguments.kw_defaults) if default is None]
    return [arg.arg for arg in required if arg.arg not in ("self", "cls")]


def _parameter_stand_in(definition: ast.AST, name: str, resolver: _Resolver, depth: int) -> Any:
    """The stand-in where every load of ``name`` in the body is a function's use, None else."""
    parents = {child: node for node in ast.walk(definition) for child in ast.iter_child_nodes(node)}
    chosen = None
    for node in _loads(definition, name, parents):
        use = _use(node, parents.get(node), resolver, depth)
        if use is None:
            return None
        if use is not _NEUTRAL and (chosen is None or chosen is standins.FIRST_ARGUMENT):
            chosen = use  # a slot's own stand-in (a scan's body) over a plain call's
    if chosen is standins.FIRST_ARGUMENT and standins.SCALAR_NAME.fullmatch(name.lower()):
        return standins.SCALAR
    return chosen


_NEUTRAL = object()


def _loads(definition: ast.AST, name: str, parents: dict[ast.AST, ast.AST]) -> list[ast.Name]:
    """The loads of ``name`` in the body, outside nested functions that take a parameter of that
    name (a store rebinds it: its later loads are of another value, and taken as the parameter's,
    which asks more of them, never less)."""
    found = []
    for statement in definition.body:  # type: ignore[attr-defined]
        for node in ast.walk(statement):
            if isinstance(node, ast.Name) and node.id == name and isinstance(node.ctx, ast.Load) \
                    and not _shadowed(node, name, definition, parents):
                found.append(node)
    return found


def _shadowed(node: ast.AST, name: str, definition: ast.AST, parents: dict[ast.AST, ast.AST]) -> bool:
    while node is not definition and node in parents:
        node = parents[node]
        if isinstance(node, _FUNCTIONS) and node is not definition:
            arguments = node.args
            every = [*arguments.posonlyargs, *arguments.args, *arguments.kwonlyargs, arguments.vararg, arguments.kwarg]
            if any(arg is not None and arg.arg == name for arg in every):
                return True
    return False


def _use(node: ast.Name, parent: ast.AST | None, resolver: _Resolver, depth: int) -> Any:
    """The stand-in one load asks for, _NEUTRAL for a use that says nothing, None for a value's use."""
    if isinstance(parent, ast.Call) and parent.func is node:
        return standins.FIRST_ARGUMENT
    if isinstance(parent, ast.Compare) and all(isinstance(op, (ast.Is, ast.IsNot)) for op in parent.ops):
        return _NEUTRAL
    if not isinstance(parent, ast.Call):
        return None
    if isinstance(parent.func, ast.Name) and parent.func.id in _NEUTRAL_CALLS and parent.args[:1] == [node]:
        return _NEUTRAL
    if any(isinstance(arg, ast.Starred) for arg in parent.args[:_position(parent, node) or 0]):
        return None  # its position in the callee is not known
    slot = _position(parent, node)
    if slot is None:
        slot = next((k.arg for k in parent.keywords if k.value is node), None)
    callee = resolver.resolve(parent.func)
    return None if slot is None or callee is None else slot_stand_in(callee, slot, resolver.project, depth)


def _position(call: ast.Call, node: ast.AST) -> int | None:
    return next((i for i, arg in enumerate(call.args) if arg is node), None)


def slot_stand_in(callee: Any, slot: int | str, project: str, depth: int) -> Any:
    """The stand-in a function passed to ``callee`` at ``slot`` (a position or a keyword) needs:
    a JAX primitive's by the table, a project callee's by its parameter; None else."""
    names = _jax_slots().get(id(callee))
    if names is not None:
        return _STAND_INS[names[slot]]() if slot in names else None
    if depth <= 0 or project is None or (getattr(callee, "__module__", None) or "").partition(".")[0] != project:
        return None
    function, skip = (callee.__init__, 1) if isinstance(callee, type) else (callee, 0)
    function = inspect.unwrap(function)
    param = _parameter(function, slot, skip)
    if param is None:
        return None
    stand_in = standins.for_parameter(param)
    if isinstance(stand_in, standins.StandIn):
        return stand_in
    return _callee_stand_in(function, param.name, depth - 1)


def _parameter(function: Any, slot: int | str, skip: int) -> inspect.Parameter | None:
    try:
        params = list(inspect.signature(function).parameters.values())[skip:]
    except (TypeError, ValueError):
        return None
    if isinstance(slot, str):
        return next((p for p in params if p.name == slot and p.kind != p.POSITIONAL_ONLY), None)
    positional = [p for p in params if p.kind in (p.POSITIONAL_ONLY, p.POSITIONAL_OR_KEYWORD)]
    return positional[slot] if slot < len(positional) else None


def _callee_stand_in(function: Any, name: str, depth: int) -> Any:
    """What ``function``'s parameter ``name`` is given by its own code, once per function."""
    key = (id(function), name, depth)
    if key not in _CALLEES:
        _CALLEES[key] = (function, None)  # a callee that reaches itself again gives nothing
        _CALLEES[key] = (function, _parameter_stand_in_of(function, name, depth))
    return _CALLEES[key][1]


# (id of a callee, parameter, depth) -> (the callee, kept alive so that its id stays its own; the stand-in)
_CALLEES: dict[tuple[int, str, int], tuple[Any, Any]] = {}


def _parameter_stand_in_of(function: Any, name: str, depth: int) -> Any:
    definition = _definition_of(function)
    if definition is None:
        return None
    return _parameter_stand_in(definition, name, _Resolver(function), depth)


def _definition_of(function: Any) -> ast.FunctionDef | ast.AsyncFunctionDef | None:
    """The def of ``function`` parsed from its source, or None (no source, a lambda)."""
    try:
        tree = ast.parse(textwrap.dedent(inspect.getsource(function)))
    except Exception:  # no source, or source that does not parse on its own
        return None
    first = tree.body[0] if tree.body else None
    return first if isinstance(first, (ast.FunctionDef, ast.AsyncFunctionDef)) else None


class _Resolver:
    """The objects a function's names and dotted names stand for: its closure's, then its module's."""

    def __init__(self, function: Any) -> None:
        function = inspect.unwrap(function) if callable(function) else function
        function = getattr(function, "__func__", function)
        self.names: dict[str, Any] = dict(getattr(function, "__globals__", None) or {})
        code, cells = getattr(function, "__code__", None), getattr(function, "__closure__", None) or ()
        for free, cell in zip(getattr(code, "co_freevars", ()), cells):
            try:
                self.names[free] = cell.cell_contents
            except ValueError:  # an empty cell: the name is bound later
                self.names.pop(free, None)
        module = self.names.get("__name__")
        self.project = module.partition(".")[0] if isinstance(module, str) else None

    def resolve(self, node: ast.AST) -> Any:
        """The object ``name`` or ``a.b.c`` names, through modules and classes only (no attribute
        of an instance is read: a property could run), or None."""
        if isinstance(node, ast.Name):
            return self.names.get(node.id)
        if not isinstance(node, ast.Attribute):
            return None
        owner = self.resolve(node.value)
        if not (inspect.ismodule(owner) or isinstance(owner, type)):
            return None
        try:
            value = inspect.getattr_static(owner, node.attr)
        except AttributeError:
            return None
        return value.__func__ if isinstance(value, (staticmethod, classmethod)) else value


@functools.cache
def _jax_slots() -> dict[int, dict[int | str, str]]:
    """The table, by the id of each JAX function this JAX has."""
    import importlib

    found = {}
    for (module, name), slots in _JAX_SLOTS.items():
        try:
            found[id(getattr(importlib.import_module(module), name))] = slots
        except (ImportError, AttributeError):  # not in this JAX version
            continue
    return found


_STAND_INS: dict[str, Callable[[], Any]] = {
    "FIRST": lambda: standins.FIRST_ARGUMENT,
    "SECOND": lambda: standins.SECOND_ARGUMENT,
    "SCAN_BODY": lambda: standins.CARRY_AND_X,
    "FALSE": lambda: standins.FALSE,
    "SCALAR": lambda: standins.SCALAR,
}
