"""Output formats of ``jaxlint check --output-format``, named and shaped as ruff's are.

``FORMATS`` maps each name (``jaxlint.config.keys.OUTPUT_FORMATS``, where the names and their
aliases are kept) to a writer ``write(result, out, *, unsafe_fixes=False)``. The format comes from
``--output-format``, else the JAXLINT_OUTPUT_FORMAT environment variable, else the
``output-format`` configuration key, else ``full``.
"""
from __future__ import annotations

import importlib
import os
from io import StringIO
from typing import TYPE_CHECKING, Any, Callable, TextIO

from jaxlint.config.keys import OUTPUT_FORMATS, output_format_named
from jaxlint.text import write_text_atomic

if TYPE_CHECKING:
    from jaxlint.engine.results import CheckResult

# write(result, out, *, unsafe_fixes=False): unsafe_fixes (--unsafe-fixes) counts unsafe fixes as
# applicable, for the [*] marker.
Writer = Callable[..., None]


def _writer(module: str) -> Writer:
    """The ``write`` of ``jaxlint.report.<module>``, imported at its first call: a run writes one
    format, and the others' imports (junit's XML, sarif's URLs) are time a warm re-check pays."""
    def write(result: CheckResult, out: TextIO, **options: Any) -> None:
        importlib.import_module(f"jaxlint.report.{module}").write(result, out, **options)
    return write


# The writer's module of each format whose name is no module name; the others' is their name.
_MODULES = {"json": "json_array", "json-lines": "json_lines"}
FORMATS: dict[str, Writer] = {name: _writer(_MODULES.get(name, name)) for name in OUTPUT_FORMATS}
ENVIRONMENT_VARIABLE = "JAXLINT_OUTPUT_FORMAT"
DEFAULT = "full"


class OutputError(Exception):
    """An invalid output format or an unwritable output file: exit code 2."""


def canonical(name: str, source: str) -> str:
    """The format called ``name`` (an alias resolved); ``source`` says where the name was given."""
    named = output_format_named(name)
    if named is None:
        raise OutputError(f"invalid output format {name!r} ({source}); "
                          f"expected one of: {', '.join(OUTPUT_FORMATS)}")
    return named


def choose(flag: str | None, environment: str | None = None, configured: str | None = None) -> str:
    """The output format, by precedence; every value given is checked, even one that loses."""
    given = [(flag, "--output-format"), (environment, f"environment variable {ENVIRONMENT_VARIABLE}"),
             (configured, "configuration key output-format")]
    chosen = [canonical(value, source) for value, source in given if value is not None]
    return chosen[0] if chosen else DEFAULT


def check_statistics(output_format: str, statistics: bool) -> None:
    if not statistics:
        return
    from jaxlint.report import statistics as stats

    if output_format not in stats.FORMATS:
        raise OutputError(f"--statistics works with --output-format {', '.join(stats.FORMATS[:-1])} "
                          f"or {stats.FORMATS[-1]}, not {output_format}")


def report(result: CheckResult, output_format: str, statistics: bool = False, diff: bool = False,
           unsafe_fixes: bool = False) -> str:
    """What goes to stdout (or ``--output-file``): the diff, the statistics or the findings."""
    if diff:
        return "".join(result.diffs)
    out = StringIO()
    if statistics:
        from jaxlint.report import statistics as stats

        check_statistics(output_format, statistics)
        stats.write(result, output_format, out, unsafe_fixes)
    else:
        FORMATS[output_format](result, out, unsafe_fixes=unsafe_fixes)
    return out.getvalue()


def check_writable(path: str) -> None:
    """Fail now, before the checking, if the report cannot be written to ``path``."""
    if os.path.isdir(path):
        raise OutputError(f"cannot write the report to {path}: it is a directory")
    import tempfile  # only --output-file needs it

    folder = os.path.dirname(os.path.abspath(path))
    try:
        handle, probe = tempfile.mkstemp(prefix=".jaxlint-report-", dir=folder)
    except OSError as error:
        raise OutputError(f"cannot write the report to {path}: {error.strerror or error}") from None
    os.close(handle)
    os.unlink(probe)


def write_file(path: str, text: str) -> None:
    """Write ``text`` to ``path`` atomically: a reader sees the old report or the whole new one."""
    try:
        write_text_atomic(path, text, prefix=".jaxlint-report-")
    except OSError as error:
        raise OutputError(f"cannot write the report to {path}: {error.strerror or error}") from None
