"""What a static argument's expression can be, for JX203's static-float half: its kind (float, int,
...) and whether it changes from one iteration of a loop to the next.

A small flow-insensitive evaluator over one function's (or the module's) syntax tree. It answers
"float" only when the expression is built from float literals, true division, ``float()``,
``math`` functions, NumPy float scalars or float sequences (``np.linspace``, a list of float
literals), and "varies" only when a name the loop (re)binds feeds it a value that is not the
same constant every time. Anything it cannot see through is of unknown kind and never reported.
"""
from __future__ import annotations

import ast
from dataclasses import dataclass

from jaxlint.scan.index import COMPREHENSIONS as _COMPREHENSIONS
from jaxlint.scan.index import SCOPES as _SCOPES
from jaxlint.scan.index import SourceIndex
from jaxlint.scan.index import walk_scope as _walk_scope

_NUMBERS = ("float", "int", "bool")
# math functions that return a float (not floor/ceil/trunc/factorial/comb/perm/gcd/isqrt/isnan...).
_MATH_FLOAT = {"acos", "acosh", "asin", "asinh", "atan", "atan2", "atanh", "cbrt", "copysign", "cos",
               "cosh", "degrees", "dist", "erf", "erfc", "exp", "exp2", "expm1", "fabs", "fmod", "fsum",
               "gamma", "hypot", "ldexp", "lgamma", "log", "log10", "log1p", "log2", "pow", "radians",
               "remainder", "sin", "sinh", "sqrt", "tan", "tanh"}
_NUMPY_FLOATS = {f"numpy.{name}" for name in ("float16", "float32", "float64", "double", "half", "single")}
_NUMPY_FLOAT_RANGES = {"numpy.linspace", "numpy.logspace", "numpy.geomspace"}


@dataclass(frozen=True)
class Value:
    kind: str | None  # "float", "int", "bool", "other" (not a number), None: unknown
    varies: bool = False  # differs between iterations of the loop asked about
    names: tuple[str, ...] = ()  # the names set in the loop it depends on
    constants: frozenset | None = None  # every value it can take, when all are literals


UNKNOWN = Value(None)


def kind_of(value: object) -> str:
    if isinstance(value, bool):
        return "bool"
    return {int: "int", float: "float"}.get(type(value), "other")


def combine(kinds: list[str | None]) -> str | None:
    """The kind of a value that is one of several: float if any is (and all are numbers)."""
    if any(k == "other" for k in kinds):
        return "other"
    if not kinds or any(k is None for k in kinds):
        return None
    if "float" in kinds:
        return "float"
    return "int" if "int" in kinds else "bool"


