"""Tracing a function with abstract arguments: ShapeDtypeStruct leaves become jaxpr inputs,
everything else is passed as it is. Also the readable form of a signature and XLA's cost figures."""
from __future__ import annotations

import dataclasses
import enum
import functools
import inspect
from typing import Any

import jax
import numpy as np

from jaxlint.ir import fit, sharded, target_devices
from jaxlint.jaxapi import compiling, jaxprs, tracers
from jaxlint.scan import hints
from jaxlint.worker import built_instances, guards
from jaxlint.worker.argsources import ArgumentSet, made_up_values
from jaxlint.worker.built_instances import instance_fields, is_built
from jaxlint.worker.init_states import MadeState


def resolve(module: Any, qualname: str) -> Any:
    value = module
    for part in qualname.split("."):
        try:
            value = getattr(value, part, None)
        except Exception:  # a module or class __getattr__ of the user's that raises
            return None
        if value is None:
            return None
    return value


def code_of(function: Any) -> Any:
    try:
        return inspect.unwrap(function).__code__
    except (AttributeError, ValueError):
        return None


def bind(function: Any, arguments: ArgumentSet) -> tuple[Any, list[Any]]:
    """(apply, abstract inputs): ShapeDtypeStruct leaves become inputs, others static values."""
    is_abstract = lambda leaf: isinstance(leaf, jax.ShapeDtypeStruct)  # noqa: E731
    leaves, treedef = jax.tree_util.tree_flatten((arguments.args, arguments.kwargs))
    dynamic = [i for i, leaf in enumerate(leaves) if is_abstract(leaf)]

    called = arguments.call or function

    def apply(*values: Any) -> Any:
        # A parameter's description (``f_struct: jax.ShapeDtypeStruct``) is passed unwrapped.
        filled = [leaf.value if isinstance(leaf, built_instances.StaticValue) else leaf for leaf in leaves]
        for index, value in zip(dynamic, values):
            filled[index] = value
        args, kwargs = jax.tree_util.tree_unflatten(treedef, filled)
        try:
            out = called(*args, **kwargs)
        except TypeError as error:  # a wrapper that takes its arguments by position only
            if _POSITIONAL_ONLY in str(error):  # ``def to_tree(tree, /, *, prefix=...)``
                args, kwargs = _positional_only_first(called, args, kwargs)
                out = called(*args, **kwargs)
            else:
                positional = _by_position(called, args, kwargs) if "positional argument" in str(error) else None
                if positional is None:
                    raise
                out = called(*positional)
        kinds = {type(leaf).__name__ for leaf in jax.tree_util.tree_leaves(out)
                 if not isinstance(leaf, (jax.Array, np.ndarray, np.generic, int, float, complex, bool))}
        if kinds:
            raise NotArrays(f"returns {', '.join(sorted(kinds))}, not arrays: a factory is not traced "
                            "itself; the functions it defines and returns are traced as it makes them, "
                            "others where a traced caller uses them")
        return out

    # JAX names the traced function in its messages: the user's, not this wrapper.
    try:
        functools.update_wrapper(apply, called)
    except (AttributeError, TypeError):  # a callable object without a name
        pass
    return apply, [leaves[i] for i in dynamic]


_POSITIONAL_ONLY = "positional-only arguments passed as keyword arguments"  # Python's TypeError


def _positional_only_first(called: Any, args: tuple, kwargs: dict) -> tuple[tuple, dict]:
    """``called``'s positional-only parameters that ``kwargs`` names, moved to the positional
    arguments in their order (the ladder gives every parameter by name); the others stay keywords."""
    try:
        parameters = list(inspect.signature(called).parameters.values())[len(args):]
    except (TypeError, ValueError):
        return args, kwargs
    leading = []
    for p in parameters:
        if p.kind != inspect.Parameter.POSITIONAL_ONLY or p.name not in kwargs:
            break
        leading.append(p.name)
    return (*args, *(kwargs[name] for name in leading)), {k: v for k, v in kwargs.items() if k not in leading}


