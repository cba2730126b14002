"""A logger for progress messages that does not import ``logging`` (about 9 ms, a twentieth of a
warm re-check) until someone could be listening: only ``--verbose`` (cli/output_flags.py), a
test's log capture or a host program configure handlers, and each of them imports ``logging``
first. Until then a debug message could reach no handler, so dropping it changes nothing."""
from __future__ import annotations

import sys
from typing import Any


class LazyLogger:
    """``logging.getLogger(name)``'s ``debug``, looked up on the first message after
    ``logging`` was imported."""

    def __init__(self, name: str) -> None:
        self.name = name

    def debug(self, message: str, *args: Any) -> None:
        logging = sys.modules.get("logging")
        if logging is not None:
            logging.getLogger(self.name).debug(message, *args)
