"""Parsers of JAX's log records and warnings: tracing-cache misses, compiles, float64 truncations.
Pure text: this module does not import JAX (the run-time watcher reads records with it before
the user's code imported JAX)."""
from __future__ import annotations

import re
from typing import Iterator

from jaxlint.events import CacheMiss, Difference
from jaxlint.jaxapi.install_dirs import is_jax_file
from jaxlint.text import top_level_items

# Run-time events (drivers/runtime.py). With ``jax_explain_cache_misses`` on, each miss of
# jit's tracing cache is explained in a WARNING record of the logger of the module that explains
# it: jax._src.pjit up to 0.4.x, jax._src.interpreters.partial_eval in newer releases. The text
# differs too ("seen f32[8,4], but now given f32[7,4]" then, "now f32[7,4] and before f32[8,4]"
# now); both forms are read, whatever the version.
CACHE_MISS_LOGGERS = ("jax._src.pjit", "jax._src.interpreters.partial_eval")
CACHE_MISS_PREFIX = "TRACING CACHE MISS at "
# Records the flag raises from DEBUG to WARNING besides (when a persistent compilation cache is on).
EXPLAIN_ONLY_LOGGERS = ("jax._src.compiler", "jax._src.compilation_cache")
EXPLAIN_ONLY_PREFIXES = ("PERSISTENT COMPILATION CACHE MISS", "Not writing persistent cache entry")
# The lines of a miss that say what differs, each with its kind, tried in this order (newer
# releases' text first): a pytree's structure, an argument's type, the tracing context.
_DIFFERENCE_LINES: tuple[tuple[str, re.Pattern[str]], ...] = (
    ("tree", re.compile(r"^\* at input path (?P<where>.+?), now (?P<now>.+?) and before (?P<before>.+?), so .*$")),
    ("tree", re.compile(r"^\* at (?P<where>.+?), seen (?P<before>.+?) but now given (?P<now>.+?),\s+so .*$")),
    ("type", re.compile(r"^\* at (?P<where>.+?), now (?P<now>.+?) and before (?P<before>.+?)(?:https?://\S+)?$")),
    ("type", re.compile(r"^\* at (?P<where>.+?), seen (?P<before>.+?), but now given (?P<now>.+?)$")),
    ("context", re.compile(r"^\* (?P<where>\S+) differs: now (?P<now>.+?) and before (?P<before>.+?)$")),
)
_STATIC = re.compile(r"Static\(val=(?P<value>.*)\)$")
_FUNCTION = re.compile(r"^(?:for )?(?P<name>\S+?)(?: id=\d+)?(?: defined at (?P<defined>.+))?$")


# With ``jax_log_compiles`` on, each compile is logged too, the only word of a compile that no
# tracing-cache miss explains (an argument placed with another sharding on an Auto mesh: the trace
# is the same, the lowering is not): "Compiling jit(step) with global shapes and types (...).
# Argument mapping: (NamedSharding(mesh=..., spec=P('data', None), ...), UnspecifiedValue)." (0.4.x:
# "Compiling step ... [...]", PartitionSpec). The flag raises these loggers' records to WARNING.
COMPILE_LOGGER = "jax._src.interpreters.pxla"
LOG_COMPILES_ONLY = {COMPILE_LOGGER: ("Compiling ",), "jax._src.dispatch": ("Finished ",),
                     "jax._src.compiler": ("Persistent compilation cache hit",)}
_COMPILING = re.compile(r"^Compiling (?:jit\((?P<jit>[^()\s]+)\)|(?P<name>\S+)) with global shapes and types "
                        r".*\. Argument mapping: \((?P<mapping>.*)\)\.$", re.S)
_SPEC = re.compile(r"spec=(?:PartitionSpec|P)\((?P<axes>.*?)\)(?:, memory_kind=|\)$)")


def parse_compile(message: str) -> tuple[str, tuple[str, ...]] | None:
    """(function name, each input's sharding: ``P('data', None)``, or the text JAX printed) of a
    compile ``jax_log_compiles`` logged; None for another record."""
    found = _COMPILING.match(message)
    if found is None:
        return None
    shardings = []
    for item in top_level_items(found.group("mapping"), strict=False):  # machine-written: taken as it comes
        spec = _SPEC.search(item)
        shardings.append(f"P({spec.group('axes')})" if spec else item)
    return found.group("jit") or found.group("name"), tuple(shardings)


def parse_cache_miss(message: str) -> CacheMiss | None:
    """The tracing-cache miss ``message`` explains (None: not one, or a function defined inside
    JAX, which 0.4.x explains too)."""
    if not message.startswith(CACHE_MISS_PREFIX):
        return None
    lines = [line.strip() for line in message.splitlines()[1:]]
    unseen = "never seen function:" in lines
    head = lines[lines.index("never seen function:") + 1] if unseen else next(
        (line for line in lines if line.startswith("for ")), "")
    found = _FUNCTION.match(head)
    if found is None:
        return None
    defined = found.group("defined") or ""
    if defined and is_jax_file(defined.rpartition(":")[0]):
        return None
    differences = () if unseen else tuple(_differences(lines))
    return CacheMiss(found.group("name"), defined, unseen, differences)


def _differences(lines: list[str]) -> list[Difference]:
    found = list(_each_difference(lines))
    if any(d.kind == "context" and d.where for d in found):  # the heading, then one line per option
        found = [d for d in found if d.kind != "context" or d.where]
    return found


def _difference_line(line: str) -> tuple[str, re.Match[str] | None]:
    """(kind, match) of the first of ``_DIFFERENCE_LINES`` that matches ``line``; ("", None)."""
    for kind, pattern in _DIFFERENCE_LINES:
        found = pattern.match(line)
        if found:
            return kind, found
    return "", None


def _each_difference(lines: list[str]) -> Iterator[Difference]:
    explained = False
    for line in lines:
        kind, tree = _difference_line(line)
        if tree is not None:
            explained = True
            before, now = tree.group("before"), tree.group("now")
            static_before, static_now = _STATIC.search(before), _STATIC.search(now)
            if kind == "tree" and static_before and static_now:
                kind, before, now = "static", static_before.group("value"), static_now.group("value")
            yield Difference(kind, tree.group("where"), before, now, line)
        elif line.lower().startswith(("never seen passing", "tracing context doesn't match")):
            explained = True
            yield Difference("tree" if line.startswith("never") else "context", text=line)
    if not explained:
        yield Difference("unexplained", text=next((line for line in lines if "unavailable" in line), ""))


# JAX's warning when x64 is off and a 64-bit dtype is asked for. The requested dtype is a name
# ("float64") on newer JAX, a class's repr ("<class 'jax.numpy.float64'>") on 0.4.x; "requested
# in zeros" is absent where JAX does not know the function (scalar types called directly).
_TRUNCATION = re.compile(r"Explicitly requested dtype (?P<requested>.*?)\s+(?:requested in (?P<api>\w+) )?"
                         r"\s*is not available, and will be truncated to dtype (?P<result>\w+)")
_DTYPE_NAME = re.compile(r"(?:u?int|float|complex)\d+")
TRUNCATION_MESSAGE = "Explicitly requested dtype"  # its start: the warnings filter's pattern


def truncation(message: str) -> tuple[str, str, str] | None:
    """(requested dtype, the dtype JAX uses instead, the jnp function asked or "") of JAX's
    truncation warning, or None for any other message."""
    found = _TRUNCATION.search(message)
    if found is None:
        return None
    requested = _DTYPE_NAME.findall(found["requested"])
    return (requested[-1] if requested else found["requested"]), found["result"], found["api"] or ""
