"""Parse ``# jaxlint: args x=f32[], y=f32[n, 3], k=3`` hint comments into argument specs.

A dimension may name the mesh axes it is split over, as jaxprs print sharded types:
``f32[512@data, 512]``, ``f32[512@(data,model)]``; the worker finds the mesh (``to_abstract``'s
``place``).

Pure Python on purpose: hints are parsed while collecting targets, before (and often
without) importing jax. Only ``to_abstract`` touches jax, and imports it lazily.
"""
from __future__ import annotations

import ast
import keyword
import re
from collections.abc import Callable, Iterator
from dataclasses import dataclass
from typing import Any

from jaxlint.text import BRACKETS, CLOSING_BRACKETS, BracketError, outside_strings, split_outside_brackets

# dtype names as jaxprs print them -> numpy dtype names (ml_dtypes calls bf16 "bfloat16").
DTYPES: dict[str, str] = {
    "f16": "float16",
    "bf16": "bfloat16",
    "f32": "float32",
    "f64": "float64",
    "i8": "int8",
    "i16": "int16",
    "i32": "int32",
    "i64": "int64",
    "u8": "uint8",
    "u16": "uint16",
    "u32": "uint32",
    "u64": "uint64",
    "bool": "bool",
    "c64": "complex64",
    "c128": "complex128",
}
_SHORT_NAMES: dict[str, str] = {numpy_name: short for short, numpy_name in DTYPES.items()}

# jax.export.symbolic_shape reads these as operators or placeholders, never as variables.
_RESERVED_DIMS = ("_", "mod", "floordiv", "max", "min")

# What --show-untraced writes where it cannot know the value, and what to write instead.
_PLACEHOLDERS = {
    "<static>": "the Python value {name} takes, e.g. {name}=3",
    "<unknown>": "what {name} holds (nothing in the function said): its dtype and shape (f32[8,3]), a "
                 "Python value, or a pytree of these",
    "<pytree>": "the structure of {name} ({{'w': f32[3,2]}}, (f32[8], i32[])), or register a call in an "
                "examples file (docs/arguments.md)",
}
_NAME = re.compile(r"[^\W\d]\w*")  # a Python identifier
_INT = re.compile(r"[0-9]+")
_LITERAL_ERRORS = (ValueError, TypeError, SyntaxError, MemoryError, RecursionError)


@dataclass(frozen=True)
class ArraySpec:
    dtype: str  # numpy dtype name, e.g. "float32", "bfloat16"
    dims: tuple[int | str, ...]  # ints are fixed sizes, strs are symbolic dimension names
    # Per dimension, the mesh axes it is split over (``512@data``); () when no dimension is.
    shards: tuple[tuple[str, ...], ...] = ()


def sharded_spec(array: Any, shards: tuple[tuple[str, ...], ...]) -> ArraySpec:
    """An array (``ShapeDtypeStruct``, array) as the hint that states the mesh axes of each of its
    dimensions (``f32[8@data,4]``); ``shards`` may leave out the trailing dimensions."""
    name = getattr(array.dtype, "name", None) or str(array.dtype)
    return ArraySpec(name, tuple(array.shape), tuple(shards) + ((),) * (len(array.shape) - len(shards)))


@dataclass(frozen=True)
class StaticSpec:
    value: object


class HintError(ValueError):
    """A malformed hint; ``column`` is the 0-based offset into the hint text (best effort)."""

    def __init__(self, message: str, column: int = 0) -> None:
        super().__init__(message)
        self.column = column


# --- public API ---------------------------------------------------------------------------


