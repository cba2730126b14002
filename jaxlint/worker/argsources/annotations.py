"""jaxtyping annotations: ``x: Float[Array, "batch n"]`` is traced as ``f32[batch,n]``.

Named dimensions are JAX symbolic dimensions shared across the whole signature, integer
dimensions stay integers. A function is a candidate only if one of its parameters has a
jaxtyping annotation; if any required parameter cannot be built, the source returns nothing and
leaves a note saying why (the skip reason users see).

jaxlint never imports jaxtyping itself: annotation classes are only recognised when the
user's code has already imported it.
"""
from __future__ import annotations

import inspect
import sys
import types
import typing
from itertools import count
from typing import Any, Iterator

from jaxlint.worker.argsources import ArgumentRequest, ArgumentSet, forward_refs

# Generic dtype classes (Float, Int, Num, Inexact, ...) allow several dtypes: take the usual
# default, the first of these the annotation allows.
_PREFERRED = ("float32", "int32", "uint32", "complex64", "bool")
_PYTHON_SCALARS = (int, float, bool, complex, str)
_EMPTY = inspect.Parameter.empty


class _Unknown(Exception):
    """A parameter that cannot be made abstract; the message is the reason shown to users."""


def arguments(request: ArgumentRequest) -> list[ArgumentSet]:
    jaxtyping = sys.modules.get("jaxtyping")
    if jaxtyping is None:  # the user's code did not import it, so no annotation can be one
        return []
    try:
        function = inspect.unwrap(request.function)  # through jit and functools.wraps wrappers
        signature = inspect.signature(function)
    except (TypeError, ValueError):  # a builtin, a callable object without a signature
        return []
    annotations = evaluated_annotations(function, signature)
    if not any(_mentions(a, jaxtyping) for a in annotations.values()):
        return []
    params = [p for p in signature.parameters.values()
              if p.kind not in (p.VAR_POSITIONAL, p.VAR_KEYWORD)]  # *args, **kwargs: pass none
    if any(p.kind == p.VAR_POSITIONAL for p in signature.parameters.values()) \
            and all(p.default is not _EMPTY for p in params):
        # f(*trees, rtol=...): its arrays come through *args, which the annotations cannot size.
        request.notes.append("its arrays come through *args; add a hint or an example")
        return []
    owner = _method_owner(request)
    reasons: list[str] = []
    if owner is not None and params and params[0].name not in annotations:
        reasons.append(f"{params[0].name} of {owner} is unknown; use an examples file")
        params = params[1:]
    specs: dict[str, tuple[Any, list[int | str]]] = {}
    fresh = (f"_{i}" for i in count(1))  # anonymous dims ("_", "_n"): a symbol of their own
    for p in params:
        annotation = annotations.get(p.name, _EMPTY)
        try:
            spec = _parameter_spec(p, annotation, jaxtyping, fresh)
        except Exception as error:  # _Unknown, or a jaxtyping whose classes look different
            spec = None
            if p.default is _EMPTY:
                reasons.append(str(error) if isinstance(error, _Unknown) else
                               f"{p.name}: annotation not understood ({error!r}); add a hint")
                continue
        if spec is not None:
            specs[p.name] = spec
        elif p.default is _EMPTY:
            reasons.append(_why_unknown(p.name, annotation))
    if reasons:
        request.notes.append("; ".join(reasons))
        return []
    try:
        values = _abstract(specs)
    except Exception as error:  # a dimension name or expression jax.export does not accept
        request.notes.append(f"annotated dimensions cannot be made symbolic ({error}); add a hint")
        return []
    args, kwargs = [], {}
    for p in params:
        if p.kind == p.POSITIONAL_ONLY:
            args.append(values.get(p.name, p.default))  # keep later positions in place
        elif p.name in values:
            kwargs[p.name] = values[p.name]  # a parameter left out keeps its own default
    return [ArgumentSet("annotations", tuple(args), kwargs)]


def _parameter_spec(p: inspect.Parameter, annotation: Any, jaxtyping: Any,
                    fresh: Iterator[str]) -> tuple[Any, list[int | str]] | None:
    spec = _array_spec(annotation, p.name, jaxtyping, fresh)
    member = _first_array_member(annotation, jaxtyping) if spec is None and p.default is _EMPTY else None
    if member is not None:  # Optional[Float[Array, "n"]] with no default: its array
        return _array_spec(member, p.name, jaxtyping, fresh)
    return spec