def _by_position(called: Any, args: tuple, kwargs: dict) -> tuple | None:
    """``kwargs`` as positional arguments, in the order of ``called``'s signature (the function a
    ``jnp.vectorize`` wrapper wraps: it counts positional arguments alone); None where some
    keyword has no place before a keyword-only one."""
    try:
        parameters = list(inspect.signature(called).parameters.values())[len(args):]
    except (TypeError, ValueError):
        return None
    kinds = (inspect.Parameter.POSITIONAL_ONLY, inspect.Parameter.POSITIONAL_OR_KEYWORD)
    ordered = [p.name for p in parameters if p.kind in kinds]
    if not kwargs or set(kwargs) - set(ordered) or set(ordered[:len(kwargs)]) != set(kwargs):
        return None
    return (*args, *(kwargs[name] for name in ordered[:len(kwargs)]))


def built_inputs(arguments: ArgumentSet) -> frozenset[int]:
    """The positions, among the program's inputs (``bind``'s), of the leaves of the instances
    jaxlint built (``arguments.built``)."""
    is_abstract = lambda leaf: isinstance(leaf, jax.ShapeDtypeStruct)  # noqa: E731
    built = {id(leaf) for name in arguments.built
             for leaf in jax.tree_util.tree_leaves(arguments.kwargs.get(name)) if is_abstract(leaf)}
    if not built:
        return frozenset()
    inputs = [leaf for leaf in jax.tree_util.tree_leaves((arguments.args, arguments.kwargs)) if is_abstract(leaf)]
    return frozenset(i for i, leaf in enumerate(inputs) if id(leaf) in built)


# The sizes symbolic dimensions of jaxlint's own making get when a trace with symbols fails: the
# signature's first symbol 8, the next 16, and so on.
CONCRETE_SIZE = 8


def concrete_arguments(arguments: ArgumentSet) -> ArgumentSet | None:
    """``arguments`` with every symbolic dimension evaluated: each symbol its own size, the same
    wherever it appears (``T K`` and ``K K`` give ``8,16`` and ``16,16``; ``2*T`` gives 16), so that
    dimensions named alike stay equal and those named apart stay apart; None when none is symbolic
    or one cannot be evaluated."""
    is_abstract = lambda leaf: isinstance(leaf, jax.ShapeDtypeStruct)  # noqa: E731
    # Argument by argument, in the signature's order (flattening the kwargs dict would sort it).
    values = [*arguments.args, *arguments.kwargs.values()]
    leaves = [leaf for value in values for leaf in jax.tree_util.tree_leaves(value, is_leaf=is_abstract)]
    names = [name for leaf in leaves if is_abstract(leaf) for dim in leaf.shape for name in jaxprs.symbols(dim)]
    if not names:
        return None
    sizes = {name: CONCRETE_SIZE * (i + 1) for i, name in enumerate(dict.fromkeys(names))}

    # An instance jaxlint built is made again from its sized fields: its aux data may hold shapes.
    is_leaf = lambda value: is_abstract(value) or built_instances.maker(value) is not None  # noqa: E731

    def concrete(leaf: Any) -> Any:
        made = built_instances.maker(leaf)
        if made is not None:
            make, fields = made
            return make({name: jax.tree_util.tree_map(concrete, value, is_leaf=is_leaf)
                         for name, value in fields.items()})
        if not is_abstract(leaf):
            return leaf
        shape = jaxprs.concrete_shape(tuple(leaf.shape), sizes=sizes)
        if shape is None:
            raise _NoSize
        return jax.ShapeDtypeStruct(shape, leaf.dtype, weak_type=bool(getattr(leaf, "weak_type", False)),
                                    sharding=getattr(leaf, "sharding", None))

    try:
        made = [jax.tree_util.tree_map(concrete, value, is_leaf=is_leaf) for value in values]
    except Exception:  # _NoSize, a user's pytree whose unflatten (or a built instance's maker) refuses the sizes
        return None
    except BaseException as error:  # the maker runs the user's __init__ again: sys.exit() there is a refusal too
        if isinstance(error, (guards.TimeUp, guards.GuessTimeUp)):  # a limit's: its catcher's
            raise
        return None
    count = len(arguments.args)
    return dataclasses.replace(arguments, args=tuple(made[:count]), kwargs=dict(zip(arguments.kwargs, made[count:])))


