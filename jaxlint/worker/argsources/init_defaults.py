"""A static field's value from its class's own ``__init__`` (static_fields.py): a field without a
default that the ``__init__`` sets from a parameter of the same name, unchanged, takes that
parameter's default, the value the class holds when made without it (diffrax's
``ALIGN.__init__(self, taylor_threshold: float = 0.1)`` sets ``self.taylor_threshold =
taylor_threshold``; gpjax's ``Gaussian.__init__(..., integrator=AnalyticalGaussianIntegrator())``
passes it to ``super().__init__(integrator)``, which sets it). A parameter the ``__init__``
reassigns first (equinox's ``Conv``: ``stride = _ntuple(stride)``) gives nothing: its default is not
the field's value; one set through a function of the library's own package that takes it alone
(``self.padding_mode = _padding_mode_init(padding_mode)``) takes that function's result for the
default ("ZEROS")."""
from __future__ import annotations

import ast
import functools
import inspect
import sys
import textwrap
import types
from typing import Any

from jaxlint.worker import guards
from jaxlint.worker.argsources.inferred import Uninferable
from jaxlint.worker.argsources.static_fields import abstract_default

EMPTY = inspect.Parameter.empty
_CALL_SECONDS = 3.0  # the package's function that normalizes a default (as a factory's call)
_MAX_SUPER_CALLS = 3  # ``super().__init__`` calls followed, one class up each
_SUPER_INITS = ("super().__init__", "super(type(self), self).__init__")


def init_default(owner: type, name: str) -> Any:
    """The default of ``owner``'s ``__init__`` parameter ``name`` when the ``__init__`` (or the
    ones it calls through ``super().__init__``) sets ``self.<name>`` to it unchanged; EMPTY else."""
    classes = _init_classes(owner)
    if not classes:
        return EMPTY
    try:
        parameter = inspect.signature(classes[0].__dict__["__init__"]).parameters.get(name)
    except (TypeError, ValueError):
        return EMPTY
    if parameter is None or parameter.default is EMPTY or parameter.kind in (parameter.VAR_POSITIONAL,
                                                                             parameter.VAR_KEYWORD):
        return EMPTY
    if _sets_unchanged(classes, name):
        return parameter.default
    return _normalized(classes[0], name, parameter.default)


def _normalized(cls: type, name: str, default: Any) -> Any:
    """``self.<name> = f(<name>)`` at the top level of ``cls.__init__``, ``f`` a function of the
    class's own package that takes it alone (equinox's ``Conv``: ``self.padding_mode =
    _padding_mode_init(padding_mode)``, which checks and upper-cases it): ``f(default)``, what the
    class holds when made without it; EMPTY when ``f`` refuses it, or for any other ``__init__``."""
    body = _init_body(cls.__dict__["__init__"])
    if body is None or _reassigns(body, name):
        return EMPTY
    called = next((found for found in map(lambda statement: _called_on(statement, name), body) if found), None)
    function = getattr(sys.modules.get(cls.__module__), called, None) if called else None
    if not inspect.isfunction(function) or function.__module__.split(".")[0] != cls.__module__.split(".")[0]:
        return EMPTY
    module = sys.modules.get(cls.__module__) or types.ModuleType(cls.__module__)
    try:  # the library's code: under the factories' safeguards
        with guards.without_side_effects(module), guards.guessed_call_limit(_CALL_SECONDS) as limit:
            return function(default)
    except guards.TimeUp:
        if not limit.fired:  # an outer limit's: its caller's
            raise
        guards.LOAD_DEPENDENT.fired = True
        return EMPTY
    except Exception:  # the function refuses its own default: no value
        return EMPTY


def _called_on(statement: ast.stmt, name: str) -> str | None:
    """``f`` where ``statement`` is ``self.<name> = f(<name>)``; None else."""
    if not isinstance(statement, (ast.Assign, ast.AnnAssign)):
        return None
    targets = statement.targets if isinstance(statement, ast.Assign) else [statement.target]
    call = statement.value
    if not (isinstance(call, ast.Call) and isinstance(call.func, ast.Name) and len(call.args) == 1
            and not call.keywords and _is_name(call.args[0], name)):
        return None
    sets = any(isinstance(t, ast.Attribute) and t.attr == name and _is_name(t.value, "self") for t in targets)
    return call.func.id if sets else None