def evaluated_annotations(function: Any, signature: inspect.Signature) -> dict[str, Any]:
    """Parameter name -> evaluated annotation (``from __future__ import annotations`` included; a
    forward reference, a type variable bound to a class, a generic class: forward_refs.py's class)."""
    try:
        hints = typing.get_type_hints(function, include_extras=True)
    except Exception:  # one unresolvable name (imported under TYPE_CHECKING) fails them all
        hints = {}
    namespace = dict(getattr(function, "__globals__", {}))
    found = {}
    for p in signature.parameters.values():
        annotation = hints.get(p.name, p.annotation)
        if isinstance(annotation, str):
            try:
                annotation = eval(annotation, namespace)  # noqa: S307 - the user's own annotation
            except Exception:
                annotation = forward_refs.resolved(annotation, namespace)  # a dotted path of an imported module
                if isinstance(annotation, str):
                    continue
        if typing.get_origin(annotation) is typing.Annotated:
            annotation = annotation.__origin__
        annotation = forward_refs.resolved(annotation, namespace)
        if annotation is not _EMPTY:
            found[p.name] = annotation
    return found


def array_spec(annotation: Any, name: str) -> tuple[Any, list[int | str]] | None:
    """(dtype, dims) of a jaxtyping array annotation (a name for each named or anonymous
    dimension); None for any other annotation, one it cannot build, or when the user's code did
    not import jaxtyping."""
    jaxtyping = sys.modules.get("jaxtyping")
    if jaxtyping is None:
        return None
    try:
        return _array_spec(annotation, name, jaxtyping, (f"_{i}" for i in count(1)))
    except Exception:  # _Unknown (variadic dims), or a jaxtyping whose classes look different
        return None


def union_array_spec(annotation: Any, name: str) -> tuple[Any, list[int | str]] | None:
    """(dtype, dims) of the first jaxtyping array member of a union whose other members are no
    arrays (classes, None, Python scalars): ``Union[Float[Array, "n"], ParameterProperties]`` is
    ``f32[n]``; None for any other annotation (a union with ``jax.Array`` or ``ArrayLike`` says no
    shape), or when the user's code did not import jaxtyping."""
    jaxtyping = sys.modules.get("jaxtyping")
    member = _first_array_member(annotation, jaxtyping) if jaxtyping is not None else None
    return None if member is None else array_spec(member, name)


def _first_array_member(annotation: Any, jaxtyping: Any) -> Any:
    """The first jaxtyping array member of a union whose other members are no unshaped arrays; None else."""
    if not _is_union(annotation):
        return None
    members = typing.get_args(annotation)
    arrays = [m for m in members if _is_array(m, jaxtyping)]
    if not arrays or any(_unsized_array(m) for m in members if m not in arrays):
        return None
    return arrays[0]


def _unsized_array(member: Any) -> bool:
    """An array class with no jaxtyping shape (jax.Array, np.ndarray), or what is not a class."""
    if member is type(None) or any(member is t for t in _PYTHON_SCALARS):
        return False
    if not isinstance(member, type):
        return True  # a type variable, a generic alias, a string: say nothing of it
    return hasattr(member, "shape") or hasattr(member, "__array__") or hasattr(member, "__jax_array__")


def _is_array(annotation: Any, jaxtyping: Any) -> bool:
    base = getattr(jaxtyping, "AbstractArray", None)  # what Float[Array, "n"] etc. subclass
    return isinstance(annotation, type) and base is not None and issubclass(annotation, base)


def _is_union(annotation: Any) -> bool:
    return typing.get_origin(annotation) in (typing.Union, types.UnionType)


def _mentions(annotation: Any, jaxtyping: Any) -> bool:
    """A jaxtyping array annotation, or a union (Optional, PRNGKeyArray) containing one."""
    if _is_union(annotation):
        return any(_mentions(a, jaxtyping) for a in typing.get_args(annotation))
    return _is_array(annotation, jaxtyping)


