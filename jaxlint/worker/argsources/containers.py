"""Values for parameters and fields annotated with a bare container or ``Any``, from how the body
uses them (the ladder, inferred.py, cannot guess them from the annotation alone):

================================================================  ==================================
annotation, and what the body does with it                        value
================================================================  ==================================
``dict``, ``Mapping``, ``dict[str, Any]``: read with ``.get(k)``,  ``{}`` (``.get(k, default)`` then
tested with ``"k" in p``, passed on, or subscripted with a         gives the library's own default)
constant key only inside ``try: ... except KeyError`` or
``if "k" in p``
... subscripted with constant string keys elsewhere               a dict of those keys, f32 arrays of
                                                                  the rung's rank
``tuple``, ``Sequence``, ``list``, ``NamedTuple``: unpacked       a tuple of f32 arrays, as many as
(``a, b = p``), indexed with constants (``p[1]``) or iterated     unpacked (the largest index + 1; 2
                                                                  when only iterated)
``Any`` (a field's: a parameter's is a one-leaf pytree already)   as the uses above say, else an f32
                                                                  array of the rung's rank
================================================================  ==================================

Where the uses say otherwise (a key that is not a constant, a field read by attribute, iterating
over a dict's items, a tuple whose length no use shows) nothing is guessed and the reason says
which use: ``parameter options: dict (subscripted with a key that is not a constant)``. A
parameter is read in its function's body; a method's field (``self.layers``) in the method's body,
for the instance's own fields only (an instance inside a field, or one built for a function's
parameter, keeps the old rule: no value). Element annotations count: ``tuple[int, ...]`` holds no
arrays and gets none, nor does ``dict[str, Callable]`` get keys.
"""
from __future__ import annotations

import ast
import typing
from typing import Any

from jaxlint.worker.argsources import usage

MAPPING = "mapping"  # a role: (MAPPING, keys), a dict of those keys, f32 arrays of the rung's rank
_MAPPINGS = frozenset({"dict", "Dict", "Mapping", "MutableMapping", "OrderedDict"})
_SEQUENCES = frozenset({"tuple", "Tuple", "Sequence", "list", "List", "NamedTuple"})
_ARRAY_WORDS = ("Array", "ndarray", "ArrayLike", "Float", "Numeric", "Any", "PyTree")
# What an ``Any`` field may read and still be an array: no method an object of another class may
# have too (a distribution's ``mean()``).
_ARRAY_ATTRIBUTES = frozenset({"shape", "dtype", "ndim", "size", "T", "mT", "real", "imag", "at"})
_DICT_METHODS = frozenset({"get", "copy", "pop", "setdefault", "update"})  # an empty dict answers with a default
_KEY_ERRORS = frozenset({"KeyError", "LookupError", "Exception", "BaseException"})
_UNPACKED, _INDEXED, _ITERATED = "unpacked", "indexed", "iterated"  # a sequence's uses; detail: a length
_KEY, _GUARDED, _PASSED = "key", "guarded key", "passed"


def is_mapping(role: Any) -> bool:
    """A dict of arrays, ``(MAPPING, keys)``."""
    return isinstance(role, tuple) and len(role) == 2 and role[0] == MAPPING


def ranked(role: Any) -> bool:
    """A dict that holds arrays (its values take the rung's rank)."""
    return is_mapping(role) and bool(role[1])


def mapping_value(role: tuple, shape: tuple) -> dict:
    """A fresh dict for each call (the body may add keys to it)."""
    import jax

    return {key: jax.ShapeDtypeStruct(shape, "float32") for key in role[1]}


def container_kind(annotation: Any) -> str | None:
    """"mapping", "sequence" or "any" for a bare container annotation (its items arrays, ``Any`` or
    unannotated) or ``Any``; None for any other annotation (one whose objects raise when read:
    ``Annotated`` metadata of the user's)."""
    try:
        return _container_kind(annotation)
    except Exception:
        return None


def _container_kind(annotation: Any) -> str | None:
    if annotation is typing.Any:
        return "any"
    if isinstance(annotation, str):
        head, _, inner = annotation.partition("[")
        name, inner = head.strip().rpartition(".")[2], inner[:-1] if inner.endswith("]") else inner
        # A dict's key and value (the value's own commas kept); a sequence's items as one text.
        items = [part.strip() for part in inner.partition(",")[::2]] if name in _MAPPINGS and inner \
            else [inner] if inner else []
    else:
        origin = typing.get_origin(annotation) or annotation
        name = getattr(origin, "__name__", None) if isinstance(origin, type) or callable(origin) else None
        items = [str(getattr(item, "__name__", item)) for item in typing.get_args(annotation)]
    if name == "Any" and not items:
        return "any"
    if name in _MAPPINGS:
        return "mapping" if all(_arrayish(item) for item in items[1:]) else "mapping-of-other"
    if name in _SEQUENCES and all(_arrayish(item) or item in ("Ellipsis", "...") for item in items) \
            and (not items or any(_arrayish(item) for item in items)):
        return "sequence"
    return None