def _init_classes(owner: type) -> list[type]:
    """The classes of ``owner``'s MRO that define ``__init__``, the one its instances run first."""
    return [cls for cls in owner.__mro__ if "__init__" in cls.__dict__ and cls is not object]


def _sets_unchanged(classes: list[type], name: str) -> bool:
    for depth, cls in enumerate(classes[:_MAX_SUPER_CALLS + 1]):
        body = _init_body(cls.__dict__["__init__"])
        if body is None or _reassigns(body, name):
            return False
        if any(_is_self_set(statement, name) for statement in body):
            return True
        if depth + 1 >= len(classes) or not any(_passes_up(statement, name, classes[depth + 1])
                                                for statement in body):
            return False
    return False


@functools.cache
def _init_body(init: Any) -> list[ast.stmt] | None:
    """The ``__init__``'s statements; None when its source cannot be read."""
    try:
        source = textwrap.dedent(inspect.getsource(inspect.unwrap(init)))
        tree = ast.parse(source)
    except Exception:  # generated (a dataclass's), a builtin, source not shipped
        return None
    node = tree.body[0] if tree.body else None
    return node.body if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef)) else None


def _reassigns(body: list[ast.stmt], name: str) -> bool:
    """Some statement binds ``name`` again (an assignment, a loop, ``with``, a walrus, a ``del``)."""
    return any(isinstance(node, ast.Name) and node.id == name and not isinstance(node.ctx, ast.Load)
               for statement in body for node in ast.walk(statement))


def _is_self_set(statement: ast.stmt, name: str) -> bool:
    """``self.<name> = <name>`` (or ``object.__setattr__(self, "<name>", <name>)``), at the top level."""
    if isinstance(statement, (ast.Assign, ast.AnnAssign)):
        targets = statement.targets if isinstance(statement, ast.Assign) else [statement.target]
        return _is_name(statement.value, name) and any(
            isinstance(t, ast.Attribute) and t.attr == name and _is_name(t.value, "self") for t in targets)
    call = statement.value if isinstance(statement, ast.Expr) else None
    return isinstance(call, ast.Call) and ast.unparse(call.func) == "object.__setattr__" and len(call.args) == 3 \
        and _is_name(call.args[0], "self") and isinstance(call.args[1], ast.Constant) \
        and call.args[1].value == name and _is_name(call.args[2], name)


def _passes_up(statement: ast.stmt, name: str, parent: type) -> bool:
    """``super().__init__(...)``, at the top level, giving the parent's parameter ``name`` the
    value of this ``__init__``'s ``name``."""
    call = statement.value if isinstance(statement, ast.Expr) else None
    if not (isinstance(call, ast.Call) and ast.unparse(call.func) in _SUPER_INITS):
        return False
    if any(isinstance(arg, ast.Starred) for arg in call.args) or any(kw.arg is None for kw in call.keywords):
        return False
    try:
        bound = inspect.signature(parent.__dict__["__init__"]).bind_partial(
            None, *call.args, **{kw.arg: kw.value for kw in call.keywords})
    except (TypeError, ValueError):
        return False
    return _is_name(bound.arguments.get(name), name)


def _is_name(node: Any, name: str) -> bool:
    return isinstance(node, ast.Name) and node.id == name


def init_default_role(owner: type, name: str, default: Any, why: Uninferable) -> tuple:
    """A field no role fits (lineax's ``JacobianLinearOperator.args: PyTree[Any]``): the default of
    the class's ``__init__`` parameter that sets it unchanged (``args=None``), the value it holds
    when made without one; ``why`` raised without such a default."""
    found = init_default(owner, name) if default is EMPTY else EMPTY
    if found is EMPTY:
        raise why
    return ("static", abstract_default(found))
