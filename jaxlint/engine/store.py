"""The test-run store: what ``pytest --jaxlint`` (or ``jaxlint run``) linted, kept in the result
cache folder (``tests/``) for ``jaxlint check`` to report as its own.

One entry per module and origin (a test run, a ``jaxlint run``: neither replaces the other's),
named by what its result depends on outside the project (the module's path, the selected rules
and their options, jaxlint, Python, the installed distributions and the JAX environment
variables: ``ResultCache.environment``) and holding what it depends on inside: the sha256 of the
module's bytes and of every project file the traces that linted it ran (the files whose functions
executed while tracing, and those whose lines made its equations), and of the test files and
``conftest.py`` files of the tests that reached it (tested_by.py), as the session read them
(read_digests.py), and of the others their code without comments and positions (ran_code: an
edit of their comments leaves the entry current). An entry whose digests all still match is
used; one with any other digest is stale: check reports its functions as changed since the test
run, naming the tests that reached them, and names the entry's findings it dropped. The findings
are raw (before per-file-ignores and suppression comments): check settles them with its own
configuration. Never imports JAX.
"""
from __future__ import annotations

import hashlib
import json
import os
import sys
import time
from dataclasses import asdict, dataclass, field, replace
from typing import TYPE_CHECKING, Iterable, Mapping, Sequence

from jaxlint import read_digests
from jaxlint.about import __version__
from jaxlint.engine import installed
from jaxlint.engine.cache import CACHEDIR_TAG, GITIGNORE, ResultCache, touch
from jaxlint.engine.ran_code import names_file
from jaxlint.engine.tested_by import files_of_tests
from jaxlint.lazylog import LazyLogger
from jaxlint.model import RAN_ALL, Finding, one_per_place
from jaxlint.text import write_text_atomic

if TYPE_CHECKING:
    from jaxlint.config import Config

LOG = LazyLogger(__name__)
FORMAT = 2  # of an entry and its name; a change makes every older entry a miss
FOLDER = "tests"  # inside the cache folder
MAX_TESTS = 3  # node ids kept per function: enough to re-run what reached it
ORIGIN = "test run"
RUN_ORIGIN = "jaxlint run"  # entries a program's run wrote (cli/run.py)
LAST_SESSION = "last-session.json"  # inside FOLDER: what the last session's entries were named by
# Each origin has its own entry per module: a test run never replaces what a program's run found
# (its run-time findings: the tests do not run the program), and the other way round.
ORIGINS = (ORIGIN, RUN_ORIGIN)


@dataclass
class StoredFunction:
    """A JAX function (scan/functions.py, by the first line of its def, decorators included) that
    the session ran: whether the rules read its operations, the abstract signatures it was traced
    with (display form), the first tests that reached it."""

    path: str  # absolute
    qualname: str
    first_line: int
    linted: bool
    signatures: list[str] = field(default_factory=list)
    tests: list[str] = field(default_factory=list)


@dataclass
class StoredModule:
    """One module's entry as check reads it; ``fresh``: every digest still matches."""

    path: str
    time: float  # when the session that wrote it ended
    origin: str  # "test run", or what else wrote it
    functions: list[StoredFunction]
    findings: list[Finding]
    fresh: bool
    changed: list[str] = field(default_factory=list)  # the files whose digests no longer match

    @property
    def used(self) -> list[Finding]:
        """The findings check reports: all of a fresh entry's; of a stale one's, while the module's
        own bytes are unchanged, those no trace made (``target`` None: a run's host syncs and
        compiles, a source rule's), which read only the module's own lines."""
        if self.fresh:
            return self.findings
        if self.path in self.changed:
            return []
        return [f for f in self.findings if f.target is None and os.path.abspath(f.path) == self.path]

    @property
    def dropped(self) -> list[Finding]:
        """The findings check no longer reports: a stale entry's, but those it still uses."""
        used = {id(f) for f in self.used}
        return [f for f in self.findings if id(f) not in used]

    @property
    def when(self) -> str:
        return time.strftime("%Y-%m-%d %H:%M", time.localtime(self.time))

    @property
    def linted_lines(self) -> set[int]:
        return {f.first_line for f in self.functions if f.linted}

    def linted_entry(self, first_line: int, qualname: str) -> StoredFunction | None:
        """The entry of a function the session linted: by its first line, else (a stale entry,
        whose module's lines may have moved since) by its qualified name when only one has it."""
        linted = [f for f in self.functions if f.linted]
        found = next((f for f in linted if f.first_line == first_line), None)
        if found is None and not self.fresh:
            named = [f for f in linted if f.qualname == qualname]
            found = named[0] if len(named) == 1 else None
        return found