def _arrayish(text: str) -> bool:
    return any(word in text for word in _ARRAY_WORDS)


class Reader:
    """How one body uses its parameters and ``self``'s fields: the value each container takes."""

    def __init__(self, definition: ast.AST | None, self_name: str | None = None) -> None:
        self.definition = definition if isinstance(definition, (ast.FunctionDef, ast.AsyncFunctionDef)) else None
        self.self_name = self_name
        self.parents = {child: node for node in ast.walk(self.definition)
                        for child in ast.iter_child_nodes(node)} if self.definition else {}

    def role(self, name: str, annotation: Any, why: Exception) -> Any:
        """The role of parameter ``name`` (``self.F`` for a field) annotated with ``annotation``;
        raises ``why`` (the ladder's reason) for another annotation, with the use that decides
        nothing added for a container."""
        kind = container_kind(annotation)
        if kind is None or self.definition is None:
            raise why
        uses = [self._use(node) for node in self._occurrences(name)]
        found, detail = _decided(kind, uses)
        if detail is not None:
            raise type(why)(f"{why} ({detail})")
        if found == "array" and not name.startswith("self."):
            raise why  # a parameter's ``Any`` is a pytree by the ladder, or its name says an object
        return found

    def _occurrences(self, name: str) -> list[ast.AST]:
        if name.startswith("self."):
            field = name[5:]
            return [node for node in ast.walk(self.definition) if isinstance(node, ast.Attribute)
                    and node.attr == field and isinstance(node.value, ast.Name) and node.value.id == self.self_name]
        return usage.occurrences(self.definition, name, self.parents)

    def _use(self, node: ast.AST) -> tuple:
        """(what, detail) for one occurrence: a length, a key (guarded or not), passed on or
        neutral, an attribute read, an array's use, or a use that decides nothing."""
        parent = self.parents.get(node)
        if isinstance(node, ast.Name) and isinstance(node.ctx, ast.Del):
            return (_PASSED, None)
        if not isinstance(node.ctx, ast.Load):  # type: ignore[attr-defined]
            return ("unknown", "the body binds it again")
        if isinstance(parent, ast.Subscript) and parent.value is node:
            return self._item(parent)
        if isinstance(parent, ast.Attribute) and parent.value is node:
            return ("attribute", parent.attr)
        if isinstance(parent, ast.Compare) and node in parent.comparators \
                and all(isinstance(op, (ast.In, ast.NotIn)) for op in parent.ops):
            return (_PASSED, None)  # "k" in p
        if isinstance(parent, ast.Compare) and all(isinstance(op, (ast.Is, ast.IsNot)) for op in parent.ops):
            return (_PASSED, None)
        if isinstance(parent, (ast.Call, ast.keyword)) and getattr(parent, "func", None) is not node:
            return (_PASSED, None)  # passed on: the callee's uses are its own
        use = usage.use_of(node, self.parents)
        if isinstance(use, int):
            return (_UNPACKED, use)
        if use == usage.ITERATED:
            return (_ITERATED, usage.ITERATED_LENGTH)
        return ("array", None) if use in (usage.ARRAY, usage.NEUTRAL, usage.DESCRIBED) else ("unknown", f"used as a {use}")

    def _item(self, item: ast.Subscript) -> tuple:
        key = item.slice
        if not isinstance(item.ctx, ast.Load):
            return (_PASSED, None)  # ``p["k"] = v``, ``del p["k"]``: a key the body sets, not one it needs
        if isinstance(key, ast.Constant) and type(key.value) is str:
            if self._guarded(item, key.value):
                return (_GUARDED, key.value)
            held = self._not_array(item)
            return (_KEY, key.value) if held is None else ("unknown", f"its key {key.value!r} holds {held}")
        if isinstance(key, ast.Constant) and type(key.value) is int and key.value >= 0:
            call = self.parents.get(item)
            if isinstance(call, ast.Call) and call.func is item:
                return ("unknown", f"its item [{key.value}] is called")  # a tuple of functions or modules
            return (_INDEXED, key.value + 1)
        return ("unknown", "subscripted with a key that is not a constant")

    def _not_array(self, item: ast.Subscript) -> str | None:
        """What the value at a constant key holds where its use says it is no array (numpyro's
        ``msg["type"] in self.hide_types`` is a string, ``msg["kwargs"]["rng_key"]`` a dict); None
        where nothing says so."""
        parent = self.parents.get(item)
        if isinstance(parent, ast.Subscript) and parent.value is item and isinstance(parent.slice, ast.Constant) \
                and type(parent.slice.value) is str:
            return "a dict"
        if isinstance(parent, ast.Call) and parent.func is item:
            return "a function"
        if isinstance(parent, ast.Attribute) and parent.attr not in _ARRAY_ATTRIBUTES:
            return "an object"
        if isinstance(parent, ast.Compare) and (
                any(isinstance(op, (ast.In, ast.NotIn)) for op in parent.ops) and parent.left is item
                or any(_is_text(side) for side in (parent.left, *parent.comparators))):
            return "a string, by its comparison"
        return None

    def _guarded(self, node: ast.AST, key: str) -> bool:
        """Inside ``try: ... except KeyError`` or under ``if "key" in ...``: a key the body does
        without."""
        child = node
        while child is not self.definition and child in self.parents:
            parent = self.parents[child]
            if isinstance(parent, ast.Try) and child in parent.body and any(
                    _catches_key_error(handler) for handler in parent.handlers):
                return True
            if isinstance(parent, (ast.If, ast.IfExp)) and child is not parent.test and _tests_key(parent.test, key):
                return True
            child = parent
        return False


