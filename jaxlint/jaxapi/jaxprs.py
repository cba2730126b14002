"""Reading jaxprs and the values they are traced with: sub-jaxprs, literals, abstract shapes
(eval_shape, ShapeDtypeStruct), argument and result paths, symbolic dimensions, typed PRNG keys,
effects, and applying an equation or a closed jaxpr to values."""
from __future__ import annotations

from typing import Any, Callable, Iterator

import jax

from jaxlint.jaxapi.shardings import sharding

try:  # Jaxpr and friends moved to jax.extend.core; jax.core lost them in 0.6.0.
    from jax.extend.core import ClosedJaxpr, Jaxpr, Literal
except ImportError:  # pragma: no cover - very old releases
    from jax.core import ClosedJaxpr, Jaxpr, Literal  # type: ignore[no-redef]


def subjaxprs(params: dict[str, Any]) -> Iterator[tuple[str, Any]]:
    """(param name, Jaxpr or ClosedJaxpr) for every sub-jaxpr in an equation's params."""
    for key, value in params.items():
        items = value if isinstance(value, (tuple, list)) else (value,)
        for index, item in enumerate(items):
            if isinstance(item, (ClosedJaxpr, Jaxpr)):
                name = key if len(items) == 1 and not isinstance(value, (tuple, list)) else f"{key}[{index}]"
                yield name, item


def open_jaxpr(jaxpr: Any) -> tuple[Any, list[Any]]:
    """(open Jaxpr, consts) for a Jaxpr or ClosedJaxpr."""
    if isinstance(jaxpr, ClosedJaxpr):
        return jaxpr.jaxpr, list(jaxpr.consts)
    return jaxpr, []


def is_literal(atom: Any) -> bool:
    return isinstance(atom, Literal)


def eval_shape(fun: Any, *args: Any, **kwargs: Any) -> Any:
    return jax.eval_shape(fun, *args, **kwargs)


def shape_dtype_struct(value: Any) -> Any:
    """Abstract stand-in (ShapeDtypeStruct) for an array, tracer or abstract value; keeps weak
    types, and a sharding over more than one device (``sharding``): the function is traced as the
    program its caller runs, and the compile step places the argument so."""
    aval = getattr(value, "aval", None)
    shape, dtype = value.shape, value.dtype
    weak = bool(getattr(aval, "weak_type", False)) or bool(getattr(value, "weak_type", False))
    placed = sharding(value)
    if placed is not None:
        return jax.ShapeDtypeStruct(shape, dtype, weak_type=weak, sharding=placed)
    if weak:
        return jax.ShapeDtypeStruct(shape, dtype, weak_type=True)
    return jax.ShapeDtypeStruct(shape, dtype)


def argument_paths(closed_jaxpr: Any) -> tuple[list[str] | None, list[str | None] | None]:
    """(the argument path of each input, ``state[0]``; the result path of each output, ``[0][1]``,
    ``""`` for a single output, None for one not known) of a traced jitted function, from JAX's
    debug info; None where nothing is known. The names are the jit equation's (the outer trace
    binds jaxlint's wrapper, whose names are not the user's), read only when its operands are the
    trace's inputs in order. Result paths start with ``result`` from JAX 0.5 and not before; before
    0.5 the outer trace may have no debug info, and the jit's own leaves out the outputs that are
    its inputs passed through (those stay None: they are the inputs themselves)."""
    jaxpr, _ = open_jaxpr(closed_jaxpr)
    call = next((e for e in jaxpr.eqns if e.primitive.name in ("jit", "pjit") and e.params.get("jaxpr") is not None),
                None)
    inner = open_jaxpr(call.params["jaxpr"])[0] if call is not None else None
    inputs = None
    if call is not None and list(call.invars) == list(jaxpr.invars):
        names = getattr(getattr(inner, "debug_info", None), "arg_names", None)
        if names is not None and len(names) == len(jaxpr.invars):
            inputs = [str(n) for n in names]
    outputs: list[str | None] | None = None
    results = getattr(getattr(jaxpr, "debug_info", None), "result_paths", None)
    if results is not None and len(results) == len(jaxpr.outvars):
        outputs = [_result_path(p) for p in results]
    elif call is not None:
        results = getattr(getattr(inner, "debug_info", None), "result_paths", None)
        if results is not None and len(results) == len(call.outvars):
            by_var = {id(v): _result_path(p) for v, p in zip(call.outvars, results)}
            outputs = [by_var.get(id(v)) for v in jaxpr.outvars]
    return inputs, outputs