def parse_hint(text: str) -> dict[str, Any]:
    """Parse the text after ``args`` into param name -> pytree of ArraySpec/StaticSpec leaves."""
    # Check brackets and strings once up front, so the scans below cannot fail.
    for _ in _scan(text, 0, len(text)):
        pass
    spec: dict[str, Any] = {}
    for start, end in _items(text, 0, len(text), "parameter (stray comma?)"):
        m = _NAME.match(text, start, end)
        if m is None:
            raise HintError(f"expected a parameter name at {text[start:end]!r}", start)
        name = m.group()
        if keyword.iskeyword(name):
            raise HintError(f"parameter name {name!r} is a Python keyword", start)
        eq, _ = _strip(text, m.end(), end)
        if eq == end or text[eq] != "=":
            raise HintError(f"missing '=' after {name!r}", eq)
        if name in spec:
            raise HintError(f"duplicate parameter {name!r}", start)
        value = text[eq + 1:end].strip()
        if value in _PLACEHOLDERS or ("[...]" in value and value[:1] not in "'\""):  # copied from --show-untraced
            what = "the dtype and shape, e.g. {name}=f32[8,3]"
            if value.startswith("[") and value.endswith(", ...]"):
                what = ("one element per item, each with its dtypes and shapes (`...` stands for the rest), e.g. "
                        "{name}=[{{'w': f32[4,8]}}, {{'w': f32[8,3]}}]")
            raise HintError(f"{name}={value} is a placeholder --show-untraced suggests: write "
                            + _PLACEHOLDERS.get(value, what).format(name=name), eq + 1)
        spec[name] = _parse_value(text, eq + 1, end, text[start:end], name)
    return spec


def dim_names(spec: dict[str, Any]) -> list[str]:
    """Symbolic dimension names of the whole hint, in first-appearance order."""
    arrays = [leaf for leaf in _leaves(spec) if isinstance(leaf, ArraySpec)]
    return list(dict.fromkeys(d for leaf in arrays for d in leaf.dims if isinstance(d, str)))


def mesh_axes(spec: dict[str, Any]) -> list[str]:
    """The mesh axes the hint splits dimensions over, in first-appearance order."""
    arrays = [leaf for leaf in _leaves(spec) if isinstance(leaf, ArraySpec)]
    return list(dict.fromkeys(axis for leaf in arrays for axes in leaf.shards for axis in axes))


Place = Callable[[Any, tuple[tuple[str, ...], ...]], Any]


def to_abstract(spec: dict[str, Any], place: Place | None = None) -> dict[str, Any]:
    """ArraySpec -> jax.ShapeDtypeStruct, StaticSpec -> its value; containers keep their types.
    ``place(struct, shards)`` gives a sharded ArraySpec's struct its sharding (the worker knows the
    module's mesh); without it such a spec is a HintError."""
    import jax

    names = dim_names(spec)
    # One call for the whole hint: dims from separate symbolic_shape calls never unify.
    symbols = {}
    if names:
        from jax import export  # only for symbolic dims: on JAX 0.4.x it needs absl-py

        symbols = dict(zip(names, export.symbolic_shape(", ".join(names))))

    def convert(leaf: Any) -> Any:
        if isinstance(leaf, ArraySpec):
            shape = tuple(symbols[d] if isinstance(d, str) else d for d in leaf.dims)
            struct = jax.ShapeDtypeStruct(shape, _key_dtype(leaf.dtype) if is_key(leaf.dtype) else leaf.dtype)
            if not leaf.shards:
                return struct
            if place is None:
                raise HintError(f"{_format(leaf, ',')} names mesh axes, but no mesh is known here")
            return place(struct, leaf.shards)
        if isinstance(leaf, StaticSpec):
            return leaf.value
        raise TypeError(f"not an ArraySpec or StaticSpec: {leaf!r}")

    return {name: _map_leaves(convert, tree) for name, tree in spec.items()}


def is_key(dtype: str) -> bool:
    """A typed PRNG key's dtype as the hint syntax writes it (``key``, ``key<rbg>``)."""
    return dtype == "key" or dtype.startswith("key<")


