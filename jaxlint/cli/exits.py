"""The way a command ends on a usage, configuration or internal error: the line
``jaxlint: MESSAGE`` on stderr, and exit status 2."""
from __future__ import annotations

import sys

ERROR_STATUS = 2


def failed(message: str) -> int:
    """Write ``jaxlint: message`` to stderr; the exit status to return (2)."""
    print(f"jaxlint: {message}", file=sys.stderr)
    return ERROR_STATUS