class Evaluator:
    """Values of expressions in ``scope`` (a def, lambda or the module) of ``tree``."""

    def __init__(self, index: SourceIndex, scope: ast.AST) -> None:
        assert index.tree is not None
        self.index, self.tree, self.scope = index, index.tree, scope

    def safe_value(self, node: ast.expr, loop: ast.AST | None) -> Value:
        """``value``, unknown for an expression nested too deep to follow."""
        try:
            return self.value(node, loop)
        except RecursionError:
            return UNKNOWN

    def value(self, node: ast.expr, loop: ast.AST | None, visiting: frozenset = frozenset()) -> Value:
        """``node``'s value; ``varies`` is about ``loop`` (None: the kind only)."""
        if isinstance(node, ast.Constant):
            return Value(kind_of(node.value), constants=frozenset([node.value]))
        if isinstance(node, ast.UnaryOp) and isinstance(node.op, (ast.USub, ast.UAdd)):
            if isinstance(node.operand, ast.Constant) and kind_of(node.operand.value) in _NUMBERS:
                return self.value(ast.Constant(ast.literal_eval(node)), loop)
            inner = self.value(node.operand, loop, visiting)
            return Value(inner.kind if inner.kind in _NUMBERS else None, inner.varies, inner.names)
        if isinstance(node, ast.Name):
            return self._name(node.id, loop, visiting)
        if isinstance(node, ast.BinOp):
            left, right = self.value(node.left, loop, visiting), self.value(node.right, loop, visiting)
            return Value(_arithmetic(node.op, left.kind, right.kind), left.varies or right.varies,
                         left.names + right.names)
        if isinstance(node, ast.IfExp):
            test, body, other = (self.value(n, loop, visiting) for n in (node.test, node.body, node.orelse))
            constants = body.constants | other.constants if body.constants is not None \
                and other.constants is not None else None
            one_value = constants is not None and len(constants) == 1
            return Value(combine([body.kind, other.kind]),
                         body.varies or other.varies or (test.varies and not one_value),
                         test.names + body.names + other.names, constants)
        if isinstance(node, ast.Call):
            return self._call(node, loop, visiting)
        if isinstance(node, ast.Subscript):
            items = self.elements(node.value, None, visiting)
            index = self.value(node.slice, loop, visiting)
            if isinstance(items, Value) and items.kind is not None:
                several = items.constants is None or len(items.constants) > 1
                return Value(items.kind, index.varies and several, index.names)
        return UNKNOWN

    def _call(self, node: ast.Call, loop: ast.AST | None, visiting: frozenset) -> Value:
        arguments = [self.value(a, loop, visiting) for a in node.args if not isinstance(a, ast.Starred)]
        varies = any(a.varies for a in arguments)
        names = tuple(n for a in arguments for n in a.names)
        name = node.func.id if isinstance(node.func, ast.Name) else None
        functions = self.index.call_names(node)
        if name == "float" or functions & _NUMPY_FLOATS or any(
                f.startswith("math.") and f[5:] in _MATH_FLOAT for f in functions):
            kind = "float" if all(a.kind in (*_NUMBERS, None) for a in arguments) else None
            return Value(kind, varies, names)
        if name in ("abs", "min", "max") and arguments and not node.keywords:
            return Value(combine([a.kind for a in arguments]), varies, names)
        if name == "round" and len(arguments) == 2 and arguments[0].kind == "float":
            return Value("float", varies, names)
        return Value(None, varies, names)

    # -- names ------------------------------------------------------------------------------

    def _name(self, name: str, loop: ast.AST | None, visiting: frozenset) -> Value:
        if name in visiting:  # ``lr = lr * 0.9``: carried from one iteration to the next
            return Value(None, True, (name,))
        inside = self.bindings(loop, name) if loop is not None else []
        if not inside:  # the same value on every iteration: only its kind matters
            if _is_parameter(self.scope, name):
                return UNKNOWN
            outside = self._outside(name)
            if not outside:
                return UNKNOWN
            found = [self._binding(b, None, visiting | {name}) for b in outside]
            constants = [v.constants for v in found]
            return Value(combine([v.kind for v in found]), constants=frozenset().union(*constants)
                         if all(c is not None for c in constants) else None)
        found = [self._binding(b, loop, visiting | {name}) for b in inside]
        constants = [v.constants for v in found]
        known = all(c is not None for c in constants)
        distinct = len(frozenset().union(*constants)) if known else 0
        return Value(combine([v.kind for v in found]),
                     any(v.varies for v in found) or distinct > 1,
                     (name,) + tuple(n for v in found for n in v.names),
                     frozenset().union(*constants) if known else None)

    def _outside(self, name: str) -> list[tuple]:
        """The bindings of ``name`` in the scope, else (for a module-level def) in the module; a
        nested def's free names may come from an enclosing def: not followed."""
        found = self.bindings(self.scope, name)
        if not found and any(self.scope is statement for statement in self.tree.body):
            found = self.bindings(self.tree, name)
        return found

    def _binding(self, binding: tuple, loop: ast.AST | None, visiting: frozenset) -> Value:
        how = binding[0]
        if how == "value":
            return self.value(binding[1], loop, visiting)
        if how == "augmented":
            _, op, operand, name = binding
            right = self.value(operand, loop, visiting)
            start = [self._binding(b, None, visiting) for b in self.bindings(self.scope, name)
                     if b[0] != "augmented"]
            kind = _arithmetic(op, combine([v.kind for v in start]) if start else None, right.kind)
            return Value(kind, True, right.names)
        if how == "element":
            _, iterable, path = binding
            items = self.elements(iterable, None, visiting)
            for index in path:
                items = items[index] if isinstance(items, list) and index < len(items) else UNKNOWN
            if not isinstance(items, Value):
                return Value(None, True)
            single = items.constants is not None and len(items.constants) <= 1
            return Value(items.kind, not single, (), items.constants)
        return Value(None, True)

    def elements(self, node: ast.expr, loop: ast.AST | None, visiting: frozenset) -> Value | list:
        """What iterating ``node`` gives: a Value, or a list of them for tuples (enumerate, zip)."""
        if isinstance(node, (ast.List, ast.Tuple, ast.Set)):
            items = [self.value(e, loop, visiting) if not isinstance(e, ast.Tuple) else None for e in node.elts]
            if all(isinstance(e, ast.Tuple) and len(e.elts) == len(node.elts[0].elts) for e in node.elts) \
                    and node.elts:
                columns = zip(*(e.elts for e in node.elts))  # type: ignore[attr-defined]
                return [self.elements(ast.List(list(column)), loop, visiting) for column in columns]
            if not node.elts or any(i is None or isinstance(e, ast.Starred) for i, e in zip(items, node.elts)):
                return UNKNOWN
            constants = [i.constants for i in items]
            return Value(combine([i.kind for i in items]), constants=frozenset().union(*constants)
                         if all(c is not None for c in constants) else None)
        if isinstance(node, ast.Name):
            outside = [] if _is_parameter(self.scope, node.id) else self._outside(node.id)
            if len(outside) == 1 and outside[0][0] == "value" and node.id not in visiting:
                return self.elements(outside[0][1], None, visiting | {node.id})
            return UNKNOWN
        if not isinstance(node, ast.Call):
            return UNKNOWN
        name = node.func.id if isinstance(node.func, ast.Name) else None
        functions = self.index.call_names(node)
        if name == "range":
            return Value("int")
        if name == "enumerate" and node.args:
            return [Value("int"), self.elements(node.args[0], loop, visiting)]
        if name == "zip" and node.args and not any(isinstance(a, ast.Starred) for a in node.args):
            return [self.elements(a, loop, visiting) for a in node.args]
        if name in ("reversed", "sorted", "list", "tuple") and len(node.args) == 1:
            return self.elements(node.args[0], loop, visiting)
        if functions & _NUMPY_FLOAT_RANGES:
            return Value("float")
        if "numpy.arange" in functions:
            kinds = [self.value(a, None, visiting).kind for a in node.args]
            return Value("float" if "float" in kinds else None)
        return UNKNOWN

    def bindings(self, region: ast.AST, name: str) -> list[tuple]:
        """How ``region`` (a loop, a def, the module) binds ``name``, nested scopes excluded:
        ("value", expr) | ("augmented", op, expr, name) | ("element", iterable, path) | ("other",)."""
        found: list[tuple] = []
        if isinstance(region, _COMPREHENSIONS):
            for generator in region.generators:
                found += _targets(generator.target, generator.iter, name)
            return found
        nodes = _walk_scope(region) if not isinstance(region, _SCOPES) else (
            n for statement in _body(region) for n in _walk_scope(statement))
        for node in nodes:
            if isinstance(node, ast.Assign):
                for target in node.targets:
                    found += _assigned(target, node.value, name)
            elif isinstance(node, (ast.AnnAssign, ast.NamedExpr)) and isinstance(node.target, ast.Name) \
                    and node.target.id == name and node.value is not None:
                found.append(("value", node.value))
            elif isinstance(node, ast.AugAssign) and isinstance(node.target, ast.Name) and node.target.id == name:
                found.append(("augmented", node.op, node.value, name))
            elif isinstance(node, (ast.For, ast.AsyncFor)):
                found += _targets(node.target, node.iter, name)
            elif isinstance(node, _COMPREHENSIONS) or node is region:
                continue  # comprehension variables do not leak
            elif _binds_otherwise(node, name):
                found.append(("other",))
        return found


