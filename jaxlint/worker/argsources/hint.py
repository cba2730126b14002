"""A ``# jaxlint: args x=f32[n], k=3`` comment on the line above the function."""
from __future__ import annotations

from jaxlint.scan import hints
from jaxlint.worker.argsources import ArgumentError, ArgumentRequest, ArgumentSet


def arguments(request: ArgumentRequest) -> list[ArgumentSet]:
    target = request.target
    if target.hint is None:
        return []
    try:
        spec = hints.parse_hint(target.hint)
    except hints.HintError as error:
        raise ArgumentError(f"malformed hint: {error}") from None
    if target.params:
        unknown = [name for name in spec if name not in target.params]
        if unknown:
            raise ArgumentError(f"hint names {', '.join(map(repr, unknown))}, not parameters of "
                                f"{target.name}({', '.join(target.params)})")
    try:
        values = hints.to_abstract(spec)
    except Exception as error:  # e.g. a dimension name JAX rejects
        raise ArgumentError(f"hint cannot be turned into abstract values: {error}") from None
    return [ArgumentSet("hint", (), values)]