def cache_for(config: Config, no_cache: bool = False, cache_dir: str | None = None) -> ResultCache | None:
    """The result cache ``jaxlint check`` would use with this configuration: ``cache_dir`` (its
    --cache-dir), else JAXLINT_CACHE_DIR, else the configuration's cache-dir, else
    ``<root>/.jaxlint_cache``; None with ``no_cache`` (its --no-cache) or JAXLINT_NO_CACHE."""
    if no_cache or (os.environ.get("JAXLINT_NO_CACHE") or "").strip().lower() in ("1", "true", "yes", "on"):
        return None
    folder = cache_dir or os.environ.get("JAXLINT_CACHE_DIR") or config.cache_dir
    return ResultCache(os.path.abspath(folder), config.root)


def write_store(config: Config, codes: Sequence[str], findings: Iterable[Finding],
                functions: Iterable[StoredFunction], depends: Mapping[str, Iterable[str]],
                origin: str = ORIGIN, cache: ResultCache | None = None, when: float | None = None,
                read: Mapping[str, str] | None = None, started: float | None = None) -> int:
    """Write one entry per module a watched-and-linted session touched: ``findings`` raw (before
    per-file-ignores and suppressions), ``functions`` the JAX functions it ran, ``depends`` for
    each module the project files its traces ran (the module itself is always included).
    ``cache``: the result cache to write in (default: ``cache_for(config)``; None there: nothing
    is written). ``read``: the digest of each file as the session read it, ``started``: when it
    started (read_digests.py: the digests vouch for what ran, not for the files now).
    Returns how many entries were written."""
    cache = cache if cache is not None else cache_for(config)
    if cache is None:
        return 0
    when = time.time() if when is None else when
    modules: dict[str, dict] = {}

    def module(path: str) -> dict:
        path = os.path.abspath(path)
        return modules.setdefault(path, {"functions": {}, "findings": [], "depends": {path}})

    for function in functions:
        entry = module(function.path)
        known = entry["functions"].get(function.first_line)
        entry["functions"][function.first_line] = function if known is None else _merged(known, function)
    for finding in one_per_place(findings):  # the session's processes and signatures see one place again
        module(finding.path)["findings"].append(finding)
    for path, files in depends.items():
        module(path)["depends"].update(os.path.abspath(f) for f in files)
    for entry in modules.values():  # the tests that made the calls: their edit changes what was traced
        entry["depends"].update(files_of_tests(config.root, (t for f in entry["functions"].values() for t in f.tests)))
    written = 0
    for path, entry in modules.items():
        if cache.digest(path) is None:
            continue  # deleted during the session
        inputs = {file: _digest_read(cache, file, read or {}, started) for file in sorted(entry["depends"])}
        data = {"format": FORMAT, "slot": _slot(cache, path, config, origin=origin), "codes": sorted(codes),
                "path": path,
                "time": when,
                "origin": origin, "inputs": inputs,
                "functions": [asdict(f) for f in sorted(entry["functions"].values(), key=lambda f: f.first_line)],
                "findings": [f.to_json() for f in entry["findings"]]}
        data["code"] = _code_digests(cache, data)
        previous = _read(cache, path, config, origin=origin)
        if previous is not None and previous.get("codes") == data["codes"] and _current(cache, previous["inputs"]):
            data = _joined(previous, data)  # another session over the same code: keep what both linted
        written += _write(cache, _entry_path(cache, data["slot"]), data)
    if written:
        _write(cache, os.path.join(cache.folder, FOLDER, LAST_SESSION), _session(cache, config, codes, origin, when))
    return written


def _digest_read(cache: ResultCache, file: str, read: Mapping[str, str], started: float | None) -> str | None:
    """The digest of ``file`` as the session read it: the bytes compiled, else the file now when
    it has not changed since the session started, else unknown (the entry is stale at once)."""
    if file in read:
        return read[file]
    if started is None or read_digests.unchanged_since(file, started):
        return cache.digest(file)
    return read_digests.UNKNOWN


def _session(cache: ResultCache, config: Config, codes: Sequence[str], origin: str, when: float) -> dict:
    """What names a session's entries, readable: why a check elsewhere cannot use them."""
    return {"format": FORMAT, "time": when, "origin": origin, "environment": cache.environment(),
            "options": _options(config), "codes": sorted(codes), "version": __version__,
            "python": os.path.realpath(sys.executable), "variables": _variables(),
            "stamp": installed.package_stamp()}


