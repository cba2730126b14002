"""JX601 trace-error: a target (or the module's own import) fails while JAX traces it.

Reported by the pipeline itself, not over an IR (there is none). The hint is chosen by the
error's class, most specific first, then by well-known messages of plain TypeErrors.
"""
from __future__ import annotations

from jaxlint.rules.base import Rule

# (JAX error class name, what to do): subclasses before their bases.
CLASS_HINTS = [
    ("TracerBoolConversionError", "Python control flow on a traced value: use jnp.where or "
     "lax.cond, or mark the argument static (static_argnums)"),
    ("TracerIntegerConversionError", "a traced value used as a Python int (an index, a range "
     "bound): mark it static, or use lax.dynamic_slice / lax.fori_loop"),
    ("TracerArrayConversionError", "a traced value converted to a NumPy array: use jax.numpy "
     "inside traced code"),
    ("NonConcreteBooleanIndexError", "boolean indexing gives a data-dependent shape: use "
     "jnp.where, or give the size (jnp.nonzero(mask, size=n))"),
    ("ConcretizationTypeError", "a concrete value was needed from a traced one: mark the "
     "argument static (static_argnums / static_argnames) or keep it out of Python control flow"),
    ("UnexpectedTracerError", "a tracer escaped its trace (stored in a global, an attribute or a "
     "list): return values instead"),
]
MESSAGE_HINTS = [
    ("Non-hashable static arguments", "static arguments must be hashable: pass a tuple, not a list"),
    ("Shapes must be 1D sequences of concrete values", "a shape computed from a traced value: "
     "shapes must be static; pass the size as a static argument"),
    ("concrete value", "a concrete value was needed from a traced one: mark the argument static"),
]


class TraceError(Rule):
    code, name, severity = "JX601", "trace-error", "error"
    summary = "Tracing the function (or importing its module) raised a JAX tracing error."
    by_pipeline = True


def is_jax_tracing_error(error: BaseException) -> bool:
    """A JAX tracer error (by class) or a TypeError JAX raises on traced shapes/static args."""
    names = {cls.__name__ for cls in type(error).__mro__}
    if any(name in names for name, _ in CLASS_HINTS):
        return True
    return isinstance(error, (TypeError, ValueError)) and hint_for(error) is not None


def hint_for(error: BaseException) -> str | None:
    names = [cls.__name__ for cls in type(error).__mro__]
    for name, hint in CLASS_HINTS:
        if name in names:
            return hint
    text = str(error)
    for fragment, hint in MESSAGE_HINTS:
        if fragment in text:
            return hint
    return None
