"""JX203's second half: a static argument of a jitted function fed float values that change.

jit keys its cache on the values of static arguments, so every distinct float passed for a
``static_argnums``/``static_argnames`` parameter traces and compiles the function again (measured:
20 learning rates, 20 compiles; the same Python floats as a traced argument, 1). The jitted
functions and their static parameters are the source index's ``jitted_with_static`` (module-level
``@jax.jit(static_...)``, ``partial(jax.jit, ...)`` and ``g = jax.jit(f, static_...)``; JX204 reads
the same). Reported:

- at a call in a loop, a static argument whose float value changes between iterations (a float
  computed from the loop variable, a float loop variable, a float updated in the loop);
- at the first of several calls, different float constants at several call sites, and at the
  function, several float values ``jaxlint record`` saw the tests pass: only when jaxlint verified
  (static_trace.py, through the retrace service) that the value is a plain operand, since a
  static float that selects between a few code paths is what static arguments are for.

Calls inside jitted code are not reported: they are traced into the caller's program.
"""
from __future__ import annotations

import ast

from jaxlint.model import Span, Target
from jaxlint.rules.base import SourceContext
from jaxlint.rules.jx203_recompilation_hazard.float_values import Evaluator
from jaxlint.rules.jx203_recompilation_hazard.loops import loop_kind
from jaxlint.rules.jx203_recompilation_hazard.static_trace import verify
from jaxlint.scan import hints
from jaxlint.scan.index import SourceIndex, static_arguments


def problems(ctx: SourceContext) -> list[tuple[str, Span]]:
    """(message, span) of every static-float problem in the file: a float static argument that
    changes in a loop, then several float constants passed in the file, then floats the tests
    passed (``jaxlint record``); one finding per function and parameter."""
    index, source = ctx.index, ctx.source
    if "static_arg" not in source or index.tree is None:
        return []  # no static arguments declared anywhere
    if not index.jitted_with_static:
        return []
    search = _Search(ctx)
    search.in_loops()
    search.constants_in_file()
    search.recorded()
    return search.found


class _Search:
    """One file's search: the jitted functions with static arguments, each verdict once (verify
    traces the function), what was reported, and the constants seen outside loops."""

    def __init__(self, ctx: SourceContext) -> None:
        self.ctx, self.index = ctx, ctx.index
        self.jitted = ctx.index.jitted_with_static
        self.found: list[tuple[str, Span]] = []
        self.reported: set[tuple[str, str]] = set()  # (function, parameter): one problem, one finding
        self.constants: dict[tuple[str, str], list[tuple[float, ast.Call]]] = {}
        self._verdicts: dict[tuple, tuple[str, str]] = {}

    def verified(self, target: Target, key: str, samples: tuple) -> tuple[str, str]:
        """verify(), once per function, parameter and values: it traces the function."""
        if (target.qualname, key, samples) not in self._verdicts:
            self._verdicts[target.qualname, key, samples] = verify(self.ctx.retrace, target, key, samples)
        return self._verdicts[target.qualname, key, samples]

    def in_loops(self) -> None:
        """Calls whose float static argument changes with a loop around them; the constants passed
        outside loops are kept for ``constants_in_file``."""
        index, traced = self.index, _traced_defs(self.index)
        calls = [n for n in index.calls if isinstance(n.func, ast.Name) and n.func.id in self.jitted
                 and not index.shadowed(n.func)]
        for call in calls:
            loops, _, scope = index.loops_around(call)
            if any(d in traced for d in index.enclosing_defs(call)):
                continue  # traced into a jitted caller: compiled with it, once
            target, evaluator = self.jitted[call.func.id], Evaluator(index, scope or index.tree)
            changing, verdicts = [], []
            for key, label, argument in static_arguments(call, target):
                for loop in loops:
                    value = evaluator.safe_value(argument, loop)
                    if value.kind == "float" and value.varies:
                        verdict = self.verified(target, key, tuple(sorted(value.constants or ())))
                        # A few known values (a literal list, ``a if c else b``) may pick code paths,
                        # which is what static arguments are for: reported only when verified otherwise.
                        if value.constants is None or verdict[0] == "operand":
                            changing.append((key, label, loop, value.names))
                            verdicts.append(verdict)
                        break
                else:
                    value = evaluator.safe_value(argument, None)
                    if value.kind == "float" and value.constants and len(value.constants) == 1:
                        self.constants.setdefault((call.func.id, key), []).append((next(iter(value.constants)), call))
            if changing:
                self.reported.update((call.func.id, key) for key, *_ in changing)
                self.found.append((_loop_message(call.func.id, target, changing, verdicts), index.span(call)))

    def constants_in_file(self) -> None:
        """A static argument passed several different float constants across the file."""
        for (name, key), sites in self.constants.items():
            values = list(dict.fromkeys(value for value, _ in sites))
            if len(values) < 2 or (name, key) in self.reported:
                continue
            target = self.jitted[name]
            verdict = self.verified(target, key, tuple(values))
            if verdict[0] != "operand":
                continue  # a few values that may pick code paths: what static arguments are for
            self.reported.add((name, key))
            first = sites[0][1]
            lines = {v: sorted({c.lineno for value, c in sites if value == v and c is not first}) for v in values}
            where = ", ".join(f"{v!r} at line{'s' * (len(lines[v]) > 1)} {', '.join(map(str, lines[v]))}"
                              for v in values[1:])
            self.found.append((f"{_declared(name, target)}, and {_label(first, target, key)} gets "
                               f"{len(values)} different float constants in this file ({values[0]!r} here, "
                               f"{where}): jit compiles `{name}` once per distinct static value. "
                               + _advice(key, target) + verdict[1], self.index.span(first)))

    def recorded(self) -> None:
        """Floats the tests passed for a static argument, as ``jaxlint record`` saw them."""
        for name, key, values in _recorded(self.ctx, self.jitted):
            if (name, key) in self.reported:
                continue
            target = self.jitted[name]
            verdict = self.verified(target, key, values)
            if verdict[0] == "operand":
                self.reported.add((name, key))
                self.found.append((f"{_declared(name, target)}, and `jaxlint record` saw the tests pass "
                                   f"{len(values)} different floats for its static argument `{key}` "
                                   f"({', '.join(map(repr, values))}): jit compiles `{name}` once per distinct "
                                   "static value. " + _advice(key, target) + verdict[1], target.name_span))