def _key_dtype(dtype: str) -> Any:
    """The key dtype of ``key`` (the configured default implementation) or ``key<impl>``."""
    import jax

    def key_dtype(impl: str | None) -> Any:
        return jax.eval_shape(lambda: jax.random.key(0, impl=impl)).dtype

    if dtype == "key":
        return key_dtype(None)
    # The hint writes the dtype as jaxprs print it (key<fry>); jax.random.key takes the
    # implementation's name (threefry2x32).
    for impl in (dtype[4:-1], *_KEY_IMPLEMENTATIONS):
        try:
            found = key_dtype(impl)
        except (ValueError, TypeError):
            continue
        if str(found) == dtype:
            return found
    raise HintError(f"unknown PRNG implementation in {dtype} (jaxprs print key<fry>, key<rbg>, key<urbg>)")


_KEY_IMPLEMENTATIONS = ("threefry2x32", "rbg", "unsafe_rbg", "philox2x32", "philox4x32", "threefry4x32")


def describe(spec: dict[str, Any]) -> str:
    """Back to hint text, e.g. ``x=f32[], y=f32[n, 3], k=3`` (parse_hint reads it back)."""
    return ", ".join(f"{name}={_format(tree, ', ')}" for name, tree in spec.items())


def format_abstract(value: Any) -> str:
    """Render a pytree of ShapeDtypeStruct / arrays / static values like ``(f32[n,3], 2)``."""
    return _format(value, ",")


# --- scanning -----------------------------------------------------------------------------


def _scan(text: str, start: int, end: int) -> Iterator[tuple[int, str, int]]:
    """jaxlint.text.outside_strings over text[start:end], its errors as HintErrors."""
    try:
        yield from outside_strings(text, start, end)
    except BracketError as error:
        raise HintError(str(error), error.index) from None


def _strip(text: str, start: int, end: int) -> tuple[int, int]:
    while start < end and text[start].isspace():
        start += 1
    while end > start and text[end - 1].isspace():
        end -= 1
    return start, end


def _split(text: str, start: int, end: int, sep: str) -> list[tuple[int, int]]:
    """Ranges of text[start:end] between top-level ``sep`` chars (not in brackets or strings)."""
    try:
        return split_outside_brackets(text, sep, start, end)
    except BracketError as error:
        raise HintError(str(error), error.index) from None


def _items(text: str, start: int, end: int, what: str) -> list[tuple[int, int]]:
    """Stripped comma-separated items of text[start:end]; a trailing comma is fine, as in Python."""
    pieces = [_strip(text, s, e) for s, e in _split(text, start, end, ",")]
    if pieces[-1][0] == pieces[-1][1]:
        pieces.pop()  # empty text, or a trailing comma
    for s, e in pieces:
        if s == e:
            raise HintError(f"empty {what}", s)
    return pieces


def _closing(text: str, start: int, end: int) -> int:
    """Index of the bracket that closes the one at text[start]."""
    return next(i for i, ch, depth in _scan(text, start, end) if depth == 0 and ch in CLOSING_BRACKETS)


# --- values -------------------------------------------------------------------------------


def _parse_value(text: str, start: int, end: int, item: str, path: str) -> Any:
    """Parse one value. For messages: ``item`` is the whole ``name=value``, ``path`` e.g. "p[0]"."""
    start, end = _strip(text, start, end)
    if start == end:
        raise HintError(f"missing value for {path}", start)
    m = _NAME.match(text, start, end)
    if m is not None and m.group() == "key":  # a typed PRNG key: key[], key<rbg>[2]
        return _parse_key(text, m, end, item, path)
    if m is not None:
        bracket, _ = _strip(text, m.end(), end)
        if bracket < end and text[bracket] == "[":
            return _parse_array(text, m, bracket, end, item, path)
        if m.group() in DTYPES and m.end() == end:
            hint = f"write {m.group()}[] for a scalar"
            raise HintError(f"missing dimensions after dtype {m.group()!r} in {path} ({hint})", end)
    if text[start] in BRACKETS and _closing(text, start, end) == end - 1:
        try:
            return StaticSpec(ast.literal_eval(text[start:end]))
        except _LITERAL_ERRORS:
            return _parse_container(text, start, end, item, path)  # has array specs, or is broken
    try:
        return StaticSpec(ast.literal_eval(text[start:end]))
    except _LITERAL_ERRORS:
        message = f"value of {path} is not a Python literal: {text[start:end]!r}"
        raise HintError(message, start) from None


