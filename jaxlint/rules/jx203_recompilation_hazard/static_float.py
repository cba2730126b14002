"""JX203's second half: a static argument of a jitted function fed float values that change.

jit keys its cache on the values of static arguments, so every distinct float passed for a
``static_argnums``/``static_argnames`` parameter traces and compiles the function again (measured:
20 learning rates, 20 compiles; the same Python floats as a traced argument, 1). The jitted
functions and their static parameters are JX204's (module-level ``@jax.jit(static_...)``,
``partial(jax.jit, ...)`` and ``g = jax.jit(f, static_...)``). Reported:

- at a call in a loop, a static argument whose float value changes between iterations (a float
  computed from the loop variable, a float loop variable, a float updated in the loop);
- at the first of several calls, different float constants at several call sites, and at the
  function, several float values ``jaxlint record`` saw the tests pass: only when jaxlint verified
  (jx203_static_trace) that the value is a plain operand, since a static float that selects
  between a few code paths is what static arguments are for.

Calls inside jitted code are not reported: they are traced into the caller's program. The result
depends only on the source, the signatures file (the run's, from the rule context) and the imported
module, so every target of the file reports the same findings and jaxlint.engine.check keeps one.
"""
from __future__ import annotations

import ast
import functools
import os
from typing import Any

from jaxlint.fixes.ast_spans import node_span, parse
from jaxlint.model import Span, Target
from jaxlint.rules.jx203_recompilation_hazard import (
    _COMPREHENSIONS,
    _is_jit_decorator,
    _keyword,
    _loops,
    import_aliases,
    qualified,
)
from jaxlint.rules.jx203_recompilation_hazard.float_values import Evaluator
from jaxlint.rules.jx204_non_hashable_static_arg import (
    _bound_once,
    _jitted,
    _shadowed,
    static_arguments,
)


def problems(path: str, source: str, config: dict[str, Any] | None = None) -> list[tuple[str, Span]]:
    """(message, span) of every static-float problem in the file; ``config``: the run's
    configuration (``RuleContext.config``), whose root and signatures file are used when given."""
    if "static_arg" not in source:
        return []  # no static arguments declared anywhere
    return _problems(path, source, *_signatures_stamp(path, config or {}))


@functools.lru_cache(maxsize=8)
def _problems(path: str, source: str, file: str, root: str,
              stamp: tuple[int, int] | None) -> list[tuple[str, Span]]:
    from jaxlint.rules.jx203_recompilation_hazard.static_trace import verify

    parsed = parse(source)
    jitted = _jitted(path, source)
    tree = next((p for p in parsed.parents.values() if isinstance(p, ast.Module)), None) if parsed else None
    if tree is None or not jitted:
        return []
    jitted = {name: t for name, t in jitted.items() if _bound_once(tree, name, t)}
    config = {"root": root, "signatures": file}
    aliases = import_aliases(tree)
    calls = sorted((n for n in ast.walk(tree) if isinstance(n, ast.Call) and isinstance(n.func, ast.Name)
                    and n.func.id in jitted and not _shadowed(n.func, parsed.parents)),
                   key=lambda n: (n.lineno, n.col_offset))
    found: list[tuple[str, Span]] = []
    reported: set[tuple[str, str]] = set()  # (function, parameter): one problem, one finding
    constants: dict[tuple[str, str], list[tuple[float, ast.Call]]] = {}
    traced = _traced_defs(tree, aliases)
    verdicts_of: dict[tuple, tuple[str, str]] = {}

    def verified(target: Target, key: str, samples: tuple) -> tuple[str, str]:
        """verify(), once per function, parameter and values: it traces the function."""
        if (target.qualname, key, samples) not in verdicts_of:
            verdicts_of[target.qualname, key, samples] = verify(path, target, key, samples, config)
        return verdicts_of[target.qualname, key, samples]

    for call in calls:
        loops, _, scope = _loops(call, parsed.parents)
        if any(d in traced for d in _enclosing_defs(call, parsed.parents)):
            continue  # traced into a jitted caller: compiled with it, once
        target, evaluator = jitted[call.func.id], Evaluator(tree, scope or tree, aliases)
        changing, verdicts = [], []
        for key, label, argument in static_arguments(call, target):
            for loop in loops:
                value = evaluator.safe_value(argument, loop)
                if value.kind == "float" and value.varies:
                    verdict = verified(target, key, tuple(sorted(value.constants or ())))
                    # A few known values (a literal list, ``a if c else b``) may pick code paths,
                    # which is what static arguments are for: reported only when verified otherwise.
                    if value.constants is None or verdict[0] == "operand":
                        changing.append((key, label, loop, value.names))
                        verdicts.append(verdict)
                    break
            else:
                value = evaluator.safe_value(argument, None)
                if value.kind == "float" and value.constants and len(value.constants) == 1:
                    constants.setdefault((call.func.id, key), []).append((next(iter(value.constants)), call))
        if changing:
            reported.update((call.func.id, key) for key, *_ in changing)
            found.append((_loop_message(call.func.id, target, changing, verdicts), node_span(source, call)))
    for (name, key), sites in constants.items():
        values = list(dict.fromkeys(value for value, _ in sites))
        if len(values) < 2 or (name, key) in reported:
            continue
        verdict = verified(jitted[name], key, tuple(values))
        if verdict[0] != "operand":
            continue  # a few values that may pick code paths: what static arguments are for
        reported.add((name, key))
        first = sites[0][1]
        lines = {v: sorted({c.lineno for value, c in sites if value == v and c is not first}) for v in values}
        where = ", ".join(f"{v!r} at line{'s' * (len(lines[v]) > 1)} {', '.join(map(str, lines[v]))}"
                          for v in values[1:])
        found.append((f"{_declared(name, jitted[name])}, and {_label(first, jitted[name], key)} gets "
                      f"{len(values)} different float constants in this file ({values[0]!r} here, "
                      f"{where}): jit compiles `{name}` once per distinct static value. "
                      + _advice(key, jitted[name]) + verdict[1], node_span(source, first)))
    for name, key, values in _recorded(path, jitted, file, root, stamp):
        if (name, key) in reported:
            continue
        verdict = verified(jitted[name], key, values)
        if verdict[0] == "operand":
            reported.add((name, key))
            found.append((f"{_declared(name, jitted[name])}, and `jaxlint record` saw the tests pass "
                          f"{len(values)} different floats for its static argument `{key}` "
                          f"({', '.join(map(repr, values))}): jit compiles `{name}` once per distinct "
                          "static value. " + _advice(key, jitted[name]) + verdict[1], jitted[name].name_span))
    return found


