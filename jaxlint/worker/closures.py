"""The closures a module-level factory returns, as targets (kind "closure", scan/factories.py).

The factory is called once per job with plain values: a parameter with a default keeps it,
``*args`` and ``**kwargs`` stay empty, one annotated ``int`` gets 2, ``bool`` False, and
``float`` (or a scalar-like annotation: ``Scalar``, ``Numeric``) 0.1; without an annotation,
2 where the name says a count (``num_*``, ``n_*``, ``*_steps``, ``*_dim``), else 0.1. A
parameter whose name or annotation says it takes a function, an object, a string or an array
leaves the factory uncalled. The call runs with what it prints discarded, the module's globals,
``os.environ`` and JAX's configuration put back afterwards, and a time limit of FACTORY_SECONDS
(where the worker can set a timer: its main thread). A factory that raises or runs past the
limit leaves its closures skipped, with why; never a finding.

What it returns is searched (the value itself, tuples and NamedTuples, lists, dicts, dataclasses,
``functools.partial``, two levels deep) for functions defined in the analyzed file; each is
traced with inferred arguments (argsources/inferred.py's ladder; a parameter annotated with a
class jaxlint builds gets an instance, argsources/built_parameters.py). Where the factory returns an
``init`` closure of one parameter that is not an int or a size (optax's ``GradientTransformation(init, update)``,
``jax.example_libraries.optimizers``' ``(init, update, get_params)``) its closures follow the
protocol: the parameters are one f32 array of the inferred size ``n`` (of size 4 where ``init``
needs a known size), ``init`` is traced with them, and the state ``init`` makes of them
(``jax.eval_shape``) is what the others get for a parameter named ``state`` (``opt_state``,
``*_state``), as user code passes it; ``params``, ``updates``, ``grads`` (``grad``, ``g``) get
the parameters.
"""
from __future__ import annotations

import dataclasses
import functools
import inspect
import re
import types
import typing
from typing import Any

from jaxlint.model import SkipKind, Target
from jaxlint.worker import standins
from jaxlint.worker.argsources import ArgumentRequest, ArgumentSet, built_parameters, inferred, passed_on
from jaxlint.worker.errors import describe_error
from jaxlint.worker.guards import TimeUp, guessed_call_limit, without_side_effects
from jaxlint.worker.trace import code_of, resolve

FACTORY_SECONDS = 3.0
PLAIN_INT, PLAIN_FLOAT = 2, 0.1
CONCRETE_SIZE = 4  # the parameters' size where init cannot work with a symbolic one
TREE_NAMES = frozenset({"params", "updates", "grads", "grad", "g", "gradients"})
_UNIONS = (typing.Union, getattr(types, "UnionType", typing.Union))
# A string annotation (``from __future__ import annotations``) that admits a plain number, and
# those that do not although they name one (``Float[Array, "n"]`` is an array).
_SCALAR_TEXT = re.compile(r"\bfloat\b|Scalar|Numeric")
_NOT_SCALAR = ("Callable", "Float[", "Array", "jax.Array", "np.ndarray")
_DEPTH = 2
# Unannotated parameters whose names say they hold a count or a size get PLAIN_INT.
# (Not ``*_size``: a ``step_size`` is a float.)
_COUNT_NAME = re.compile(r"(?:num|n)_\w+|\w+_(?:steps|dim|dims|count|length)|steps|dim|count|length")


@dataclasses.dataclass
class Made:
    """One factory's call: the closures it returned that are defined in the file (by their code's
    first line and name), or why there are none."""

    closures: dict[tuple[int, str], Any]
    # (function, its code's name) for each function returned, wherever defined: the protocol's
    # ``init`` may be another module's (optax's ``base.init_empty_state``).
    returned: list[tuple[Any, str]] = dataclasses.field(default_factory=list)
    why: tuple[SkipKind, str] | None = None
    _protocol: tuple[Any, Any] | None = None
    _protocol_error: str | None = None

    def init(self) -> Any:
        """The protocol's ``init`` closure (its name has "init", one parameter without a default), or None."""
        for function, name in self.returned:
            if "init" in name and len(_required(function)) == 1 and _takes_a_tree(function):
                return function
        return None

    def protocol(self) -> tuple[Any, Any]:
        """(the parameters, the state ``init`` makes of them, abstractly): the parameters are
        f32[n], else f32[CONCRETE_SIZE] where ``init`` needs to know the size (``jnp.eye(n)``);
        raises inferred.Uninferable when ``init`` fails with both."""
        if self._protocol is None and self._protocol_error is None:
            import jax

            for size in (inferred.symbolic_size(), CONCRETE_SIZE):
                parameters = jax.ShapeDtypeStruct((size,), "float32")
                try:
                    self._protocol = (parameters, jax.eval_shape(self.init(), parameters))
                    break
                except BaseException as error:  # the user's init (sys.exit() included): no finding
                    self._protocol_error = f"init raised {describe_error(error)}"
            if self._protocol is not None:
                self._protocol_error = None
        if self._protocol is None:
            raise inferred.Uninferable(f"no state: {self._protocol_error}")
        return self._protocol