def _parse_key(text: str, m: re.Match[str], end: int, item: str, path: str) -> ArraySpec:
    """``key[dims]`` (the default PRNG implementation) or ``key<impl>[dims]`` (as jaxprs print a
    typed key's dtype: ``key<fry>``, ``key<rbg>``, ``key<unsafe_rbg>``)."""
    dtype, bracket = "key", m.end()
    if bracket < end and text[bracket] == "<":
        close = text.find(">", bracket, end)
        impl = _NAME.fullmatch(text, bracket + 1, close) if close != -1 else None
        if impl is None:
            raise HintError(f"expected key<implementation>[...] in {path}, e.g. key<fry>[]", bracket)
        dtype, bracket = f"key<{impl.group()}>", close + 1
    if bracket >= end or text[bracket] != "[":
        raise HintError(f"missing dimensions after {dtype!r} in {path} (write {dtype}[] for one key)", bracket)
    array = _parse_array(text, m, bracket, end, item, path, key=True)
    return ArraySpec(dtype, array.dims, array.shards)


def _parse_array(
    text: str, m: re.Match[str], bracket: int, end: int, item: str, path: str, key: bool = False
) -> ArraySpec:
    """``dtype[dims]``: ``m`` matched the dtype name and text[bracket] is its ``[``."""
    dtype = m.group()
    if dtype not in DTYPES and not key:
        known = ", ".join(DTYPES)
        raise HintError(f"unknown dtype {dtype!r} in {item!r} (expected one of {known}, or key[...] for "
                        "typed PRNG keys)", m.start())
    close = _closing(text, bracket, end)
    if close != end - 1:
        extra, array = text[close + 1 : end].strip(), text[m.start() : close + 1]
        raise HintError(f"unexpected {extra!r} after {array!r} in {path}", close + 1)
    dims: list[int | str] = []
    shards: list[tuple[str, ...]] = []
    for s, e in _items(text, bracket + 1, close, f"dimension in {path}"):
        at = text.find("@", s, e)
        shards.append(() if at == -1 else _mesh_axes(text, at + 1, e, path))
        s, e = _strip(text, s, e if at == -1 else at)
        dim = text[s:e]
        if not dim:
            raise HintError(f"missing the size before '@' in {path} (e.g. f32[512@data])", s)
        if _INT.fullmatch(dim):
            dims.append(int(dim))
        elif _NAME.fullmatch(dim):
            if dim in _RESERVED_DIMS:
                avoid = ", ".join(_RESERVED_DIMS)
                message = f"dimension name {dim!r} of {path} is reserved by jax.export ({avoid})"
                raise HintError(message, s)
            dims.append(dim)
        else:
            message = f"dimension {dim!r} of {path} is not a non-negative integer or a name"
            raise HintError(message, s)
    named = [axis for axes in shards for axis in axes]
    repeated = next((axis for axis in named if named.count(axis) > 1), None)
    if repeated is not None:
        raise HintError(f"mesh axis {repeated!r} splits {path} twice (an axis splits one dimension)", bracket)
    return ArraySpec(DTYPES.get(dtype, dtype), tuple(dims), tuple(shards) if named else ())


def _mesh_axes(text: str, start: int, end: int, path: str) -> tuple[str, ...]:
    """The mesh axes after a dimension's ``@``: one name (``data``) or several (``(data,model)``)."""
    start, end = _strip(text, start, end)
    several = start < end and text[start] == "(" and text[end - 1] == ")"
    pieces = _items(text, start + 1, end - 1, f"mesh axis in {path}") if several else [(start, end)]
    axes = tuple(text[s:e] for s, e in pieces)
    if not axes or not all(_NAME.fullmatch(axis) for axis in axes):
        raise HintError(f"expected a mesh axis name or several in parentheses after '@' in {path}, e.g. "
                        f"f32[512@data, 512] or f32[512@(data,model)], got {text[start:end]!r}", start)
    return axes


