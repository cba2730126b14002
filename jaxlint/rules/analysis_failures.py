"""Analysis failures are findings, not tracebacks. The pipeline reports these itself."""
from __future__ import annotations

import re
from typing import Iterable

from jaxlint.model import Finding
from jaxlint.rules.base import Rule, SourceContext
from jaxlint.scan import hint_above
from jaxlint.text import split_lines

_HINT_TEXT = re.compile(r"#\s*jaxlint:\s*args")


class SyntaxErrorRule(Rule):
    """The finding points at the syntax error, or says why the file could not be read or decoded
    (jaxlint reads files as Python does: a coding cookie or UTF-8). Python would fail to import
    the file too; fix the error and check again."""
    code, name, severity = "JX900", "syntax-error", "error"
    summary = "The file does not parse; nothing in it was analyzed."
    by_pipeline = True


class ImportErrorRule(Rule):
    """jaxlint imports each module in a worker process, as pytest would (the project root on
    `sys.path`). The finding points at the line that raised and gives the exception. Common causes:
    a dependency missing from the environment jaxlint runs in (run jaxlint where your project's
    dependencies are installed), work at import time that needs files or devices (move it under
    `if __name__ == "__main__":`), or a `sys.exit` at import time."""
    code, name, severity = "JX901", "import-error", "error"
    summary = "Importing the module raised (or exited); its functions were not traced."
    by_pipeline = True


class AnalysisTimeoutRule(Rule):
    """The limit applies per module, to importing it and tracing its functions, in the worker's own
    time (on Linux, time spent waiting for a CPU other processes held is not counted); the finding
    points at the line that was running when it expired. Raise it with `--timeout SECONDS` (default 60)
    or the `timeout` configuration key, or move long work done at import time (training, loading
    data) under `if __name__ == "__main__":`."""
    code, name, severity = "JX902", "analysis-timeout", "error"
    summary = "Importing or tracing the module took longer than the time limit."
    by_pipeline = True


class WorkerCrashedRule(Rule):
    """The worker process exited without answering: `os._exit`, a segmentation fault in native
    code, or the operating system killing it (out of memory). The finding points at the line that
    was running when it died, when known. The other modules are checked in a new worker."""
    code, name, severity = "JX903", "worker-crashed", "error"
    summary = "The process analyzing the module died (os._exit, a segfault, killed)."
    by_pipeline = True



class InvalidHintRule(Rule):
    """A hint is `# jaxlint: args name=dtype[dims], ...` on the line directly above the function
    (above its decorators). The finding says what is wrong: an unknown dtype, a malformed shape,
    or arguments that do not match the function's parameters. The function is not traced until
    the hint is fixed."""
    code, name, severity = "JX905", "invalid-hint", "error"
    summary = "A `# jaxlint: args` hint comment is malformed, does not match the signature or names no function."
    by_pipeline = True

    @classmethod
    def check_source(cls, ctx: SourceContext) -> Iterable[Finding]:
        """A hint that is not directly above a function jaxlint traces would be ignored: say so."""
        if not _HINT_TEXT.search(ctx.source):
            return
        lines = split_lines(ctx.source)
        firsts = {target.first_line for target in ctx.index.targets}
        for number in ctx.index.comment_lines:  # not a hint quoted in a docstring
            if not _HINT_TEXT.search(lines[number - 1]):
                continue
            hint, span = hint_above(lines, number + 1)
            if span is not None and number + 1 not in firsts:
                yield cls.finding(ctx.path, span, "this hint names no function: put it on the line directly above "
                                  "the `def` (above its decorators) of a module-level function or a method; a "
                                  "function nested in another is traced through the one that defines it")


class InternalErrorRule(Rule):
    """A rule or a stage of jaxlint raised on this function: a bug in jaxlint, worth reporting with
    the message and the smallest code that shows it. The file's other functions were still
    checked. When a rule failed, the other rules still ran on this function; when building its IR
    failed, no rule over the IR ran on it."""
    code, name, severity = "JX906", "internal-error", "error"
    summary = "jaxlint itself failed on this function (a bug in jaxlint); other functions were checked."
    by_pipeline = True
