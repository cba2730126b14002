"""The hint comment --show-untraced suggests for a function that was not traced, or why no hint
can help. Each parameter's value comes from its annotation, else from how the body uses it
(report/parameter_use.py) or what the file's calls pass it (report/call_sites.py), else from its
name; a parameter nothing speaks for is ``<unknown>`` rather than a guessed array, and no value
contradicts the trace error beside it (an error asking for integer indices makes no float array).
Never imports JAX.
"""
from __future__ import annotations

import ast
import functools
import re

from jaxlint.model import Target
from jaxlint.report.call_sites import call_site_uses
from jaxlint.report.parameter_use import ParameterUse, module_defs, parameter_uses
from jaxlint.scan import hints
from jaxlint.scan.functions import FUNCTION_PARAMETER, KEY_PARAMETER
from jaxlint.scan.index import SourceIndex, first_line

# Trace errors that mean a parameter was needed as a Python value, not an array.
_STATIC_ERRORS = ("ConcretizationTypeError", "TracerBoolConversionError", "TracerIntegerConversionError",
                  "TracerArrayConversionError")
_VALUES = {"bool": "False", "int": "1", "float": "f32[]", "scalar": "f32[]", "key": "key[]", "array": "f32[...]",
           "indices": "i32[...]"}
ARRAY = "f32[...]"
# A trace error saying a value had to be integers (inferred arguments are float arrays).
_INTEGER_ERROR = re.compile(r"indices must be (?:of )?integer|must be (?:of )?(?:an )?integer (?:type|dtype)")
# The names of iterators: a sequence-like parameter so named is taken for one (`for x, y in batch_iter`).
ITERATOR_PARAMETER = re.compile(r"\w*(?:_iter|_iterator|iterator|_loader|loader|_stream|_generator|_gen)|"
                                r"(?:iter|gen)_\w+")


def suggestion(target: Target | None, kind: str, reason: str, text: str = "") -> tuple[str | None, str | None]:
    """(hint comment, note) for an untraced target; the hint is a template whose placeholders
    (``f32[...]``, ``<static>``, ``<unknown>``, ``<pytree>``) are to be replaced by real values.
    ``text``: the file's source, whose def fits each value to its parameter (literals for ints and
    bools, ``key[]`` for keys, ``i32[...]`` for indices, ``f32[]`` for float scalars, dicts, tuples
    and lists for pytrees read that way, nothing for a parameter with a default; no hint at all
    when one takes a function or an iterator); without it every value is ``<unknown>``.
    ``reason``: the trace error, which the values must not contradict."""
    if kind in _NO_HINT:
        return None, _NO_HINT[kind]
    if target is None:
        return None, None
    if target.kind == "closure":  # a hint above a nested def names no function (JX905)
        return None, ("a hint cannot reach a closure: register a call of what its factory returns in an examples "
                      "file (docs/arguments.md), or run `pytest --jaxlint`")
    params = list(target.params)
    if "." in target.qualname and params[:1] == ["self"] and target.name in ("__init__", "__post_init__",
                                                                              "__check_init__"):
        return None, (f"a hint cannot give `self`: make a {target.qualname.rpartition('.')[0]}(...) once while "
                      "the module is imported, or register one in an examples file")
    if "." in target.qualname and params[:1] == ["self"]:
        # The hint's values are passed to the function found on the class: there is no instance.
        return None, (f"a hint cannot give `self`: call {target.qualname.rpartition('.')[0]}(...)."
                      f"{target.name}(...) once while the module is imported, or register an instance "
                      "in an examples file")
    if "." in target.qualname and params[:1] == ["cls"]:
        params = params[1:]  # a classmethod is found bound to its class
    if not params:
        if target.kind == "jit-bound":
            return None, "the wrapped function's parameters are unknown (it is not defined in this file)"
        return "# jaxlint: args", None
    static = {name for index, name in enumerate(target.params)
              if index in target.static_argnums or name in target.static_argnames}
    given = _given(target)  # keep what an existing hint already says
    uses = parameter_kinds(text, target) if text else {}
    kinds = {name: use.kind for name, use in uses.items()}
    unwritable = _unwritable([name for name in params if name not in given], kinds)
    if unwritable:
        return None, unwritable
    params = [name for name in params if name in given or kinds.get(name) != "default"]
    integers = bool(_INTEGER_ERROR.search(reason)) and "indices" not in kinds.values()
    if integers:  # the error wants integers somewhere and no parameter is known to hold them
        uses = {name: ParameterUse("unknown dtype") if use.kind == "array" else use for name, use in uses.items()}
    parts = [f"{name}={given.get(name) or _value(uses.get(name), name in static)}" for name in params]
    notes = _notes(kind, reason, params, static, given, uses, integers)
    return " ".join(["# jaxlint: args", *([", ".join(parts)] if parts else [])]), "; ".join(notes) or None


