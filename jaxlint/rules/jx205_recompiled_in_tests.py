"""JX205 recompiled-in-tests: one jitted function compiled ``min-compiles`` times or more within
one test (or one run of a program under ``jaxlint run``).

A run-time rule (``check_run``): it reads the compiles JAX reported while the test ran, each
with JAX's own explanation of what changed against the closest earlier call (an argument's
shape, dtype or weak type, a static argument's value, a new function object) and the project's
call that caused it (drivers/runtime.py). Compiles in different tests are not added up:
a test suite chooses shapes on purpose. Nor are compiles made by different runs of the project's
function that made the call (a test calling ``fori_collect`` with three thinnings, ``svi.run``
with several models): that is the test's choice too. What is counted is one run of the project's
code compiling again and again: a loop over batches, a lambda jitted in a loop, a carry fed back.
A call the test file makes itself is never counted.
"""
from __future__ import annotations

import os
import re
from typing import Iterable

from jaxlint.events import CacheMiss, CallPlace, Compile, Difference
from jaxlint.model import Finding, Option
from jaxlint.rules.base import Rule, RunContext

_TYPE = re.compile(r"^(?P<dtype>[a-z]+\d*)\[(?P<dims>[^\]]*)\](?P<rest>.*)$")
_POSITIONAL = re.compile(r"^\[0\]\[(\d+)\]")
_ANNOTATION = re.compile(r"\(\{[^{}]*\}\)$")  # the mesh's axis types after a sharded type
_DIM_COMMA = re.compile(r",(?![^()]*\))")  # between dimensions, not inside ``8@(data,model)``
_KEYWORD = re.compile(r"^\[1\]\[['\"](.+?)['\"]\]")

_PAD = "pad or bucket the varying axis to a few fixed sizes (masking the padding), so each size compiles once"
_DTYPE = "cast the argument to one dtype before the call"
_SHAPE = "give the argument one shape (pad, reshape) or a few, each compiled once"
_WEAK = ("cast the initial state to the dtype the function returns (`jnp.float32(0.0)`, "
         "`jnp.asarray(x, dtype)`), so the first call has the type of the later ones")
_HOIST = "hoist the `jax.jit` (and the function it wraps) out of the loop, so the same function object is called"
_STATIC = "make the argument an array (a traced argument, not static) when it takes many values"
_TREE = "pass arguments of the same structure on every call"
_CONTEXT = "set the configuration once, outside the loop"
_SHARDING = "place the argument on the same devices, with the same sharding, on every call"


class RecompiledInTests(Rule):
    code = "JX205"
    name = "recompiled-in-tests"
    summary = ("A jitted function compiled min-compiles times or more within one test (or one program run), "
               "each cause named from JAX's own explanation.")
    severity = "warning"
    options = {"min-compiles": Option(int, 3, "compiles of one jitted function within one test or one program run",
                                      minimum=2)}
    run_events = frozenset({"compiles"})

    @classmethod
    def check_run(cls, ctx: RunContext) -> Iterable[Finding]:
        least = ctx.option(cls, "min-compiles")
        # One jitted function, compiled by calls one run of one project function made.
        runs: dict[tuple[str, str, int], list[Compile]] = {}
        for compile_ in ctx.events.compiles:
            if compile_.place is not None:
                key = (compile_.miss.function, compile_.miss.defined_at, compile_.place.invocation)
                runs.setdefault(key, []).append(compile_)
        for (function, defined_at, _), compiles in runs.items():
            if len(compiles) < least:
                continue
            by_place: dict[tuple[str, tuple[int, int, int, int]], tuple[CallPlace, list[CacheMiss]]] = {}
            for compile_ in compiles[1:]:  # the first compile is no recompile
                place = compile_.place
                assert place is not None
                key = (place.path, (place.span.start_line, place.span.start_col, place.span.end_line,
                                    place.span.end_col))
                by_place.setdefault(key, (place, []))[1].append(compile_.miss)
            for place, misses in by_place.values():
                message = _message(function, defined_at, len(compiles), ctx.events.scope, place.function, misses)
                yield cls.finding(place.path, place.span, message)


