"""Which differentiation rules of the user's a jaxpr holds that its trace did not run: a
``jax.custom_jvp``'s JVP rule, a ``jax.custom_vjp``'s ``fwd`` and ``bwd``, a library primitive's
own JVP rule (JAX traces them only when the program is differentiated)."""
from __future__ import annotations

import contextlib
import functools
from typing import Any, Iterator

from jaxlint.jaxapi import jaxprs

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


def _own_jvp_rule(primitive: Any, rules: dict[Any, Any]) -> bool:
    """Whether ``primitive``'s JVP rule is a library's (defined outside JAX), not JAX's own."""
    rule = rules.get(primitive)
    while isinstance(rule, functools.partial):
        rule = rule.func
    module = getattr(rule, "__module__", None)
    return isinstance(module, str) and module != "jax" and not module.startswith(_JAX_MODULES)


def rule_kinds(closed: Any) -> frozenset[str]:
    """``"jvp"`` when ``closed`` (sub-jaxprs included) holds a custom_jvp call or a primitive with a
    library's JVP rule, ``"vjp"`` when it holds a custom_vjp call; empty for neither."""
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
            if name in _CUSTOM_VJP:
                kinds.add("vjp")
            elif name in _CUSTOM_JVP or (eqn.primitive in rules and _own_jvp_rule(eqn.primitive, rules)):
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
