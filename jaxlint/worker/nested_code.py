"""Nested JAX functions that nothing ran, built from their own code (issue 48).

After a file's targets are traced, a JAX function defined inside another function (``outer.<locals>.f``)
whose lines made no operation is made anew from its code object (found in its enclosing function's
``co_consts``, by qualified name and first line) with ``types.FunctionType``, its closure's cells
filled so:

- a free variable that is a parameter of an enclosing function (not reassigned there) gets what the
  argument sources give that parameter: it becomes a keyword-only parameter of the traced callable
  beside the function's own, so the inferred ladder guesses both at once (arrays reach the closure
  as tracers); the outermost function's own default is kept as it is, an inner one's only where it
  is a plain constant in the source;
- a free variable that is a sibling nested function (a ``def`` of the same enclosing function, not
  reassigned there) is built the same way, recursively (cells allow recursion);
- anything else (a local the enclosing function assigns) is not guessed: the function is not built,
  and why names the variable and the function it is a local of.

The function's own defaults are kept only where they are plain constants in the source (the def's
default expressions were evaluated in the outer's frame, which never ran); its decorators are not
applied. It counts as linted only where its own lines made operations (analyze.py).
"""
from __future__ import annotations

import ast
import dataclasses
import dis
import inspect
import types
from typing import Any

from jaxlint.model import Target
from jaxlint.scan.functions import JaxFunction
from jaxlint.scan.index import SourceIndex, first_line
from jaxlint.worker.argsources import ArgumentSet
from jaxlint.worker.trace import code_of, resolve

NESTED_SECONDS = 10.0  # a nested function's build and traces together (worker/guards.py)
_MISSING = object()


@dataclasses.dataclass
class Built:
    """A nested function made callable: ``function`` takes its own parameters and, keyword-only,
    the enclosing functions' parameters it closes over (``outer``); None when not built (``why``)."""

    target: Target
    function: Any = None
    outer: tuple[str, ...] = ()
    why: str = ""


def unrun(functions: list[JaxFunction], linted: set[int], targets: list[Target]) -> list[JaxFunction]:
    """The nested JAX functions no trace linted that are no target themselves, the last first:
    a later def often calls an earlier sibling, which its trace then lints too."""
    firsts = {target.first_line for target in targets}
    return [function for function in reversed(functions) if "<locals>" in function.qualname
            and function.first_line not in linted and function.first_line not in firsts]


def build(module: Any, function: JaxFunction, index: SourceIndex) -> Built:
    """``function`` made from its code, or why it cannot be."""
    target = dataclasses.replace(function.target(), kind="nested")
    outermost = function.qualname.partition(".<locals>.")[0]
    holder = resolve(module, outermost)
    top = code_of(holder)
    if top is None:
        return Built(target, why=f"its outer function {outermost} was not found on the module after import")
    chain = _chain([top], outermost, function.qualname, function.first_line)
    if chain is None:
        return Built(target, why=f"its code was not found in {outermost}'s")
    owner = resolve(module, outermost.rpartition(".")[0]) if "." in outermost else None
    plan = _Plan(inspect.unwrap(holder), index, owner if isinstance(owner, type) else None)
    why = plan.add(chain)
    if why:
        return Built(target, why=why)
    plan.order(chain)
    node = _node(index, chain[-1])
    own = _own_parameters(node) if node is not None else None
    if own is None:
        return Built(target, why="its def was not found in the source")
    own = [_resolved(param, plan.globals) for param in own]
    clash = sorted(set(plan.parameters) & {p.name for p in own})
    if clash:
        return Built(target, why=f"its enclosing functions' parameter {clash[0]} has the name of one of its own")
    return Built(target, plan.callable(chain, own, function.qualname), tuple(plan.parameters))


def for_trace(arguments: ArgumentSet, function: Any, outer: tuple[str, ...]) -> ArgumentSet:
    """``arguments`` for a built function: its outer parameters shown apart, with those that keep
    their default shown too (the closure's values), and counted as built: a finding whose bad point
    lies among their values alone is left out (analysis/instance_points.py), as for a built
    instance's fields (jax_md's ``(dr - r_on) / (r_off - r_on)``: ``r_on == r_off`` is a
    configuration the caller never passes)."""
    parameters = inspect.signature(function).parameters
    kwargs = {**arguments.kwargs, **{name: parameters[name].default for name in outer
                                     if name not in arguments.kwargs and parameters[name].default is not
                                     inspect.Parameter.empty}}
    guessed = tuple(name for name in outer if name not in arguments.built and _abstract(kwargs.get(name)))
    return dataclasses.replace(arguments, kwargs=kwargs, outer=outer, built=(*arguments.built, *guessed))