def _arithmetic(op: ast.operator, left: str | None, right: str | None) -> str | None:
    """The kind of ``left op right``: float when a float (or ``/``) is involved and nothing says
    an operand is not a number; an unknown operand may also be an array (then jit raises)."""
    kinds = {left, right}
    if "other" in kinds:
        return "other"
    if isinstance(op, ast.Div) and kinds & set(_NUMBERS):
        return "float"
    if "float" in kinds and isinstance(op, (ast.Add, ast.Sub, ast.Mult, ast.Pow, ast.FloorDiv, ast.Mod)):
        return "float"
    if kinds <= {"int", "bool"} and not isinstance(op, (ast.Pow, ast.MatMult)):
        return "int"
    return None


def _body(scope: ast.AST) -> list[ast.AST]:
    if isinstance(scope, ast.Lambda):
        return [scope.body]
    return list(getattr(scope, "body", []))


def _is_parameter(scope: ast.AST, name: str) -> bool:
    if not isinstance(scope, (ast.FunctionDef, ast.AsyncFunctionDef, ast.Lambda)):
        return False
    a = scope.args
    return name in {p.arg for p in (*a.posonlyargs, *a.args, *a.kwonlyargs, a.vararg, a.kwarg) if p}


def _assigned(target: ast.expr, value: ast.expr, name: str) -> list[tuple]:
    if isinstance(target, ast.Name):
        return [("value", value)] if target.id == name else []
    if isinstance(target, (ast.Tuple, ast.List)):
        if isinstance(value, (ast.Tuple, ast.List)) and len(value.elts) == len(target.elts) \
                and not any(isinstance(e, ast.Starred) for e in (*target.elts, *value.elts)):
            return [b for t, v in zip(target.elts, value.elts) for b in _assigned(t, v, name)]
        if any(isinstance(n, ast.Name) and n.id == name for n in ast.walk(target)):
            return [("other",)]
    return []


def _targets(target: ast.expr, iterable: ast.expr, name: str, path: tuple = ()) -> list[tuple]:
    """A for target binding ``name``: which part of each element it takes (``path``)."""
    if isinstance(target, ast.Name):
        return [("element", iterable, path)] if target.id == name else []
    if isinstance(target, (ast.Tuple, ast.List)) and not any(isinstance(e, ast.Starred) for e in target.elts):
        return [b for i, t in enumerate(target.elts) for b in _targets(t, iterable, name, path + (i,))]
    if any(isinstance(n, ast.Name) and n.id == name for n in ast.walk(target)):
        return [("other",)]
    return []


def _binds_otherwise(node: ast.AST, name: str) -> bool:
    """Any other binding (with ... as, except ... as, import, def, global, del, match)."""
    if isinstance(node, ast.Name):
        return node.id == name and isinstance(node.ctx, ast.Del)
    if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef, ast.ExceptHandler,
                         ast.MatchAs, ast.MatchStar)):
        return node.name == name
    if isinstance(node, ast.alias):
        return (node.asname or node.name.partition(".")[0]) == name
    if isinstance(node, ast.withitem):
        return node.optional_vars is not None and any(
            isinstance(n, ast.Name) and n.id == name for n in ast.walk(node.optional_vars))
    return isinstance(node, (ast.Global, ast.Nonlocal)) and name in node.names