def _array_spec(annotation: Any, name: str, jaxtyping: Any,
                fresh: Iterator[str]) -> tuple[Any, list[int | str]] | None:
    """(dtype, dims) of an array annotation, None for anything else; _Unknown if it can't be built."""
    # Both are unions; compare only unions, whose == is typing's own.
    if _is_union(annotation) and annotation == getattr(jaxtyping, "PRNGKeyArray", None):
        return _key_dtype(), []  # a typed key (the union also allows legacy u32[2] keys)
    if _is_union(annotation) and annotation == getattr(jaxtyping, "ScalarLike", None):
        return "float32", []  # an array scalar or a Python number
    if not _is_array(annotation, jaxtyping):
        return None
    dims: list[int | str] = []
    for dim in annotation.dims:
        if "Variadic" in type(dim).__name__:  # "*batch", "*#batch", "..."
            shown = f"*{dim.name}" if getattr(dim, "name", None) else "..."
            raise _Unknown(f"{name}: variadic dims {shown} cannot be made abstract; add a hint")
        if hasattr(dim, "size"):  # "3", "n=3"
            dims.append(int(dim.size))
        elif isinstance(getattr(dim, "elem", None), str):  # "2*n": jax.export reads the same
            dims.append(dim.elem)
        elif isinstance(getattr(dim, "name", None), str):  # "n", and "#n" taken as n
            dims.append(dim.name)
        elif type(dim).__name__ == "_AnonymousDim":  # "_", "_n"
            dims.append(next(fresh))
        else:
            raise _Unknown(f"{name}: dimension {dim!r} cannot be made abstract; add a hint")
    return _dtype(annotation, name), dims


def _dtype(annotation: Any, name: str) -> Any:
    import jax.numpy as jnp
    from jax import dtypes

    allowed = annotation.dtypes
    if not isinstance(allowed, (tuple, list)):  # Shaped: any dtype
        return "float32"
    if "prng_key" in allowed:
        return _key_dtype()
    for choice in (*_PREFERRED, *allowed):
        if choice in allowed:
            try:
                return dtypes.canonicalize_dtype(jnp.dtype(choice)).name  # f64 is f32 without x64
            except TypeError:  # a dtype this JAX does not know (float4 on old versions)
                continue
    raise _Unknown(f"{name}: no dtype of {annotation.dtype.__name__} is known to JAX; add a hint")


def _key_dtype() -> Any:
    import jax

    # The dtype of jax.random.key under the configured PRNG implementation.
    return jax.eval_shape(jax.random.key, 0).dtype


def _abstract(specs: dict[str, tuple[Any, list[int | str]]]) -> dict[str, Any]:
    import jax

    names = list(dict.fromkeys(d for _, dims in specs.values() for d in dims if isinstance(d, str)))
    symbols = {}
    if names:
        from jax import export

        # One call for the whole signature: dims from separate calls never unify.
        symbols = dict(zip(names, export.symbolic_shape(", ".join(names))))
    return {name: jax.ShapeDtypeStruct(tuple(symbols.get(d, d) for d in dims), dtype)
            for name, (dtype, dims) in specs.items()}


def _why_unknown(name: str, annotation: Any) -> str:
    if annotation is _EMPTY:
        return f"argument {name} has no annotation; add a hint"
    if any(annotation is t for t in _PYTHON_SCALARS):
        return f"static argument {name}: {annotation.__name__} unknown; add a hint"
    return f"argument {name}: {_show(annotation)} cannot be made abstract; add a hint"


def _show(annotation: Any) -> str:
    """``Float[Array, 'n'] | None`` rather than typing's fully qualified repr."""
    if _is_union(annotation):
        return " | ".join(_show(a) for a in typing.get_args(annotation))
    if annotation is type(None):
        return "None"
    if isinstance(annotation, type) and hasattr(annotation, "dim_str"):  # a jaxtyping array
        array = str(getattr(annotation.array_type, "__name__", annotation.array_type))
        array = array.rsplit(".", 1)[-1]  # jax.Array's __name__ is "jaxlib._jax.Array" on 0.10
        return f"{annotation.dtype.__name__}[{array}, {annotation.dim_str!r}]"
    return getattr(annotation, "__name__", None) or repr(annotation)


def _method_owner(request: ArgumentRequest) -> str | None:
    """The class name if the target is an unbound method whose first parameter is ``self``."""
    if inspect.ismethod(request.function):  # bound already (a classmethod's cls)
        return None
    *path, last = request.target.qualname.split(".")
    owner = request.module
    try:
        for part in path:
            owner = getattr(owner, part, None)
        if not path or not isinstance(owner, type):
            return None
        raw = inspect.getattr_static(owner, last)
    except Exception:  # a user's __getattr__ that raises, or no such attribute
        return None
    return None if isinstance(raw, staticmethod) else owner.__name__