def _notes(kind: str, reason: str, params: list[str], static: set[str], given: dict[str, str],
           uses: dict[str, ParameterUse], integers: bool) -> list[str]:
    """What the user must fill in or know beside the hint's values."""
    notes = []
    if integers:
        notes.append("the trace error says integers were needed where a float array was given: give the "
                     "parameter that holds indices an integer dtype (i32[...])")
    names = [name for name in params if name in static and name not in given]
    if names:
        notes.append(f"{', '.join(names)} {'is' if len(names) == 1 else 'are'} static (static_argnums/"
                     f"static_argnames): write the Python value, e.g. {names[0]}=3")
    notes += _placeholder_notes([(name, uses[name]) for name in params
                                 if name in uses and name not in given and name not in static])
    if kind == "trace-error" and any(error in reason for error in _STATIC_ERRORS):
        notes.append("a traced value was used as a Python value (`if n > 0`, `range(n)`): that parameter "
                      "must be static: give it a Python value in the hint and, under jax.jit, list it in "
                      "static_argnums/static_argnames")
    return notes


# Why no hint can help, for the kinds of skip whose cause is not the arguments.
_NO_HINT = {
    "import-failed": "the module failed to import (see the JX901 finding); fix that first",
    "dependency-missing": ("the module imports a package not installed where jaxlint runs: install it there "
                           "(the environment the tests run in) to lint these functions"),
    "timeout": "the module did not finish importing (see the JX902/JX903 finding)",
    "crash": "the module did not finish importing (see the JX902/JX903 finding)",
    "runaway": ("a trace with jaxlint's guessed arguments ran away in code no time limit interrupts (a loop "
                "in C over the guessed sizes): a hint or an example with the real, smaller sizes traces it"),
    "not-found": ("the name was not on the module after import (defined conditionally, "
                  "deleted, or renamed by a decorator such as parameterized tests?)"),
    "not-traceable": "it returns functions or objects: trace a function that calls what it makes",
    "factory-failed": ("the factory that returns it could not be called with plain values: register a call of "
                       "what it returns in an examples file (docs/arguments.md), or run `pytest --jaxlint`"),
}


def _unwritable(params: list[str], kinds: dict[str, str]) -> str | None:
    """Why no hint helps when a parameter takes a function or an iterator."""
    functions = [name for name in params if kinds.get(name) == "function"]
    if functions:
        return (f"{', '.join(functions)} {'takes' if len(functions) == 1 else 'take'} a function, which a "
                "hint cannot write: register a call in an examples file, or run `pytest --jaxlint`")
    iterators = [name for name in params if kinds.get(name) == "iterator"]
    if iterators:
        return (f"{', '.join(iterators)} {'is an iterator' if len(iterators) == 1 else 'are iterators'} "
                "(a generator, or read with next() or a for loop), which a hint cannot write: it needs an "
                "examples file that passes a real one (docs/arguments.md), or run `pytest --jaxlint`")
    return None


def _value(use: ParameterUse | None, static: bool) -> str:
    """The suggested value of one parameter; ``<unknown>`` when nothing says what it holds."""
    if use is None or use.kind in ("unknown", "unknown dtype"):
        return "<static>" if static else "<unknown>"
    if use.kind == "pytree":
        if use.keys:
            return _dict(use.keys)
        if use.unpacked:
            return "(" + ", ".join([ARRAY] * use.unpacked) + ("," if use.unpacked == 1 else "") + ")"
        return "<pytree>"
    if use.kind == "sequence":
        element = ARRAY
        if use.element_keys:
            element = _dict(use.element_keys)
        elif use.element_unpacked > 1:
            element = "(" + ", ".join([ARRAY] * use.element_unpacked) + ")"
        return f"[{element}, ...]"
    if static and use.kind in ("array", "indices"):
        return "<static>"
    return _VALUES.get(use.kind, ARRAY)


def _dict(keys: list[str]) -> str:
    return "{" + ", ".join(f"{key!r}: {ARRAY}" for key in keys) + "}"