def _abstract(value: Any) -> bool:
    """Whether ``value`` holds an abstract array (a stand-in or a default holds none: shown as it is)."""
    import jax

    try:
        return any(isinstance(leaf, jax.ShapeDtypeStruct) for leaf in jax.tree_util.tree_leaves(value))
    except Exception:  # a user's pytree whose flatten refuses
        return False


def _chain(codes: list[types.CodeType], prefix: str, qualname: str, line: int) -> list[types.CodeType] | None:
    """The codes from the outermost function's to the nested function's, or None; ``prefix``:
    the qualified name of ``codes[-1]``."""
    for const in codes[-1].co_consts:
        if not isinstance(const, types.CodeType):
            continue
        # Before Python 3.11 a code has no co_qualname: made as Python makes __qualname__.
        name = getattr(const, "co_qualname", None) or \
            f"{prefix}{'.<locals>.' if codes[-1].co_flags & inspect.CO_OPTIMIZED else '.'}{const.co_name}"
        if name == qualname and const.co_firstlineno == line:
            return [*codes, const]
        if qualname.startswith(name + "."):
            found = _chain([*codes, const], name, qualname, line)
            if found is not None:
                return found
    return None


def _qualname(code: types.CodeType) -> str:
    return getattr(code, "co_qualname", code.co_name)  # before Python 3.11, its own name alone


class _Plan:
    """How to fill the cells of a chain's last code: the enclosing functions' parameters it (or a
    sibling it calls) closes over, and the siblings to build."""

    def __init__(self, holder: Any, index: SourceIndex, owner: type | None = None) -> None:
        self.holder, self.index = holder, index
        self.owner = owner  # the class of a method, whose ``self`` is annotated with it
        self.globals: dict = getattr(holder, "__globals__", None) or {}
        self.parameters: dict[str, inspect.Parameter] = {}  # by name, as the traced callable takes them
        self.owners: dict[str, types.CodeType] = {}  # each parameter's function
        self.siblings: dict[tuple[int, str], list[types.CodeType]] = {}  # (id(owner), name) -> its chain

    def add(self, chain: list[types.CodeType]) -> str:
        """Plan the cells of ``chain[-1]``; why it cannot be built, or ""."""
        code = chain[-1]
        for name in code.co_freevars:
            at = next((i for i in range(len(chain) - 2, -1, -1) if name in chain[i].co_cellvars), None)
            if at is None:
                return f"its free variable {name} was not found in its enclosing functions"
            owner = chain[at]
            stores = _stores(owner, name)
            if name in _parameter_names(owner) and not stores:
                why = self._parameter(chain[: at + 1], name)
            elif stores == 1 and (sibling := _sibling(owner, name)) is not None:
                node = _node(self.index, sibling)
                if node is None or node.decorator_list:  # vmap, grad, custom_jvp: another program than its code's
                    return f"its free variable {name} is a decorated (or not a plain) def of {_qualname(owner)}"
                key = (id(owner), name)
                if key in self.siblings:
                    continue
                self.siblings[key] = [*chain[: at + 1], sibling]
                why = self.add(self.siblings[key])
            else:
                why = f"its free variable {name} is a local of {_qualname(owner)}"
            if why:
                return why
        return ""

    def order(self, chain: list[types.CodeType]) -> None:
        """The parameters as their functions list them, the outermost function's first."""
        depth = {id(code): i for i, code in enumerate(chain)}
        self.parameters = dict(sorted(self.parameters.items(), key=lambda item: (
            depth.get(id(self.owners[item[0]]), 0), _parameter_names(self.owners[item[0]]).index(item[0]))))

    def _parameter(self, chain: list[types.CodeType], name: str) -> str:
        owner = chain[-1]
        if name in self.owners:
            return "" if self.owners[name] is owner else f"two enclosing functions' parameters are named {name}"
        parameter = self._outer_parameter(chain, name)
        if parameter is None:
            return f"its free variable {name}, a parameter of {_qualname(owner)}, was not found in its def"
        if parameter.kind in (parameter.VAR_POSITIONAL, parameter.VAR_KEYWORD):
            return f"its free variable {name} is {_qualname(owner)}'s *args or **kwargs"
        self.owners[name] = owner
        self.parameters[name] = parameter.replace(kind=inspect.Parameter.KEYWORD_ONLY)
        return ""

    def _outer_parameter(self, chain: list[types.CodeType], name: str) -> inspect.Parameter | None:
        """The outermost function's parameter as Python sees it (its real default and annotation);
        an inner one's from its def (a default only where it is a plain constant)."""
        if len(chain) == 1:
            try:
                parameters = list(inspect.signature(self.holder).parameters.values())
            except (TypeError, ValueError):
                return None
            if self.owner is not None and parameters[:1] and parameters[0].name == name == "self":
                # An instance of its class, as argsources/built_parameters.py builds one for a
                # parameter annotated with a class (the dataclasses, NamedTuples, pytree classes).
                return parameters[0].replace(annotation=self.owner)
            return next((p for p in parameters if p.name == name), None)
        node = _node(self.index, chain[-1])
        parameters = _own_parameters(node) if node is not None else None
        return next((p for p in parameters or [] if p.name == name), None)

    def callable(self, chain: list[types.CodeType], own: list[inspect.Parameter], qualname: str) -> Any:
        """What is traced: builds the function inside, with the cells filled, and calls it."""
        signature = _signature(own, list(self.parameters.values()))
        make = self._maker(chain)
        outer_names = tuple(self.parameters)

        def nested(*args: Any, **kwargs: Any) -> Any:
            bound = signature.bind(*args, **kwargs)
            values = {name: bound.arguments.pop(name, signature.parameters[name].default) for name in outer_names}
            return make(values)(*bound.args, **bound.kwargs)

        nested.__signature__ = signature  # type: ignore[attr-defined]
        nested.__name__, nested.__qualname__ = chain[-1].co_name, qualname
        nested.__module__ = getattr(self.holder, "__module__", None)
        # Annotations resolve in the module's globals (argsources/annotations.py reads __globals__).
        nested.__annotations__ = {p.name: p.annotation for p in signature.parameters.values()
                                  if p.annotation is not p.empty}
        return _with_globals(nested, self.globals)

    def _maker(self, chain: list[types.CodeType]) -> Any:
        holder_globals, index = self.globals, self.index
        owners, siblings = dict(self.owners), dict(self.siblings)

        def make(values: dict[str, Any]) -> Any:
            cells = {(id(owner), name): types.CellType(values[name]) for name, owner in owners.items()}
            cells.update({key: types.CellType() for key in siblings})
            functions = {}
            for key, sibling_chain in siblings.items():
                functions[key] = _function(sibling_chain, cells, holder_globals, index)
            for key, function in functions.items():
                cells[key].cell_contents = function
            return _function(chain, cells, holder_globals, index)

        return make


