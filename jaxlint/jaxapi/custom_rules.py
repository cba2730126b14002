"""Which differentiation rules of the user's a jaxpr holds that its trace did not run: a
``jax.custom_jvp``'s JVP rule, a ``jax.custom_vjp``'s ``fwd`` and ``bwd``, a library primitive's
own JVP rule (JAX traces them only when the program is differentiated)."""
from __future__ import annotations

import contextlib
import functools
from typing import Any, Callable, Iterator

from jaxlint.jaxapi import jaxprs, tracebacks

# custom_jvp_call on every supported release; a custom_vjp is custom_vjp_call_jaxpr up to 0.4.x
# and custom_vjp_call from 0.5.
_CUSTOM_JVP = frozenset({"custom_jvp_call"})
_CUSTOM_VJP = frozenset({"custom_vjp_call", "custom_vjp_call_jaxpr"})
_JAX_MODULES = ("jax.", "jaxlib.")


def _jvp_rules() -> dict[Any, Any]:
    try:
        from jax._src.interpreters import ad
    except ImportError:  # pragma: no cover - a release that moved it: no library primitive is seen
        return {}
    return ad.primitive_jvps


def _library_rule_file(primitive: Any, rules: dict[Any, Any]) -> str | None:
    """The file of ``primitive``'s JVP rule when a library defined it (not JAX); else None."""
    rule = rules.get(primitive)
    while isinstance(rule, functools.partial):
        rule = rule.func
    module = getattr(rule, "__module__", None)
    if not isinstance(module, str) or module == "jax" or module.startswith(_JAX_MODULES):
        return None
    return getattr(getattr(rule, "__code__", None), "co_filename", None)


def _custom_files(eqn: Any) -> list[str] | None:
    """The files a custom_jvp/custom_vjp call's function and rules are defined in (JAX >= 0.5 says,
    in their debug info); None where the release does not say (0.4.x)."""
    found = [tracebacks.function_source(jaxprs.open_jaxpr(eqn.params[key])[0]) if key.endswith("jaxpr")
             else tracebacks.function_source(eqn.params[key])
             for key in ("call_jaxpr", "fun_jaxpr", "jvp_jaxpr_fun", "fwd_jaxpr_thunk", "bwd") if key in eqn.params]
    files = [source[1] for source in found if source is not None]
    return files or None


def rule_kinds(closed: Any, is_project: Callable[[str], bool]) -> frozenset[str]:
    """``"jvp"`` when ``closed`` (sub-jaxprs included) holds a custom_jvp call or a primitive with a
    library's JVP rule, ``"vjp"`` when it holds a custom_vjp call; empty for neither. Only calls of
    the project's functions or rules count (``is_project`` of their file; one that JAX 0.4.x does
    not locate counts too): ``jax.nn.relu`` is a custom_jvp whose rule is JAX's."""
    kinds: set[str] = set()
    rules = _jvp_rules()
    seen: set[int] = set()
    pending = [jaxprs.open_jaxpr(closed)[0]]
    while pending and len(kinds) < 2:
        jaxpr = pending.pop()
        if id(jaxpr) in seen:
            continue
        seen.add(id(jaxpr))
        for eqn in jaxpr.eqns:
            name = eqn.primitive.name
            if name in _CUSTOM_VJP or name in _CUSTOM_JVP:
                files = _custom_files(eqn)
                if files is None or any(is_project(file) for file in files):
                    kinds.add("vjp" if name in _CUSTOM_VJP else "jvp")
            elif eqn.primitive in rules:
                file = _library_rule_file(eqn.primitive, rules)
                if file is not None and is_project(file):
                    kinds.add("jvp")
            pending.extend(jaxprs.open_jaxpr(sub)[0] for _, sub in jaxprs.subjaxprs(eqn.params))
    return frozenset(kinds)


@contextlib.contextmanager
def rule_locations() -> Iterator[None]:
    """While inside, an operation bound while JAX replays a jaxpr (a jit's JVP, the backward pass
    that calls a custom_vjp's ``bwd``) is located by the Python stack it is bound from when that
    stack holds a user frame that was not on it when the differentiation began, instead of by the
    replayed equation's traceback, which JAX puts in force for the whole replay
    (``source_info_util.user_context``) and so hides the rule's own lines: a JVP rule or ``bwd``
    run there is located at its own lines; replayed operations (no new user frame) keep theirs."""
    try:
        from jax._src import source_info_util
        original = source_info_util.current
        context = source_info_util._source_info_context
        traceback_now = source_info_util.xla_client.Traceback.get_traceback
    except (ImportError, AttributeError):  # pragma: no cover - a release without them: rules unlocated
        yield
        return

    def user_frames(stack: Any) -> set[tuple[str, int, str]]:
        return {(frame.file_name, frame.line_num, frame.function_name) for frame in getattr(stack, "frames", None) or []
                if source_info_util.is_user_filename(frame.file_name)}

    # The frames below the differentiation (the worker's entry, a caller of jaxlint.lint) are no rule's.
    below = user_frames(traceback_now())

    def current() -> Any:
        info = original()
        if not context.context.traceback:  # no replay: the stack already
            return info
        stack = traceback_now()
        return info.replace(traceback=stack) if user_frames(stack) - below else info

    source_info_util.current = current
    try:
        yield
    finally:
        source_info_util.current = original