def _placeholder_notes(uses: list[tuple[str, ParameterUse]]) -> list[str]:
    """What to write for the ``<pytree>`` and ``<unknown>`` placeholders."""
    notes = []
    objects = [(name, use) for name, use in uses if use.kind == "pytree" and not (use.keys or use.unpacked)]
    if objects:
        how = ", ".join(f"{name}.{use.attributes[0]}" if use.attributes else f"{name} through jax.tree"
                        for name, use in objects)
        names = ", ".join(name for name, _ in objects)
        notes.append(f"{names} {'is a pytree' if len(objects) == 1 else 'are pytrees'} whose structure a hint "
                     f"cannot write (read as {how}): register a call in an examples file (docs/arguments.md), "
                     "or run `pytest --jaxlint`")
    sequences = [name for name, use in uses if use.kind == "sequence"]
    if sequences:
        notes.append(f"{', '.join(sequences)} {'is' if len(sequences) == 1 else 'are'} iterated or indexed: write "
                     "a list with one element per item (`...` stands for the rest); an iterator or generator "
                     "needs an examples file (docs/arguments.md)")
    unknown = [name for name, use in uses if use.kind == "unknown"]
    if unknown:
        notes.append(f"nothing in the function says what {', '.join(unknown)} "
                     f"{'holds' if len(unknown) == 1 else 'hold'}: write the dtype and shape "
                     "(f32[8,3]), a Python value, or a pytree of these")
    return notes


def parameter_kinds(text: str, target: Target) -> dict[str, ParameterUse]:
    """Per parameter of the target's def: kind "default" (it has one), "bool", "int", "float",
    "key", "function", "iterator" (by annotation), else how the body uses it
    (report/parameter_use.py) or, where that says no more than an array or a sequence, what the
    file's calls pass it (report/call_sites.py), else "key" or "function" by name, else "unknown".
    A sequence whose name is an iterator's (``batch_iter``) is taken for an iterator. Empty when
    the def is not in ``text``."""
    index = _index(text)
    node = _definition(index, target)
    if node is None:
        return {}
    args = node.args
    positional = [*args.posonlyargs, *args.args]
    defaults = {a.arg for a in positional[len(positional) - len(args.defaults):]} | {
        a.arg for a, d in zip(args.kwonlyargs, args.kw_defaults) if d is not None}
    used, passed = parameter_uses(index, node), call_site_uses(index, node)
    kinds = {}
    for arg in [*positional, *args.kwonlyargs]:
        annotation = ast.unparse(arg.annotation) if arg.annotation is not None else ""
        if arg.arg in defaults:
            kinds[arg.arg] = ParameterUse("default")
        elif annotation in ("bool", "int", "float"):
            kinds[arg.arg] = ParameterUse(annotation)
        elif "Callable" in annotation:
            kinds[arg.arg] = ParameterUse("function")
        elif any(word in annotation for word in ("Iterator", "Iterable", "Generator")):
            kinds[arg.arg] = ParameterUse("iterator")
        elif annotation.startswith(("Key[", "PRNGKeyArray")):
            kinds[arg.arg] = ParameterUse("key")
        elif annotation:
            kinds[arg.arg] = ParameterUse("array")
        elif arg.arg in used or arg.arg in passed:
            use = used.get(arg.arg)
            if arg.arg in passed and (use is None or use.kind in ("array", "sequence")):
                use = passed[arg.arg]
            if use.kind == "sequence" and ITERATOR_PARAMETER.fullmatch(arg.arg):
                use = ParameterUse("iterator")
            kinds[arg.arg] = use
        elif FUNCTION_PARAMETER.fullmatch(arg.arg):
            kinds[arg.arg] = ParameterUse("function")
        elif KEY_PARAMETER.fullmatch(arg.arg):
            kinds[arg.arg] = ParameterUse("key")
        else:
            kinds[arg.arg] = ParameterUse("unknown")
    return kinds


@functools.lru_cache(maxsize=4)
def _index(text: str) -> SourceIndex:
    """One parse and one name resolution per file, however many of its functions are untraced."""
    return SourceIndex("<suggestion>", text, [])


def _definition(index: SourceIndex, target: Target) -> ast.FunctionDef | ast.AsyncFunctionDef | None:
    """The target's def: at its first line, or for ``g = jax.jit(f)`` the module-level ``f``."""
    defs = index.memo("suggestion-defs", lambda: {(first_line(n), n.name): n for n in index.functions})
    if target.kind == "jit-bound":
        return module_defs(index).get(target.name)
    return defs.get((target.first_line, target.name))


def _given(target: Target) -> dict[str, str]:
    """``value`` per parameter of the target's hint comment, if it has one that parses."""
    try:
        spec = hints.parse_hint(target.hint) if target.hint is not None else {}
    except hints.HintError:
        return {}
    return {name: hints.describe({name: tree}).partition("=")[2] for name, tree in spec.items()}