def _function(chain: list[types.CodeType], cells: dict[tuple[int, str], Any], globals_: dict, index: Any) -> Any:
    """``chain[-1]`` as a function, its cells from ``cells`` (by owner and name), its plain defaults."""
    code = chain[-1]
    closure = []
    for name in code.co_freevars:
        owner = next(chain[i] for i in range(len(chain) - 2, -1, -1) if name in chain[i].co_cellvars)
        closure.append(cells[(id(owner), name)])
    node = _node(index, code)
    own = _own_parameters(node) if node is not None else []
    positional = [p for p in own or [] if p.kind in (p.POSITIONAL_ONLY, p.POSITIONAL_OR_KEYWORD)]
    defaults = tuple(p.default for p in positional if p.default is not p.empty)
    function = types.FunctionType(code, globals_, code.co_name, defaults or None, tuple(closure))
    function.__kwdefaults__ = {p.name: p.default for p in own or []
                               if p.kind == p.KEYWORD_ONLY and p.default is not p.empty} or None
    function.__qualname__ = _qualname(code)
    return function


def _with_globals(function: Any, globals_: dict) -> Any:
    """``function`` (jaxlint's, its names all in its closure) with the module's globals."""
    copy = types.FunctionType(function.__code__, globals_, function.__name__, None, function.__closure__)
    for name in ("__signature__", "__qualname__", "__module__", "__annotations__"):
        setattr(copy, name, getattr(function, name))
    return copy


def _signature(own: list[inspect.Parameter], outer: list[inspect.Parameter]) -> inspect.Signature:
    """The function's own parameters, then the enclosing functions', keyword-only, before ``**kwargs``."""
    variadic = [p for p in own if p.kind == p.VAR_KEYWORD]
    return inspect.Signature([*(p for p in own if p.kind != p.VAR_KEYWORD), *outer, *variadic])