@dataclasses.dataclass
class Closure:
    """A closure target as its factory made it: ``function`` None when it could not be (``why``)."""

    function: Any
    made: Made
    why: tuple[SkipKind, str] = ("not-found", "")

    def signatures(self, request: ArgumentRequest) -> list[ArgumentSet]:
        """The inferred ladder on the closure, with the protocol's parameters and state given."""
        try:
            given = {**standins.for_parameters(self.function), **_given(self.function, self.made)}
            found = built_parameters.signatures(request, given)
        except inferred.Uninferable as why:
            request.notes.append(f"arguments not inferred: {why}")
            return []
        found = [_positional(self.function, arguments) for arguments in found]
        # By position, a built instance is neither shown by its fields nor narrowed (instance_points),
        # and a one-leaf pytree is not shown as one (pytrees.py)
        kept = [arguments for arguments in found if not ((arguments.built or arguments.one_leaf) and arguments.args)]
        if found and not kept:
            what = "built instances" if found[0].built else "one-leaf pytrees"
            request.notes.append(f"arguments not inferred: a wrapper takes its {what} by position")
        return kept


class Factories:
    """The job's factory calls, one per factory, made when one of its closures is first traced."""

    def __init__(self, path: str) -> None:
        self.path = path
        self.made: dict[str, Made] = {}

    def closure(self, module: Any, target: Target) -> Closure:
        factory_name = target.qualname.partition(".<locals>.")[0]
        if factory_name not in self.made:
            self.made[factory_name] = self._call(module, factory_name)
        made = self.made[factory_name]
        if made.why is not None:
            return Closure(None, made, made.why)
        function = made.closures.get((target.first_line, target.name))
        if function is None:
            return Closure(None, made, ("not-found", f"{factory_name}(...) did not return it"))
        return Closure(function, made)

    def made_none(self, target: Target) -> bool:
        """Whether the closure target's factory was called and made nothing (refused or failed)."""
        made = self.made.get(target.qualname.partition(".<locals>.")[0])
        return made is not None and made.why is not None

    def _call(self, module: Any, name: str) -> Made:
        factory = resolve(module, name)
        if factory is None or not callable(factory):
            return Made({}, why=("not-found", f"the factory {name} was not found on the module after import"))
        try:
            kwargs = factory_arguments(factory)
        except inferred.Uninferable as why:
            return Made({}, why=("no-arguments", f"the factory {name} was not called: {why}"))
        shown = f"{name}({', '.join(f'{k}={v!r}' for k, v in kwargs.items())})"
        try:
            with without_side_effects(module), guessed_call_limit(FACTORY_SECONDS) as limit:
                returned = factory(**kwargs)
        except TimeUp:
            if not limit.fired:  # an outer limit's: its caller's
                raise
            return Made({}, why=("factory-failed", f"{shown} ran past {FACTORY_SECONDS:g} s"))
        except BaseException as error:  # the user's code, sys.exit() included
            return Made({}, why=("factory-failed", f"{shown} raised {describe_error(error)}"))
        functions = _functions(returned)
        closures: dict[tuple[int, str], Any] = {}
        for function, code in functions:
            if code.co_filename == self.path:
                closures.setdefault((code.co_firstlineno, code.co_name), function)
        return Made(closures, [(function, code.co_name) for function, code in functions])


def factory_arguments(factory: Any) -> dict[str, Any]:
    """The plain values a factory is called with (its defaults aside); raises inferred.Uninferable."""
    try:
        signature = inspect.signature(factory)
    except (TypeError, ValueError):
        raise inferred.Uninferable("no signature") from None
    kwargs = {}
    passed = passed_on.stand_ins(passed_on.definition_of(factory), factory, {})  # functions it passes on
    for param in signature.parameters.values():
        if param.kind in (param.VAR_POSITIONAL, param.VAR_KEYWORD) or param.default is not param.empty:
            continue
        if param.kind == param.POSITIONAL_ONLY:
            raise inferred.Uninferable(f"parameter {param.name} is positional-only")
        kwargs[param.name] = passed[param.name] if param.name in passed else _plain_value(param)
    return kwargs