def _options(config: Config) -> str:
    return hashlib.sha256(json.dumps(config.options(), sort_keys=True, default=str).encode()).hexdigest()


def _variables() -> dict[str, str]:
    return {k: v for k, v in sorted(os.environ.items()) if k.startswith("JAX_") or k == "XLA_FLAGS"}


def unusable_session(cache: ResultCache, config: Config, codes: Sequence[str]) -> str | None:
    """When the last session's entries cannot serve this check at all: "the test run of DATE ran
    with JAX_PLATFORMS=cpu (not set here)", and the like; None when they can (or there is none)."""
    try:
        with open(os.path.join(cache.folder, FOLDER, LAST_SESSION), encoding="utf-8") as handle:
            last = json.load(handle)
        if last.get("format") != FORMAT:
            return None
        there, here = dict(last["variables"]), _variables()
        stored = StoredModule("", float(last["time"]), str(last["origin"]), [], [], True)
        same = last["environment"] == cache.environment()
        missing = sorted(set(codes) - set(last["codes"]))
    except (OSError, ValueError, TypeError, KeyError, AttributeError):
        return None
    run = f"the {stored.origin} of {stored.when}"
    if not same:
        differ = [k for k in sorted(set(there) | set(here)) if there.get(k) != here.get(k)]
        if differ:
            shown = ", ".join(f"{k}={there[k]}" if k in there else f"{k} not set" for k in differ[:2])
            now = ", ".join(f"{k}={here[k]}" if k in here else f"{k} not set" for k in differ[:2])
            return f"{run} ran with {shown} ({now} here)"
        if last.get("version") != __version__:
            return f"{run} ran with jaxlint {last.get('version')} (here {__version__})"
        if last.get("python") != os.path.realpath(sys.executable):
            return f"{run} ran in another Python environment ({last.get('python')})"
        if last.get("stamp") != installed.package_stamp():
            return f"{run} ran with jaxlint's files as they were before an edit"
        return f"{run} ran with other installed packages"
    if last["options"] != _options(config):
        return f"{run} ran with other rule options"
    if missing:
        return f"{run} did not run {', '.join(missing[:3])}{', ...' if len(missing) > 3 else ''}"
    return None


def load_stored(cache: ResultCache, config: Config, codes: Sequence[str], path: str,
                shared: str | None = None) -> list[StoredModule]:
    """The entries of the module ``path``, one per origin that wrote one (``load_store``)."""
    entries = (load_store(cache, config, codes, path, shared, origin) for origin in ORIGINS)
    return [entry for entry in entries if entry is not None]


def load_store(cache: ResultCache, config: Config, codes: Sequence[str], path: str,
               shared: str | None = None, origin: str = ORIGIN) -> StoredModule | None:
    """The entry ``origin`` wrote for the module ``path``, if one was written with these rule
    options and environment and (at least) these rules, its findings those of ``codes``; None when
    there is none or it is damaged or foreign. ``shared``: ``slot_material(cache, config)``, made
    once by a caller that loads many entries."""
    data = _read(cache, path, config, shared, origin)
    if data is None:
        return None
    try:
        if not set(codes) <= set(data["codes"]):
            return None  # a rule selected now did not run in the session
        functions = [StoredFunction(**f) for f in data["functions"]]
        selected = set(codes)
        findings = [finding for finding in map(Finding.from_json, data["findings"]) if finding.code in selected]
        code = data.get("code", {})
        changed = [file for file, digest in data["inputs"].items() if cache.digest(file) != digest
                   and not (file in code and cache.code_digest(file, [RAN_ALL]) == code[file])]
        stored = StoredModule(os.path.abspath(path), float(data["time"]), str(data["origin"]), functions,
                              findings, not changed, changed)
    except (TypeError, ValueError, KeyError, AttributeError) as error:
        LOG.debug("%s: test-run entry ignored (%s: %s)", path, type(error).__name__, error)
        return None
    stored.findings = [replace(finding, origin=stored.origin,
                               path=stored.path if os.path.abspath(finding.path) == stored.path else finding.path)
                       for finding in stored.findings]
    return stored


def slot_material(cache: ResultCache, config: Config) -> str:
    """The hash of what every entry's name shares: the format, the rule options, jaxlint, the
    environment. The selected rules are not in it: an entry of a wider selection serves a
    narrower one."""
    material = {"format": FORMAT, "options": config.options(), "environment": cache.environment(),
                "version": __version__}
    return hashlib.sha256(json.dumps(material, sort_keys=True, default=str).encode()).hexdigest()