def _result_path(path: Any) -> str:
    text = str(path)
    return text[len("result"):] if text.startswith("result") else text


def random_keys(dtype: Any, shape: tuple[int, ...], seed: int) -> Any:
    """Typed PRNG keys of ``dtype`` (``key<fry>``), ``shape``, all distinct, from ``seed``. The
    key type's implementation is private (``KeyTy._impl``) from JAX 0.4.35 to 0.10."""
    count = 1
    for size in shape:
        count *= size
    root = jax.random.key(seed, impl=dtype._impl.name)
    return jax.random.split(root, count).reshape(shape)


def side_effects(closed: Any) -> list[str]:
    """The effects of a traced program other than debug printing (``jax.debug.print`` and
    ``jax.debug.callback`` only show values): callbacks into Python code, which may do anything."""
    return sorted({type(effect).__name__ for effect in closed.effects if "Debug" not in type(effect).__name__})


def symbols(dim: Any) -> list[str]:
    """The names of the symbols a symbolic dimension is made of, sorted (none for an int)."""
    return sorted(getattr(dim, "_get_vars", lambda: set())())


def concrete_shape(shape: tuple[Any, ...], size: int = 4,
                   sizes: dict[str, int] | None = None) -> tuple[int, ...] | None:
    """``shape`` with every symbolic dimension (``jax.export``'s ``b``, ``2*b``, ``floordiv(b, 2)``)
    evaluated at ``size`` for each symbol, one size for all so that dimensions the function needs
    equal are, or at ``sizes[symbol]`` where given; None when a dimension cannot be evaluated that way."""
    concrete = []
    names = {"floordiv": lambda a, b: a // b, "mod": lambda a, b: a % b, "max": max, "min": min,
             "non_negative": lambda a: max(a, 0)}
    for dim in shape:
        if isinstance(dim, int):
            concrete.append(dim)
            continue
        values = {s: (sizes or {}).get(s, size) for s in symbols(dim)}
        try:
            value = eval(str(dim), {"__builtins__": {}}, {**names, **values})
        except Exception:  # an expression form this does not know
            return None
        if not isinstance(value, int) or value < 0:
            return None
        concrete.append(value)
    return tuple(concrete)


def bind_equation(eqn: Any, inputs: list[Any]) -> list[Any]:
    """The outputs of one jaxpr equation applied to ``inputs`` (values or tracers), as JAX's
    ``eval_jaxpr`` applies it: ``get_bind_params`` returned (subfuns, params) up to 0.4.x and
    returns the params alone in newer releases."""
    found = eqn.primitive.get_bind_params(eqn.params)
    subfuns, params = found if isinstance(found, tuple) else ((), found)
    out = eqn.primitive.bind(*subfuns, *inputs, **params)
    return list(out) if eqn.primitive.multiple_results else [out]


def as_function(closed: Any) -> Callable[..., Any]:
    """A ClosedJaxpr as a function of its inputs (``jaxpr_as_fun``: in ``jax.extend.core`` from
    JAX 0.5, ``jax.core`` on 0.4.35)."""
    try:
        from jax.extend.core import jaxpr_as_fun
    except ImportError:  # 0.4.35
        from jax.core import jaxpr_as_fun  # type: ignore[no-redef,attr-defined]
    return jaxpr_as_fun(closed)


def eval_closed(closed: Any, inputs: list[Any]) -> list[Any]:
    """The outputs of a ClosedJaxpr applied to ``inputs``."""
    return list(as_function(closed)(*inputs))