def fails_at_any_size(error: BaseException) -> bool:
    """A JAX error about a traced value (``if x.sum() > 0``, ``int(x)``, ``x[x > 0]``, a leaked
    tracer): no size makes it go away, so no trace with sizes is tried. What symbolic dimensions
    raise is another error (InconclusiveDimensionOperation, TypeError, NotImplementedError)."""
    names = {cls.__name__ for cls in type(error).__mro__}
    return "ConcretizationTypeError" in names or "UnexpectedTracerError" in names


class _NoSize(Exception):
    """A symbolic dimension that cannot be evaluated (an expression form jaxapi/jaxprs.py does not know)."""


class NotArrays(TypeError):
    """The traced function returned something other than arrays (a function, an object)."""


def arrays_only(arguments: ArgumentSet, function: Any) -> ArgumentSet:
    """``arguments`` whose call keeps only the array leaves of what ``function`` returns: a
    factory's own operations (``jnp.asarray(sigma)``, a table it computes) as a program of its
    own, the functions and objects it returns left out."""
    called = arguments.call or function

    def arrays(*args: Any, **kwargs: Any) -> list[Any]:
        out = called(*args, **kwargs)
        return [leaf for leaf in jax.tree_util.tree_leaves(out) if isinstance(leaf, (jax.Array, np.ndarray))]

    try:
        functools.update_wrapper(arrays, called)
    except (AttributeError, TypeError):  # a callable object without a name
        pass
    return dataclasses.replace(arguments, call=arrays)


def trace_function(function: Any, arguments: ArgumentSet) -> Any:
    """The ClosedJaxpr of ``function`` applied to the abstract arguments."""
    apply, inputs = bind(function, arguments)
    closed = jax.make_jaxpr(apply)(*inputs)
    sharded.note_inputs(closed, inputs)  # the compile step places the arguments as they were
    if target_devices.current().is_tpu:  # JX311 names the arguments of a program that does not fit
        leaves = jax.tree_util.tree_leaves((arguments.args, arguments.kwargs))
        fit.note_names(closed, arguments.call or function, arguments,
                       [i for i, leaf in enumerate(leaves) if isinstance(leaf, jax.ShapeDtypeStruct)])
    return closed


def compiled_cost(function: Any, arguments: ArgumentSet) -> dict[str, Any] | None:
    """XLA's own figures for the compiled function (``--cost compiled``), or None when it cannot
    compile (symbolic shapes, errors). Run without jaxlint's instrumentation in the trace."""
    apply, inputs = bind(function, arguments)
    try:
        compiled = target_devices.lower_function(apply, inputs).compile()
    except Exception:
        return None
    target = target_devices.current()
    return {**compiling.compiled_costs(compiled), "devices": compiling.compiled_devices(compiled),
            "target": target.label if target.is_tpu else None}


class _Opaque:
    """Stands in for a static object whose repr is useless in a message (``<M object at 0x..>``)."""

    def __init__(self, value: Any) -> None:
        self.text = f"<{type(value).__name__} object>"

    def __repr__(self) -> str:
        return self.text


class _Member:
    """An enum member as the code names it (``Kind.DENSE``), not its repr (``<Kind.DENSE: 0>``)."""

    def __init__(self, value: enum.Enum) -> None:
        self.text = f"{type(value).__name__}.{value.name}"

    def __repr__(self) -> str:
        return self.text


class _Node:
    """A registered pytree class shown by its children (``Params(f32[3], f32[])``), not its repr."""

    def __init__(self, value: Any, children: list[Any]) -> None:
        self.text = f"{type(value).__name__}({', '.join(hints.format_abstract(c) for c in children)})"

    def __repr__(self) -> str:
        return self.text


def _is_custom_node(value: Any) -> bool:
    """A pytree node other than tuple/list/dict (register_pytree_node_class, dataclasses...)."""
    if value is None or isinstance(value, (tuple, list, dict)) or tracers.iterable_leaf(value):
        return False
    return not jax.tree_util.treedef_is_leaf(jax.tree_util.tree_structure(value))