def _plain_value(param: inspect.Parameter) -> Any:
    """An annotation that admits a plain number gives one (a union of ``float`` and a schedule
    admits a float); no annotation, 0.1 unless the name says it holds a function or an object."""
    stand_in = standins.for_parameter(param)
    if stand_in is not None:
        return stand_in
    annotation = param.annotation
    if annotation is param.empty:
        if inferred.opaque(param.name):
            raise inferred.Uninferable(f"parameter {param.name} (a function, pytree or object, by its name)")
        return PLAIN_INT if _COUNT_NAME.fullmatch(param.name.lower()) else PLAIN_FLOAT
    admitted = set(typing.get_args(annotation)) if typing.get_origin(annotation) in _UNIONS else {annotation}
    text = annotation if isinstance(annotation, str) else inspect.formatannotation(annotation)
    for kind, value in ((float, PLAIN_FLOAT), (int, PLAIN_INT), (bool, False)):
        if kind in admitted or text in (kind.__name__, f"Optional[{kind.__name__}]", f"{kind.__name__} | None"):
            return value
    if isinstance(annotation, str) and _SCALAR_TEXT.search(annotation) and not annotation.startswith(_NOT_SCALAR):
        return PLAIN_FLOAT
    raise inferred.Uninferable(f"parameter {param.name}: {text}")


def _given(function: Any, made: Made) -> dict[str, Any]:
    """The protocol's values for the closure's parameters (none outside the protocol)."""
    init = made.init()
    if init is None:
        return {}
    roles = {_required(init)[0]: "parameters"} if function is init else \
        {name: _protocol_role(name) for name in _parameter_names(function) if _protocol_role(name)}
    if not roles:
        return {}
    parameters, state = made.protocol()
    return {name: parameters if role == "parameters" else state for name, role in roles.items()}


def _takes_a_tree(init: Any) -> bool:
    """Whether ``init``'s parameter may be the parameters: not an int, a bool or a string by its
    annotation, nor a count by its name (blackjax's ``init(n_dims: int)`` makes no state of them;
    its ``init(x_init: float)`` does, of an array in practice)."""
    param = inspect.signature(init).parameters[_required(init)[0]]
    if param.annotation in (int, bool, str) or param.annotation in ("int", "bool", "str"):
        return False
    return param.annotation is not param.empty or not _COUNT_NAME.fullmatch(param.name.lower())


def _protocol_role(name: str) -> str | None:
    lowered = name.lower()
    if lowered in TREE_NAMES:
        return "parameters"
    if lowered in ("state", "opt_state") or lowered.endswith("_state"):
        return "state"
    return None


def _parameter_names(function: Any) -> list[str]:
    try:
        return list(inspect.signature(function).parameters)
    except (TypeError, ValueError):
        return []


def _required(function: Any) -> list[str]:
    """The parameters a call must pass (no default, not ``*args``/``**kwargs``)."""
    try:
        parameters = inspect.signature(function).parameters.values()
    except (TypeError, ValueError):
        return []
    return [p.name for p in parameters if p.default is p.empty and p.kind not in (p.VAR_POSITIONAL, p.VAR_KEYWORD)]


def _positional(function: Any, arguments: ArgumentSet) -> ArgumentSet:
    """By name where the object's own parameters have the names its signature shows; else (a
    ``functools.wraps`` wrapper, as ``optimizers.optimizer`` makes) by position."""
    try:
        own = inspect.signature(function, follow_wrapped=False).parameters
    except (TypeError, ValueError):
        own = {}
    if all(name in own for name in arguments.kwargs):
        return arguments
    order = [name for name in _parameter_names(function) if name in arguments.kwargs]
    return dataclasses.replace(arguments, args=tuple(arguments.kwargs[name] for name in order), kwargs={})


def _functions(value: Any, depth: int = 0) -> list[tuple[Any, Any]]:
    """(function, its code) for each function ``value`` holds, wherever defined."""
    code = code_of(value.func if isinstance(value, functools.partial) else value)
    if code is not None:
        return [(value, code)]
    if depth >= _DEPTH:
        return []
    if isinstance(value, (tuple, list)):
        items = list(value)
    elif isinstance(value, dict):
        items = list(value.values())
    elif dataclasses.is_dataclass(value) and not isinstance(value, type):
        items = [getattr(value, field.name, None) for field in dataclasses.fields(value)]
    else:
        return []
    return [found for item in items for found in _functions(item, depth + 1)]