def _parse_container(text: str, start: int, end: int, item: str, path: str) -> Any:
    """A tuple, list or dict (text[start] is its opening bracket) with array specs inside."""
    opener = text[start]
    items = _items(text, start + 1, end - 1, f"element in {path}")
    if opener == "(" and len(_split(text, start + 1, end - 1, ",")) == 1:
        # As in Python, `(x)` only groups; `(x,)` is a tuple.
        return _parse_value(text, start + 1, end - 1, item, path)
    if opener != "{":
        values = [_parse_value(text, s, e, item, f"{path}[{k}]") for k, (s, e) in enumerate(items)]
        return tuple(values) if opener == "(" else values
    result = {}
    for s, e in items:
        colon = next((i for i, ch, depth in _scan(text, s, e) if ch == ":" and depth == 0), None)
        if colon is None:
            message = f"expected 'key: value' in dict {path} (sets of arrays are not supported)"
            raise HintError(message, s)
        ks, ke = _strip(text, s, colon)
        try:
            key = ast.literal_eval(text[ks:ke])
            hash(key)
        except _LITERAL_ERRORS:
            message = f"dict key {text[ks:ke]!r} in {path} is not a hashable Python literal"
            raise HintError(message, ks) from None
        result[key] = _parse_value(text, colon + 1, e, item, f"{path}[{key!r}]")
    return result


# --- pytrees ------------------------------------------------------------------------------


def _leaves(tree: Any) -> Iterator[Any]:
    if isinstance(tree, (tuple, list)):
        for child in tree:
            yield from _leaves(child)
    elif isinstance(tree, dict):
        for child in tree.values():
            yield from _leaves(child)
    else:
        yield tree


def _map_leaves(fn: Callable[[Any], Any], tree: Any) -> Any:
    if isinstance(tree, tuple):
        return tuple(_map_leaves(fn, child) for child in tree)
    if isinstance(tree, list):
        return [_map_leaves(fn, child) for child in tree]
    if isinstance(tree, dict):
        return {key: _map_leaves(fn, child) for key, child in tree.items()}
    return fn(tree)


def _format(tree: Any, dim_sep: str) -> str:
    if isinstance(tree, tuple):
        inner = ", ".join(_format(child, dim_sep) for child in tree)
        return f"({inner},)" if len(tree) == 1 else f"({inner})"
    if isinstance(tree, list):
        return "[" + ", ".join(_format(child, dim_sep) for child in tree) + "]"
    if isinstance(tree, dict):
        inner = ", ".join(f"{key!r}: {_format(child, dim_sep)}" for key, child in tree.items())
        return "{" + inner + "}"
    if isinstance(tree, ArraySpec):
        return _format_array(tree.dtype, tree.dims, dim_sep, tree.shards)
    if isinstance(tree, StaticSpec):
        return repr(tree.value)
    # ShapeDtypeStruct, arrays, tracers; not a NumPy scalar type (``np.float64``: a class that has both)
    if hasattr(tree, "shape") and hasattr(tree, "dtype") and not isinstance(tree, type):
        dtype = tree.dtype
        name = getattr(dtype, "name", None) or getattr(dtype, "__name__", None) or str(dtype)
        return _format_array(name, tree.shape, dim_sep)
    return repr(tree)


def _format_array(dtype: str, dims: Any, dim_sep: str, shards: tuple[tuple[str, ...], ...] = ()) -> str:
    texts = [str(d) for d in dims]
    for index, axes in enumerate(shards):
        if axes:  # as jaxprs print a sharded type: 512@data, 512@(data,model)
            texts[index] += f"@{axes[0]}" if len(axes) == 1 else f"@({','.join(axes)})"
    return f"{_SHORT_NAMES.get(dtype, dtype)}[{dim_sep.join(texts)}]"