class _Text:
    """A value shown by a text of its own (a made-up object, argsources/made_up.py; a made state)."""

    def __init__(self, text: str) -> None:
        self.text = text

    def __repr__(self) -> str:
        return self.text


class _Sharded:
    """An abstract array placed over a mesh, shown as jaxprs show Explicit types: ``f32[8@data,16]``."""

    def __init__(self, leaf: jax.ShapeDtypeStruct) -> None:
        plain = hints.format_abstract(jax.ShapeDtypeStruct(leaf.shape, leaf.dtype))
        spec = tuple(leaf.sharding.spec) + (None,) * (len(leaf.shape) - len(leaf.sharding.spec))
        dims = [str(d) if axes is None else f"{d}@{axes if isinstance(axes, str) else '(' + ','.join(axes) + ')'}"
                for d, axes in zip(leaf.shape, spec)]
        self.text = f"{plain[:plain.index('[')]}[{','.join(dims)}]"

    def __repr__(self) -> str:
        return self.text


def _readable(leaf: Any) -> Any:
    if isinstance(leaf, jax.ShapeDtypeStruct):
        sharded = isinstance(getattr(leaf, "sharding", None), jax.sharding.NamedSharding) and leaf.shape
        return _Sharded(leaf) if sharded and any(a is not None for a in leaf.sharding.spec) else leaf
    if isinstance(leaf, enum.Enum) and isinstance(leaf.name, str):
        return _Member(leaf)
    if made_up_values.is_made_up_value(leaf):
        return _Text(made_up_values.text(leaf, _show))
    if isinstance(leaf, MadeState):  # a state its class's init makes in the trace
        return _Text(leaf.text(_field_text))
    if _is_custom_node(leaf):
        children = jax.tree_util.tree_flatten(leaf, is_leaf=lambda child: child is not leaf)[0]
        return _Node(leaf, [_shown(child) for child in children])
    try:
        text = repr(leaf)
    except Exception:  # a user's __repr__ that raises
        return _Opaque(leaf)
    return _Opaque(leaf) if " at 0x" in text else leaf


def _shown(tree: Any) -> Any:
    return jax.tree_util.tree_map(_readable, tree, is_leaf=lambda v: isinstance(v, MadeState) or _is_custom_node(v)
                                  or tracers.iterable_leaf(v))


def _show(tree: Any) -> str:
    return hints.format_abstract(_shown(tree))


def format_instance(value: Any) -> str | None:
    """An instance jaxlint built for a method's ``self``, as its class and each field by name
    (``Radial(r=f32[], k=2)``); None for a value of another kind."""
    built = None if made_up_values.is_made_up_value(value) else instance_fields(value)  # a made-up one: by _readable
    if built is None:
        return None
    shown = [f"{field}={_field_text(v)}" for field, v in built[1].items()]
    return f"{built[0]}({', '.join(shown)})"


def _field_text(value: Any) -> str:
    """A built field by its own fields (a tuple or list of built instances, each so); else its value."""
    if type(value) in (tuple, list) and value and all(is_built(item) for item in value):
        items = ", ".join(format_instance(item) or _show(item) for item in value)
        return f"({items})" if type(value) is tuple else f"[{items}]"
    return (format_instance(value) if is_built(value) else None) or _show(value)


def format_signature(arguments: ArgumentSet) -> str:
    def keyword(name: str, value: Any) -> str:
        instance = format_instance(value) if name == "self" or name in arguments.built else None
        guess = " (a one-leaf pytree)" if name in arguments.one_leaf else ""
        return f"{name}={instance or _show(value)}{guess}"

    # Each argument on its own: mapping over the kwargs dict would sort its keys.
    parts = [_show(a) for a in arguments.args] + [keyword(k, v) for k, v in arguments.kwargs.items()
                                                  if k not in arguments.outer]
    outer = [keyword(k, v) for k, v in arguments.kwargs.items() if k in arguments.outer]
    if not outer:
        return ", ".join(parts)
    return f"{', '.join(parts) or '(no arguments)'} with its outer's {', '.join(outer)}"