def _own_parameters(node: ast.FunctionDef | ast.AsyncFunctionDef) -> list[inspect.Parameter]:
    """A def's parameters, with its defaults that are plain constants in the source (a positional
    one only where every later positional default is too) and its annotations as source text."""
    args = node.args
    positional = [*args.posonlyargs, *args.args]
    defaults: list[Any] = [_MISSING] * (len(positional) - len(args.defaults)) + [_plain(d) for d in args.defaults]
    for i in range(len(defaults) - 1, -1, -1):  # a default that is no constant makes the earlier ones required
        if defaults[i] is _MISSING:
            defaults[:i] = [_MISSING] * i
            break
    made = []
    kinds = [inspect.Parameter.POSITIONAL_ONLY] * len(args.posonlyargs) + \
        [inspect.Parameter.POSITIONAL_OR_KEYWORD] * len(args.args)
    for arg, kind, default in zip(positional, kinds, defaults):
        made.append(_parameter(arg, kind, default))
    if args.vararg is not None:
        made.append(_parameter(args.vararg, inspect.Parameter.VAR_POSITIONAL, _MISSING))
    for arg, default in zip(args.kwonlyargs, args.kw_defaults):
        made.append(_parameter(arg, inspect.Parameter.KEYWORD_ONLY, _MISSING if default is None else _plain(default)))
    if args.kwarg is not None:
        made.append(_parameter(args.kwarg, inspect.Parameter.VAR_KEYWORD, _MISSING))
    return made


def _parameter(arg: ast.arg, kind: Any, default: Any) -> inspect.Parameter:
    annotation = ast.unparse(arg.annotation) if arg.annotation is not None else inspect.Parameter.empty
    return inspect.Parameter(arg.arg, kind, default=inspect.Parameter.empty if default is _MISSING else default,
                             annotation=annotation)


def _resolved(param: inspect.Parameter, globals_: dict) -> inspect.Parameter:
    """``param`` with its annotation's text, where it is a name or a dotted name of the module's
    globals (``EventT``, ``chex.Array``), replaced by what the module holds (a type variable is
    then read by its bound, as a module-level function's is); any other text (a subscript, a
    name the module lacks) stays text: nothing is evaluated."""
    text = param.annotation
    if not isinstance(text, str) or not all(part.isidentifier() for part in text.split(".")):
        return param
    first, *rest = text.split(".")
    if first not in globals_:
        return param
    value = globals_[first]
    for part in rest:
        value = inspect.getattr_static(value, part, _MISSING)
        if value is _MISSING:
            return param
    return param.replace(annotation=value)


def _plain(node: ast.expr) -> Any:
    """A default written as a plain constant (``0.1``, ``-1``, ``None``, ``(1, 2)``), else _MISSING."""
    try:
        return ast.literal_eval(node)
    except (ValueError, TypeError, SyntaxError, MemoryError, RecursionError):
        return _MISSING


def _node(index: SourceIndex, code: types.CodeType) -> ast.FunctionDef | ast.AsyncFunctionDef | None:
    return next((node for node in index.functions
                 if node.name == code.co_name and first_line(node) == code.co_firstlineno), None)


def _parameter_names(code: types.CodeType) -> tuple[str, ...]:
    count = code.co_argcount + code.co_kwonlyargcount
    count += bool(code.co_flags & inspect.CO_VARARGS) + bool(code.co_flags & inspect.CO_VARKEYWORDS)
    return code.co_varnames[:count]


def _stores(code: types.CodeType, name: str) -> int:
    """How often ``code`` binds the cell ``name`` (a def binds it once; a parameter, none),
    counting the functions inside it that rebind it by ``nonlocal``."""
    own = sum(1 for instruction in dis.get_instructions(code)
              if instruction.opname in ("STORE_DEREF", "DELETE_DEREF") and instruction.argval == name)
    return own + sum(_stores(inner, name) for inner in code.co_consts
                     if isinstance(inner, types.CodeType) and name in inner.co_freevars)


def _sibling(owner: types.CodeType, name: str) -> types.CodeType | None:
    """The code of the def ``name`` right inside ``owner``, or None (a lambda's or a
    comprehension's code has a name no def has)."""
    return next((const for const in owner.co_consts
                 if isinstance(const, types.CodeType) and const.co_name == name), None)
