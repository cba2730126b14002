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

For a parameter whose name the ladder does not read (``init``, ``carry``; inferred.py), two more
rows give a value (value_role): passed on only as a JAX loop's initial carry (``scan``'s ``init``,
``while_loop``'s and ``fori_loop``'s ``init_val``, or a project callee's parameter that is), a
one-leaf pytree; only unpacked or iterated (usage.py's row), a tuple of arrays.

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

from jaxlint.worker import instrument, standins
from jaxlint.worker.argsources import usage
from jaxlint.worker.argsources.annotations import evaluated_annotations

DEPTH = 3  # how many callees deep a parameter is followed
_CALLEES_KEPT = 20000
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
# A JAX loop's initial carry, which takes any pytree: a parameter passed there (and nowhere else)
# is a one-leaf pytree (pytrees.py), as a parameter named ``state`` is.
_JAX_SLOTS[("jax.lax", "scan")].update({1: "CARRY", "init": "CARRY"})
_JAX_SLOTS[("jax.lax", "while_loop")].update({2: "CARRY", "init_val": "CARRY"})
_JAX_SLOTS[("jax.lax", "fori_loop")].update({3: "CARRY", "init_val": "CARRY"})
CARRIED = "carried"  # the use of a parameter passed on as a loop's initial carry


def stand_ins(definition: ast.AST | None, function: Any, given: dict[str, Any]) -> dict[str, Any]:
    """A stand-in for each parameter of ``definition`` (the target ``function``'s def) without a
    default that the body only passes on as a function; those ``given`` a value that is not a
    stand-in (a factory's state) are left as they are. The user's objects it reads (a global
    whose ``__getattr__`` raises, a ``__wrapped__`` cycle) give none, never an error."""
    try:
        return _stand_ins(definition, function, given)
    except Exception:
        return {}


def _stand_ins(definition: ast.AST | None, function: Any, given: dict[str, Any]) -> dict[str, Any]:
    if not isinstance(definition, (ast.FunctionDef, ast.AsyncFunctionDef)):
        return {}
    resolver = _Resolver(function)
    if resolver.project is None:
        return {}
    found = {}
    for name in [*_required(definition), *_outer_parameters(definition, function)]:
        if name in given and not isinstance(given[name], standins.StandIn):
            continue
        stand_in = _parameter_stand_in(definition, name, resolver, DEPTH)
        if stand_in is standins.FIRST_ARGUMENT:  # a plain call: the annotation may say more
            stand_in = _annotated_stand_in(function, name) or stand_in
        if isinstance(stand_in, standins.StandIn):
            found[name] = stand_in
    return found


def _annotated_stand_in(function: Any, name: str) -> standins.StandIn | None:
    """The stand-in the parameter's ``Callable`` annotation asks for, where it is more than the
    first argument (``Callable[..., tuple[float, Aux]]``: a value and an auxiliary output); None else."""
    try:
        signature = inspect.signature(function)
    except (TypeError, ValueError):
        return None
    param = signature.parameters.get(name)
    if param is None or param.annotation is param.empty:
        return None
    annotation = evaluated_annotations(inspect.unwrap(function), signature).get(name, param.annotation)
    stand_in = standins.for_parameter(param.replace(annotation=annotation))  # a string one evaluated
    return stand_in if isinstance(stand_in, standins.StandIn) and stand_in is not standins.FIRST_ARGUMENT else None


def value_role(definition: ast.AST | None, function: Any, name: str) -> Any:
    """``_value_role``, None where the user's objects it reads raise."""
    try:
        return _value_role(definition, function, name)
    except Exception:
        return None


def _value_role(definition: ast.AST | None, function: Any, name: str) -> Any:
    """The ladder's role for a parameter whose name says nothing the ladder reads (``init``,
    ``carry``, ``args``: a function, a pytree or an object), from what the body does with it:
    "pytree" where it is only passed on as a loop's initial carry; a tuple of arrays where the body
    only unpacks it (usage.py's row, ``n, x = carry``); None else."""
    if not isinstance(definition, (ast.FunctionDef, ast.AsyncFunctionDef)) or name in ("self", "cls"):
        return None
    resolver = _Resolver(function)
    if resolver.project is not None and _parameter_stand_in(definition, name, resolver, DEPTH) == CARRIED:
        return "pytree"
    use = usage.use_of_parameter(definition, name)
    return (usage.TUPLE, use) if isinstance(use, int) and not isinstance(use, bool) else None


def _required(definition: ast.FunctionDef | ast.AsyncFunctionDef) -> list[str]:
    """The parameters without a default (not ``self``, ``*args``, ``**kwargs``) and without an
    annotation other than a ``Callable``'s: a class or an array annotation says more."""
    arguments = definition.args
    positional = [*arguments.posonlyargs, *arguments.args]
    required = positional[:len(positional) - len(arguments.defaults)]
    required += [arg for arg, default in zip(arguments.kwonlyargs, arguments.kw_defaults) if default is None]
    return [arg.arg for arg in required if arg.arg not in ("self", "cls")
            and (arg.annotation is None or "Callable" in ast.unparse(arg.annotation))]


def _outer_parameters(definition: ast.FunctionDef | ast.AsyncFunctionDef, function: Any) -> list[str]:
    """The parameters ``function`` takes beside its def's own, without a default or an annotation:
    a nested function built from its code takes its enclosing function's (worker/nested_code.py),
    which its body reads as free variables."""
    arguments = definition.args
    own = {arg.arg for arg in (*arguments.posonlyargs, *arguments.args, *arguments.kwonlyargs,
                               arguments.vararg, arguments.kwarg) if arg is not None}
    try:
        params = inspect.signature(function).parameters.values()
    except (TypeError, ValueError):
        return []
    return [p.name for p in params if p.name not in own and p.kind == p.KEYWORD_ONLY
            and p.default is p.empty and p.annotation is p.empty]


def _parameter_stand_in(definition: ast.AST, name: str, resolver: _Resolver, depth: int) -> Any:
    """The stand-in where every load of ``name`` in the body is a function's use, CARRIED where
    every one is a loop's initial carry, None else."""
    parents = {child: node for node in ast.walk(definition) for child in ast.iter_child_nodes(node)}
    uses = []
    for node in _loads(definition, name, parents):
        use = _use(node, parents.get(node), resolver, depth)
        if use is None:
            return None
        if use is not _NEUTRAL:
            uses.append(use)
    if not uses or CARRIED in uses:
        return CARRIED if uses and all(use == CARRIED for use in uses) else None
    # A slot's own stand-in (a scan's body) over a plain call's.
    chosen = next((use for use in uses if use is not standins.FIRST_ARGUMENT), standins.FIRST_ARGUMENT)
    if chosen is standins.FIRST_ARGUMENT and standins.SCALAR_NAME.fullmatch(name.lower()):
        return standins.SCALAR
    if chosen is standins.FIRST_ARGUMENT and standins.INITIALIZER_NAME.fullmatch(name.lower()):
        return standins.initializer()  # called as kernel_init(key, shape): an array of that shape
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
                    and not usage.shadowed(node, name, definition, parents):
                found.append(node)
    return found


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
    if any(k.arg == "has_aux" for k in parent.keywords):
        return None  # a function of (value, aux): no stand-in has that form
    return None if slot is None or callee is None else slot_stand_in(callee, slot, resolver.project, depth)


def _position(call: ast.Call, node: ast.AST) -> int | None:
    return next((i for i, arg in enumerate(call.args) if arg is node), None)


def slot_stand_in(callee: Any, slot: int | str, project: str, depth: int) -> Any:
    """The stand-in a function passed to ``callee`` at ``slot`` (a position or a keyword) needs:
    a JAX primitive's by the table, a project callee's by its parameter; None else."""
    if getattr(callee, "__func__", None) is instrument.VmapRecorder._vmap:
        callee = instrument.real_vmap()  # jax.vmap while a module is imported and traced
    names = None if isinstance(callee, tuple) else _jax_slots().get(id(callee))
    if names is not None:
        return _STAND_INS[names[slot]]() if slot in names else None
    function, skip = (callee.__init__, 1) if isinstance(callee, type) else callee if isinstance(callee, tuple) \
        else (callee, 0)
    module = getattr(callee[0] if isinstance(callee, tuple) else callee, "__module__", None) or ""
    if depth <= 0 or project is None or module.partition(".")[0] != project:
        return None
    function = inspect.unwrap(function)
    param = _parameter(function, slot, skip)
    if param is None:
        return None
    by_code = _callee_stand_in(function, param.name, depth - 1)
    if by_code is not None and by_code is not standins.FIRST_ARGUMENT:
        return by_code  # what the callee's code asks of it (a scan's body) over what its name says
    stand_in = standins.for_parameter(_optional_dropped(param))
    return stand_in if isinstance(stand_in, standins.StandIn) else by_code


def _optional_dropped(param: inspect.Parameter) -> inspect.Parameter:
    """``param`` with an ``Optional[Callable...]`` string annotation read as its ``Callable``
    (numpyro's handlers: ``fn: Optional[Callable] = None``)."""
    text = param.annotation
    if isinstance(text, str) and text.startswith("Optional[Callable") and text.endswith("]"):
        return param.replace(annotation=text[len("Optional["):-1])
    return param


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
    if len(_CALLEES) > _CALLEES_KEPT:
        _CALLEES.clear()  # a warm worker's earlier modules' callees
    if key not in _CALLEES:
        _CALLEES[key] = (function, None)  # a callee that reaches itself again gives nothing
        _CALLEES[key] = (function, _parameter_stand_in_of(function, name, depth))
    return _CALLEES[key][1]


# (id of a callee, parameter, depth) -> (the callee, kept alive so that its id stays its own; the stand-in)
_CALLEES: dict[tuple[int, str, int], tuple[Any, Any]] = {}


def _parameter_stand_in_of(function: Any, name: str, depth: int) -> Any:
    definition = definition_of(function)
    if definition is None:
        return None
    return _parameter_stand_in(definition, name, _Resolver(function), depth)


def definition_of(function: Any) -> ast.FunctionDef | ast.AsyncFunctionDef | None:
    """The def of ``function`` parsed from its source, or None (no source, a lambda, a class)."""
    try:
        if not inspect.isfunction(inspect.unwrap(function)):
            return None
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
        self.qualname = getattr(function, "__qualname__", "")
        module = self.names.get("__name__")
        self.project = module.partition(".")[0] if isinstance(module, str) else None

    def resolve(self, node: ast.AST) -> Any:
        """The object ``name`` or ``a.b.c`` names, through modules and classes only (no attribute
        of an instance is read: a property could run), or None; ``super().m`` in a method of a
        class the module holds: (the next class's ``m``, 1), its ``self`` left out."""
        if isinstance(node, ast.Attribute) and isinstance(node.value, ast.Call) \
                and isinstance(node.value.func, ast.Name) and node.value.func.id == "super":
            return self._next_method(node.attr)
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


    def _next_method(self, name: str) -> tuple[Any, int] | None:
        """The method ``name`` of the class after the function's own in its class's MRO."""
        owner = self.names.get(self.qualname.rpartition(".")[0]) if self.qualname.count(".") == 1 else None
        if not isinstance(owner, type):
            return None
        for base in owner.__mro__[1:]:
            if name in vars(base):
                method = vars(base)[name]
                return (method, 1) if inspect.isfunction(method) else None
        return None


@functools.cache
def _jax_slots() -> dict[int, dict[int | str, str]]:
    """The table, by the id of each JAX function this JAX has (``jax.vmap``: JAX's own, which
    instrument.py replaces while a module is imported and traced)."""
    import importlib

    found = {}
    for (module, name), slots in _JAX_SLOTS.items():
        try:
            function = instrument.real_vmap() if (module, name) == ("jax", "vmap") \
                else getattr(importlib.import_module(module), name)
            found[id(function)] = slots
        except (ImportError, AttributeError):  # not in this JAX version
            continue
    return found


_STAND_INS: dict[str, Callable[[], Any]] = {
    "FIRST": lambda: standins.FIRST_ARGUMENT,
    "SECOND": lambda: standins.SECOND_ARGUMENT,
    "SCAN_BODY": lambda: standins.CARRY_AND_X,
    "FALSE": lambda: standins.FALSE,
    "SCALAR": lambda: standins.SCALAR,
    "CARRY": lambda: CARRIED,
}