def _is_text(node: ast.AST) -> bool:
    """A string constant, or a list, tuple or set of them."""
    if isinstance(node, (ast.List, ast.Tuple, ast.Set)):
        return bool(node.elts) and all(_is_text(item) for item in node.elts)
    return isinstance(node, ast.Constant) and type(node.value) is str


def _catches_key_error(handler: ast.ExceptHandler) -> bool:
    kinds = handler.type.elts if isinstance(handler.type, ast.Tuple) else [handler.type]
    return handler.type is None or any(isinstance(kind, ast.Name) and kind.id in _KEY_ERRORS for kind in kinds)


def _tests_key(test: ast.AST, key: str) -> bool:
    return any(isinstance(node, ast.Compare) and isinstance(node.left, ast.Constant) and node.left.value == key
               and isinstance(node.ops[0], ast.In) for node in ast.walk(test))


def _decided(kind: str, uses: list[tuple]) -> tuple[Any, str | None]:
    """(the role, None), or (None, why no use decides) for a container of ``kind``."""
    whats = {what for what, _ in uses}
    blocking = next((detail for what, detail in uses if what == "unknown"), None)
    if blocking is not None:
        return None, blocking
    attributes = [detail for what, detail in uses if what == "attribute"]
    if kind.startswith("mapping") or (kind == "any" and whats & {_KEY, _GUARDED}):
        return _mapping(kind, uses, whats, next((a for a in attributes if a not in _DICT_METHODS), None))
    if kind == "sequence" or (kind == "any" and _UNPACKED in whats):
        if attributes:
            return None, f"its code reads .{attributes[0]}"
        return _sequence(uses)
    attribute = next((a for a in attributes if a not in _ARRAY_ATTRIBUTES), None)
    if attribute is not None:
        return None, f"its code reads .{attribute}, which an array has not"
    return "array", None


def _mapping(kind: str, uses: list[tuple], whats: set, attribute: str | None) -> tuple[Any, str | None]:
    """``attribute``: the first the body reads that an empty dict does not answer, or None."""
    if attribute is not None:
        return None, f"its code reads .{attribute}" if attribute not in ("items", "keys", "values") \
            else f"its code iterates over its .{attribute}()"
    if whats & {_UNPACKED, _INDEXED, _ITERATED, "array"}:
        return None, "its code uses it as a sequence or an array, not by key"
    keys = tuple(dict.fromkeys(detail for what, detail in uses if what == _KEY))
    if keys and kind == "mapping-of-other":
        return None, "its values are not arrays"
    return (MAPPING, keys), None


def _sequence(uses: list[tuple]) -> tuple[Any, str | None]:
    if any(what in (_KEY, _GUARDED) for what, _ in uses):
        return None, "subscripted with a string key"
    if any(what == "array" for what, _ in uses):
        return None, "its code uses it as an array too"
    unpacked = {detail for what, detail in uses if what == _UNPACKED}
    indexed = max((detail for what, detail in uses if what == _INDEXED), default=0)
    if len(unpacked) > 1:
        return None, "unpacked to different lengths"
    if unpacked and unpacked.pop() < indexed:
        return None, "indexed past the length it is unpacked to"
    lengths = [detail for what, detail in uses if what in (_UNPACKED, _INDEXED, _ITERATED)]
    if not lengths:
        return None, "no use shows its length"
    unpack = [detail for what, detail in uses if what == _UNPACKED]
    return (usage.TUPLE, unpack[0] if unpack else indexed or usage.ITERATED_LENGTH), None