def _message(function: str, defined_at: str, count: int, scope: str, caller: str, misses: list[CacheMiss]) -> str:
    path, _, line = defined_at.rpartition(":")
    defined = f"defined at {os.path.basename(path)}:{line}" if path else ""
    causes: dict[str, str] = {}  # what JAX says changed -> what removes it, first seen first
    sizes: dict[tuple[str, int], list[str]] = {}  # (argument, axis) -> the sizes it took
    layouts: dict[str, list[str]] = {}  # argument -> the shardings it took
    for miss in misses:
        if miss.unseen:
            causes[f"a new function object each time, made at the same line ({defined or _code(function)})"] = _HOIST
        for difference in miss.differences:
            _cause(difference, causes, sizes, layouts)
    for (name, axis), values in sizes.items():
        causes[f"axis {axis} of {name} took {len(values)} sizes ({', '.join(values)})"] = _PAD
    for name, values in layouts.items():  # one cause per argument, however many shardings it took
        causes[f"{name} came with {len(values)} shardings ({', '.join(values)})"] = _SHARDING
    run = "" if caller in ("<module>", "") else f"within one call of {_code(caller)}, "
    scope_text = run + ("in this program's run" if scope == "program" else f"in the test {scope}")
    explained = "; ".join(f"{what}: {remedy}" for what, remedy in causes.items()) or "JAX gave no explanation"
    named = f"{_code(function)} ({defined})" if defined else _code(function)
    return (f"{named} compiled {count} times {scope_text}; JAX's explanation of the "
            f"{len(misses)} recompile{'s' * (len(misses) != 1)} this call caused: {explained}. Each compile "
            "traces the function again and runs XLA's compiler, which costs far more than running it "
            "(milliseconds to seconds each).")


def _cause(difference: Difference, causes: dict[str, str], sizes: dict[tuple[str, int], list[str]],
           layouts: dict[str, list[str]]) -> None:
    name = _argument(difference.where)
    if difference.kind == "sharding":  # a compile JAX logged with no tracing-cache miss (Auto axes)
        taken = layouts.setdefault(name, [])
        taken += [layout for layout in (difference.before, difference.now) if layout not in taken]
    elif difference.kind == "type":
        before, now = _parsed(difference.before), _parsed(difference.now)
        if before is None or now is None:
            causes[f"the type of {name} changed ({difference.before} -> {difference.now})"] = _SHAPE
        elif before[0] != now[0]:
            causes[f"the dtype of {name} changed ({before[0]} -> {now[0]})"] = _DTYPE
        elif len(before[1]) != len(now[1]):
            causes[f"the shape of {name} changed ({difference.before} -> {difference.now})"] = _SHAPE
        elif before[1] != now[1]:
            for axis, (old, new) in enumerate(zip(before[1], now[1])):
                if old != new:  # JAX compares with the closest earlier call: the sizes, first seen first
                    taken = sizes.setdefault((name, axis), [])
                    taken += [size for size in (old, new) if size not in taken]
        elif before[2] != now[2]:
            flip = "weakly typed (a Python scalar) to a JAX array" if before[2] else "a JAX array to weakly typed"
            causes[f"{name} flipped from {flip}, {difference.before} -> {difference.now}"] = _WEAK
        else:  # JAX adds the sharding when that is what differs (Explicit axes: in the type)
            pair = (_unannotated(difference.before), _unannotated(difference.now))
            if pair[0] == pair[1]:  # only the mesh differs ({} -> {Auto: ...}): JAX's text as it is
                pair = (difference.before, difference.now)
            taken = layouts.setdefault(name, [])
            taken += [t for t in pair if t not in taken]
    elif difference.kind == "static":
        causes[f"the static {name} changed value ({difference.before} -> {difference.now})"] = _STATIC
    elif difference.kind == "tree":
        causes[f"the arguments' structure changed ({difference.text})"] = _TREE
    elif difference.kind == "context":
        what = (f"the JAX configuration {difference.where} changed ({difference.before} -> {difference.now})"
                if difference.where else "a JAX configuration or context manager changed")
        causes[what] = _CONTEXT
    else:
        causes["JAX gave no explanation (JAX 0.4.x does not explain a static argument's new value)"] = _STATIC


def _parsed(text: str) -> tuple[str, tuple[str, ...], bool] | None:
    """(dtype, dims, weakly typed) of ``f32[8,4]{weak_type=True}`` (a sharding, ``8@data`` or a
    ``({...})`` suffix, left out)."""
    found = _TYPE.match(text.strip())
    if found is None:
        return None
    dims = tuple(d.split("@")[0].strip() for d in _DIM_COMMA.split(found.group("dims")) if d.strip())
    return found.group("dtype"), dims, "weak_type=True" in found.group("rest")


def _unannotated(text: str) -> str:
    """``f32[8@data,16]`` of ``f32[8@data,16]({Explicit: ('data', 'model')})``."""
    return _ANNOTATION.sub("", text.strip())


def _argument(where: str) -> str:
    """JAX's name of an argument as the message shows it: ``x``, ``params['w']``, or a position
    (``input 1`` of a logged compile: the flattened inputs, one per array)."""
    if where.startswith("input "):
        return where
    positional, keyword = _POSITIONAL.match(where), _KEYWORD.match(where)
    if positional:
        return f"argument {positional.group(1)}"
    if keyword:
        return f"argument {_code(keyword.group(1))}"
    return _code(where) if where else "an argument"


def _code(text: str) -> str:
    return f"`{text}`"