def _traced_defs(tree: ast.Module, aliases: dict[str, str]) -> set[ast.AST]:
    """Defs that run under a trace: jitted ones (decorated, or wrapped by ``jax.jit(name)``) and the
    module-level defs they call by name, transitively."""
    wrapped = {call.args[0].id for call in ast.walk(tree) if isinstance(call, ast.Call) and call.args
               and isinstance(call.args[0], ast.Name) and qualified(call.func, aliases) == "jax.jit"}
    defs = [n for n in ast.walk(tree) if isinstance(n, (ast.FunctionDef, ast.AsyncFunctionDef))]
    traced = {d for d in defs if d.name in wrapped or any(_is_jit_decorator(x, aliases) for x in d.decorator_list)}
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


def _enclosing_defs(node: ast.AST, parents: dict) -> list[ast.AST]:
    found = []
    while node is not None:
        if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef)):
            found.append(node)
        node = parents.get(node)
    return found


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
    loop = changing[0][2]
    where = "comprehension" if isinstance(loop, _COMPREHENSIONS) else f"`{_keyword(loop)}` loop"
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


def _signatures_stamp(path: str, config: dict[str, Any]) -> tuple[str, str, tuple[int, int] | None]:
    """(signatures file, config root, its (mtime, size)): the run's (``--config`` followed), else,
    without a run configuration (jaxlint.api), where jaxlint check would find them when ``path`` is
    the first path given: the nearest configuration file's folder, else the cwd."""
    if config.get("signatures") and config.get("root"):
        root, file = config["root"], config["signatures"]
    else:
        root = _nearest_root(path)
        file = os.path.join(root, ".jaxlint", "signatures.json")
    try:
        info = os.stat(file)
    except OSError:
        return file, root, None
    return file, root, (info.st_mtime_ns, info.st_size)


def _nearest_root(path: str) -> str:
    from jaxlint.config import find_config_file

    try:
        found = find_config_file(path)
    except Exception:  # an unreadable configuration file: the run itself reports it
        found = None
    return os.path.dirname(found) if found else os.getcwd()


def _recorded(path: str, jitted: dict[str, Target], file: str, root: str,
              stamp: tuple[int, int] | None) -> list[tuple[str, str, tuple[float, ...]]]:
    """((function, parameter, distinct floats), ...) for static parameters recorded with two or more."""
    from jaxlint.scan import hints
    from jaxlint.worker import signatures

    if stamp is None:
        return []
    try:
        functions = signatures.load(file)
    except signatures.SignaturesError:
        return []  # the recorded argument source reports it
    found = []
    for name, target in jitted.items():
        entry = functions.get(signatures.function_key(path, root, target.qualname))
        if entry is None or entry["params"] != target.params:
            continue
        static = [p for i, p in enumerate(target.params) if i in target.static_argnums
                  or i - len(target.params) in target.static_argnums or p in target.static_argnames]
        for param in static:
            values = []
            for recorded in entry["signatures"]:
                try:
                    spec = hints.parse_hint(f"{param}={recorded[param]}")[param]
                except (KeyError, hints.HintError):
                    continue
                value = getattr(spec, "value", None)
                if type(value) is float and value not in values:
                    values.append(value)
            if len(values) > 1:
                found.append((name, param, tuple(values)))
    return found
