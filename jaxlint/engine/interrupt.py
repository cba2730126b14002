"""How a check stops on SIGINT or SIGTERM: the exceptions the CLI and the pipeline share, in a
module light enough for the CLI to import before anything else."""
from __future__ import annotations


class Terminated(BaseException):
    """Raised by the CLI's SIGTERM handler (CI cancelling a job, ``timeout``), as SIGINT raises
    KeyboardInterrupt: the run stops the same way."""


class Interrupted(Exception):
    """A check stopped by SIGINT or SIGTERM, its workers killed: what finished, and the exit
    status a shell expects (128 + the signal's number)."""

    def __init__(self, cause: BaseException, done: int, total: int, written: int) -> None:
        name = "SIGTERM" if isinstance(cause, Terminated) else "SIGINT"
        self.status = 143 if name == "SIGTERM" else 130
        wrote = f"; {written} fixed file{'s' * (written != 1)} had been written" if written else ""
        super().__init__(f"interrupted ({name}) after analyzing {done} of {total} "
                         f"module{'s' * (total != 1)}{wrote}; no report")