def _slot(cache: ResultCache, path: str, config: Config, shared: str | None = None, origin: str = ORIGIN) -> str:
    # The shared part hashed once per run: dumping the rule options per module was most of a
    # warm check's time for the entries' names. A test run's entries keep their names of before.
    shared = slot_material(cache, config) if shared is None else shared
    named = f"{shared}\0{os.path.abspath(path)}" + (f"\0{origin}" if origin != ORIGIN else "")
    return hashlib.sha256(named.encode("utf-8", "surrogatepass")).hexdigest()


def _entry_path(cache: ResultCache, slot: str) -> str:
    return os.path.join(cache.folder, FOLDER, slot[:2], slot + ".json")


def _read(cache: ResultCache, path: str, config: Config,
          shared: str | None = None, origin: str = ORIGIN) -> dict | None:
    slot = _slot(cache, path, config, shared, origin)
    try:
        with open(_entry_path(cache, slot), encoding="utf-8") as handle:
            data = json.load(handle)
    except FileNotFoundError:
        return None
    except (OSError, ValueError) as error:  # damaged
        LOG.debug("%s: test-run entry ignored (%s: %s)", path, type(error).__name__, error)
        return None
    if not isinstance(data, dict) or data.get("format") != FORMAT or data.get("slot") != slot \
            or not isinstance(data.get("inputs"), dict):
        return None
    if cache.writes:
        touch(_entry_path(cache, slot))  # used: the cache's pruning keeps it
    return data


def _current(cache: ResultCache, inputs: Mapping[str, str]) -> bool:
    return all(cache.digest(file) == digest for file, digest in inputs.items())


def _code_digests(cache: ResultCache, data: dict) -> dict[str, str]:
    """The code (ran_code, every function) of each project file the module's traces ran, but for
    the module itself and any file its entry names: an edit of those files' comments or blank
    lines leaves the entry current. The module's own lines are in its functions and findings."""
    # The tests' node ids (a function's, a finding's) name test files, not the lines of the files
    # their traces ran.
    named = json.dumps([[{k: v for k, v in f.items() if k != "tests"} for f in data["functions"]],
                        [{k: v for k, v in f.items() if k != "test"} for f in data["findings"]]])
    digests = {}
    for file, digest in data["inputs"].items():
        # Only of the bytes the session read: a file edited since keeps no code digest, its own
        # digest then says it changed.
        if file != data["path"] and digest == cache.digest(file) and not names_file(named, file):
            digest = cache.code_digest(file, [RAN_ALL])
            if digest is not None:
                digests[file] = digest
    return digests


def _joined(previous: dict, data: dict) -> dict:
    """Two sessions' entries for the same code (every digest of both current): the functions
    either linted, the findings of both, one per place (the newer session's stands), the inputs of both."""
    try:
        functions = {f["first_line"]: StoredFunction(**f) for f in previous["functions"]}
        for f in data["functions"]:
            new = StoredFunction(**f)
            functions[new.first_line] = new if new.first_line not in functions \
                else _merged(new, functions[new.first_line])
        # The newer session's finding at a place stands.
        findings = [f.to_json() for f in one_per_place(Finding.from_json(f)
                                                       for f in data["findings"] + previous["findings"])]
    except (TypeError, ValueError, KeyError, AttributeError):
        return data
    return {**data, "inputs": {**previous["inputs"], **data["inputs"]},
            "code": {**previous.get("code", {}), **data["code"]},
            "functions": [asdict(f) for f in sorted(functions.values(), key=lambda f: f.first_line)],
            "findings": findings}


def _merged(first: StoredFunction, other: StoredFunction) -> StoredFunction:
    return StoredFunction(first.path, first.qualname, first.first_line, first.linted or other.linted,
                          list(dict.fromkeys(first.signatures + other.signatures)),
                          list(dict.fromkeys(first.tests + other.tests))[:MAX_TESTS])


def _write(cache: ResultCache, path: str, data: dict) -> int:
    try:
        if not os.path.isdir(cache.folder):  # ruff's markers: git ignores it, backup tools may skip it
            os.makedirs(cache.folder, exist_ok=True)
            for name, text in ((".gitignore", GITIGNORE), ("CACHEDIR.TAG", CACHEDIR_TAG)):
                write_text_atomic(os.path.join(cache.folder, name), text)
        os.makedirs(os.path.dirname(path), exist_ok=True)
        write_text_atomic(path, json.dumps(data))
    except (OSError, TypeError, ValueError) as error:  # a read-only cache folder is no store
        LOG.debug("test-run entry not written (%s: %s)", type(error).__name__, error)
        return 0
    return 1