def _traced_defs(index: SourceIndex) -> set[ast.AST]:
    """Defs that run under a trace: jitted ones (decorated, or wrapped by ``jax.jit(name)``) and the
    module-level defs they call by name, transitively."""
    tree = index.tree
    assert tree is not None
    wrapped = {call.args[0].id for call in index.calls if call.args and isinstance(call.args[0], ast.Name)
               and "jax.jit" in index.call_names(call)}
    traced = {d for d in index.functions
              if d.name in wrapped or any(index.is_jit_decorator(x) for x in d.decorator_list)}
    module_level = {d.name: d for d in tree.body if isinstance(d, (ast.FunctionDef, ast.AsyncFunctionDef))}
    pending = list(traced)
    while pending:
        for node in ast.walk(pending.pop()):
            callee = module_level.get(node.func.id) \
                if isinstance(node, ast.Call) and isinstance(node.func, ast.Name) else None
            if callee is not None and callee not in traced:
                traced.add(callee)
                pending.append(callee)
    return traced


def _declared(name: str, target: Target) -> str:
    declared = ", ".join([f"static_argnums={target.static_argnums!r}"] * bool(target.static_argnums)
                         + [f"static_argnames={target.static_argnames!r}"] * bool(target.static_argnames))
    return f"`{name}` is jitted with {declared}"


def _label(call: ast.Call, target: Target, key: str) -> str:
    return "its static " + next(label for k, label, _ in static_arguments(call, target) if k == key)


def _advice(key: str, target: Target) -> str:
    option = "static_argnames" if key in target.static_argnames else "static_argnums"
    return (f"Make `{key}` a traced argument: remove it from {option}; jit then traces the Python floats "
            "passed for it as a weakly typed f32[] input (one compile for all values, the same dtype "
            "promotion as the constant).")


def _loop_message(name: str, target: Target, changing: list, verdicts: list[tuple[str, str]]) -> str:
    where = loop_kind(changing[0][2])
    names = list(dict.fromkeys(n for *_, found in changing for n in found))
    sources = f" (from {', '.join(f'`{n}`' for n in names)})" if names else ""
    labels = " and ".join(label for _, label, *_ in changing)
    gets = "gets a float that changes" if len(changing) == 1 else "get floats that change"
    message = (f"{_declared(name, target)}, and its static {labels} {gets} between iterations of this "
               f"{where}{sources}: jit keys its cache on static values, so `{name}` is traced and "
               "compiled again for every new value.")
    for (key, *_), verdict in zip(changing, verdicts):
        message += " " + _advice(key, target) + verdict[1]
    return message


# ---------------------------------------------------------------------------------------------
# Values ``jaxlint record`` saw: direct evidence of several compiles


def _recorded(ctx: SourceContext, jitted: dict[str, Target]) -> list[tuple[str, str, tuple[float, ...]]]:
    """((function, parameter, distinct floats), ...) for static parameters recorded with two or more."""
    if ctx.retrace is None:
        return []
    found = []
    for name, target in jitted.items():
        static = [p for i, p in enumerate(target.params) if i in target.static_argnums
                  or i - len(target.params) in target.static_argnums or p in target.static_argnames]
        recorded = ctx.retrace.recorded(target) if static else []
        for param in static:
            values = []
            for signature in recorded:
                try:
                    spec = hints.parse_hint(f"{param}={signature[param]}")[param]
                except (KeyError, hints.HintError):
                    continue
                value = getattr(spec, "value", None)
                if type(value) is float and value not in values:
                    values.append(value)
            if len(values) > 1:
                found.append((name, param, tuple(values)))
    return found
