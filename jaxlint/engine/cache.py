"""The result cache: a module whose analysis cannot have changed is not imported again, and a
file whose bytes are unchanged is not scanned again (``scans/``, keyed by its bytes, the rules,
the settings and jaxlint).

One entry per module, named by a hash of everything its worker result depends on that the
parent can see without importing JAX:
- the job: the module's path, source, targets with their hints, the selected rules, the settings
  (examples and signatures files, rule options, infer-arguments, devices, target), ``--cost``, the
  CPU devices its worker starts with (``Job.devices``);
- the signatures file's entries for the module's functions (not the rest of the file);
- the text of each examples file that imports the module or a package above it;
- jaxlint (its version and its files' sizes and times), Python, the installed distributions
  (the names of the ``*.dist-info`` folders in site-packages: JAX's and jaxlib's versions among
  them) and the environment variables JAX reads (``JAX_*``, ``XLA_FLAGS``).
The entry also lists what the worker saw the module read, checked at each lookup: the project's
other modules it imported and the examples files that registered its functions, with their
hashes; and, per imported file, a digest of its code without comments and positions (where the
worker traced nothing, without the bodies of the functions that never ran: ``ran_code``). A file
whose bytes changed but whose digest did not still serves, so a comment re-lints nothing and an
edit inside a helper re-lints the modules whose import or traces ran it, not every module that
imports it. A corrupt, truncated or foreign entry is a miss (and rewritten); entries are written
through a rename, so concurrent runs never read half an entry. A run's index (``index/``) holds
the entries it used, read in one open by the next run with the same paths, rules and settings;
its entries are checked like files' (the files stay: they serve when the index is missing).
The index is written with ``marshal`` behind the sha256 of its bytes (a damaged one is a miss):
reading it was a tenth of a warm run as JSON, a third of that as marshal; its name holds the
Python version (``environment``), whose marshal format it is.

Not seen, so not keyed: data files the module reads at import, and an examples file that gains
a registration for the module's function through a third module's re-export.
"""
from __future__ import annotations

import ast
import copy
import functools
import hashlib
import itertools
import json
import marshal
import os
import time
from dataclasses import dataclass, field, fields
from typing import Any, Sequence

from jaxlint.config import signatures
from jaxlint.engine import installed
from jaxlint.engine.ran_code import names_file, ran_digest
from jaxlint.lazylog import LazyLogger
from jaxlint.model import Finding, Job, Result, Settings, Span, Target
from jaxlint.scan.functions import JaxFunction
from jaxlint.scan.noqa import Tokens, tokens_from_json, tokens_to_json
from jaxlint.text import line_runs, write_text_atomic

LOG = LazyLogger(__name__)
FORMAT = 5  # of an entry and an index; a change makes every older one a miss
GITIGNORE = "# Automatically created by jaxlint.\n*\n"
CACHEDIR_TAG = ("Signature: 8a477f597d28d172789f06886806bc55\n"
                "# This file is a cache directory tag created by jaxlint.\n")
# Results that depend on the machine's load or on jaxlint's own failures are never kept.
_NOT_KEPT = {"timeout", "crash", "runaway"}
MAX_AGE_DAYS = 30  # entries unused this long are removed after a run that wrote new ones


@dataclass
class ResultCache:
    """The cache in ``folder``; ``stored`` counts this run's writes."""

    folder: str
    root: str  # the configuration's root (signatures keys are relative to it)
    writes: bool = True  # False: read only (--diff promises to write nothing)
    stored: int = 0
    _digests: dict[str, str | None] = field(default_factory=dict)
    _imports: dict[str, frozenset[str]] = field(default_factory=dict)
    _ran_digests: dict[tuple[str, tuple[str, ...]], str | None] = field(default_factory=dict)  # (file, names)
    _signatures: dict[str, dict[str, Any] | None] = field(default_factory=dict)  # file -> entries (None: unreadable)
    # The last (codes, settings, compile_costs) hashed for scan keys, and its hash: a run asks
    # with equal ones for every file, and dumping the settings each time was a tenth of a warm run.
    _run_material: tuple[Any, ...] = ()
    # The run's index (``open_index``): "kind/key" -> entry, as read, and as this run used or wrote them.
    _index_path: str | None = None
    _indexed: dict[str, Any] = field(default_factory=dict)
    _used: dict[str, Any] = field(default_factory=dict)

    def open_index(self, paths: list[str], codes: list[str], settings: Settings, compile_costs: bool) -> None:
        """Read the index of a run with these paths, rules and settings: the entries the last
        such run used, in one file, so an unchanged tree opens one file instead of one per entry
        (the opens and the touches were a third of a warm run's check). Each entry is checked as
        a file entry is; a damaged or foreign index is ignored. ``save_index`` writes it."""
        material = [self._common_material(codes, settings, compile_costs), sorted(os.path.abspath(p) for p in paths)]
        name = hashlib.sha256(json.dumps(material).encode()).hexdigest()
        self._index_path = os.path.join(self.folder, "index", name[:2], name + INDEX_SUFFIX)
        self._indexed, self._used = {}, {}
        try:
            index = read_index(self._index_path)
            if index.get("format") == FORMAT and index.get("key") == name and isinstance(index["entries"], dict):
                self._indexed = index["entries"]
                touch(self._index_path)
        except FileNotFoundError:
            pass
        except (OSError, ValueError, TypeError, KeyError, AttributeError) as error:  # corrupt or foreign
            LOG.debug("cache index ignored (%s: %s)", type(error).__name__, error)

    def save_index(self) -> None:
        """Write the run's index (through a rename: a concurrent run reads the old one or this
        one) if the entries it used differ from those it read: other keys, or an entry rewritten
        under its old key (a module re-linted after an edit of a file it imports keeps its key)."""
        if self._index_path is None or not self.writes or (self.stored == 0 and self._used.keys() == self._indexed.keys()):
            return
        try:
            self._prepare()
            os.makedirs(os.path.dirname(self._index_path), exist_ok=True)
            name = os.path.basename(self._index_path)[:-len(INDEX_SUFFIX)]
            write_text_atomic(self._index_path, index_bytes({"format": FORMAT, "key": name, "entries": self._used}))
        except (OSError, TypeError, ValueError) as error:
            LOG.debug("cache index not written (%s: %s)", type(error).__name__, error)

    def _read(self, key: str, kind: str) -> tuple[dict[str, Any], str | None]:
        """An entry from the index, else from its file (whose path is returned, to be touched
        when it serves). Raises what reading and parsing raise."""
        entry = self._indexed.get(f"{kind}/{key}")
        if entry is not None:
            return entry, None
        path = self._entry(key, kind)
        with open(path, encoding="utf-8") as handle:
            return json.load(handle), path

    def _served(self, key: str, kind: str, entry: dict[str, Any], path: str | None) -> None:
        self._used[f"{kind}/{key}"] = entry
        if path is not None:
            touch(path)

    def load(self, job: Job) -> Result | None:
        """The stored result of ``job``, if its entry exists, is whole and what it read is unchanged."""
        key = self.key(job)
        try:
            entry, path = self._read(key, "results")
            if entry.get("format") != FORMAT or entry.get("key") != key:
                return None
            ran = entry.get("ran", {})
            for file, digest in entry["inputs"].items():
                if self.digest(file) != digest and not (file in ran and self.code_digest(file, ran[file][1]) == ran[file][0]):
                    LOG.debug("%s: cache entry out of date (%s changed)", job.path, file)
                    return None
            result = Result.from_json(entry["result"])
        except FileNotFoundError:
            return None
        except (OSError, ValueError, TypeError, KeyError, AttributeError) as error:  # corrupt or foreign
            LOG.debug("%s: cache entry ignored (%s: %s)", job.path, type(error).__name__, error)
            return None
        result.timings = {}  # nothing was spent on it this run
        self._served(key, "results", entry, path)
        return result

    def store(self, job: Job, result: Result, source_digest: str) -> None:
        """Keep ``result`` of ``job`` (its ``inputs``: the other files the worker saw it read);
        ``source_digest``: the hash of the module's bytes that were scanned."""
        inputs = result.inputs
        if result.internal_error is not None or result.load_dependent or any(s.kind in _NOT_KEPT for s in result.skipped):
            return
        if _read_digest(job.path) != source_digest or any(self.digest(f) != d for f, d in inputs.items()):
            return  # a file changed while the module was analyzed: the worker may have read either
        key = self.key(job)
        stored = {**result.to_json(), "timings": {}}
        entry = {"format": FORMAT, "key": key, "path": job.path, "inputs": inputs, "result": stored,
                 "ran": self._ran_entries(result, stored)}
        self._write(self._entry(key), entry, f"results/{key}")

    def _ran_entries(self, result: Result, stored: dict[str, Any]) -> dict[str, list[Any]]:
        """For each imported file whose functions that ran are known: [its ran_code digest, their
        names]. Not for a file the result names: its lines or text may be in a finding or a
        message, which an edit anywhere in the file can move."""
        named = json.dumps({k: v for k, v in stored.items() if k not in ("inputs", "ran")})
        entries: dict[str, list[Any]] = {}
        for file, names in result.ran.items():
            if names_file(named, file):
                continue
            digest = self.code_digest(file, names)
            if digest is not None:
                entries[file] = [digest, names]
        return entries

    def code_digest(self, file: str, names: Sequence[str]) -> str | None:
        """ran_code's digest of the file as this run read it (once per file and names): of the
        functions ``names`` (``[RAN_ALL]``: all of them) and what runs at import."""
        key = (file, tuple(names))
        if key not in self._ran_digests:
            self._ran_digests[key] = None
            try:
                with open(file, "rb") as handle:
                    data = handle.read()
                if hashlib.sha256(data).hexdigest() == self.digest(file):  # the bytes the digests vouch for
                    self._ran_digests[key] = ran_digest(data, names)
            except OSError:
                pass
        return self._ran_digests[key]

    def _write(self, path: str, entry: dict[str, Any], name: str) -> None:
        """Write an entry's file; the index gets what the file holds (JSON's view of it: string
        keys, lists), so an entry reads the same from either."""
        if not self.writes:
            return
        try:
            self._prepare()
            os.makedirs(os.path.dirname(path), exist_ok=True)
            text = json.dumps(entry)
            write_text_atomic(path, text)
        except (OSError, TypeError, ValueError) as error:  # a read-only cache folder is no cache
            LOG.debug("cache not written (%s: %s)", type(error).__name__, error)
            return
        self.stored += 1
        self._used[name] = json.loads(text)

    def prune(self, days: float = MAX_AGE_DAYS) -> int:
        """Remove the entries no run has used for ``days`` (an entry is touched when it serves a
        run from its file; an index, when it serves a run, and the entries it holds are kept with
        it): every edit of a file leaves its old entries behind. Returns how many were removed."""
        removed, cutoff = 0, time.time() - days * 86400
        indexed: set[str] = set()  # "kind/key" of the entries a live index holds
        # tests/: the test-run store (engine/store.py), one entry per module and configuration;
        # its last-session record stays (check names the session's date from it).
        for kind in ("index", "results", "scans", "replay", "tests"):
            for folder, _, files in os.walk(os.path.join(self.folder, kind)):
                for name in files:
                    path = os.path.join(folder, name)
                    if name == "last-session.json":
                        continue
                    try:
                        if os.stat(path).st_mtime < cutoff and f"{kind}/{name[:-5]}" not in indexed:
                            os.unlink(path)
                            removed += 1
                        elif kind == "index":
                            indexed.update(_index_entries(path))
                    except OSError:
                        continue
        return removed

    # -- the scan of a file: its targets, JAX functions, (no job) source-rule findings and the
    # tokenizer's view of its comments (None: no suppression comment), so a warm run tokenizes nothing

    def load_scan(self, key: str) -> dict[str, Any] | None:
        """The stored scan under ``key`` (see ``scan_key``), or None."""
        try:
            entry, path = self._read(key, "scans")
            if entry.get("format") != FORMAT or entry.get("key") != key:
                return None
            scanned = {"targets": [Target.from_json(t) for t in entry["targets"]],
                       "functions": [_function_from_json(f) for f in entry["functions"]],
                       "findings": [Finding.from_json(f) for f in entry["findings"]],
                       "job": bool(entry["job"]),
                       "result": None if entry["result"] is None else Result.from_json(entry["result"]),
                       "tokens": None if entry["tokens"] is None else tokens_from_json(entry["tokens"])}
        except FileNotFoundError:
            return None
        except (OSError, ValueError, TypeError, KeyError, AttributeError) as error:
            LOG.debug("scan cache entry %s ignored (%s: %s)", key, type(error).__name__, error)
            return None
        self._served(key, "scans", entry, path)
        return scanned

    def store_scan(self, key: str, path: str, targets: list[Target], functions: list[JaxFunction], findings: list[Finding],
                   job: bool, result: Result | None, tokens: Tokens | None = None) -> None:
        entry = {"format": FORMAT, "key": key, "path": path, "targets": [t.to_json() for t in targets],
                 "functions": [_function_to_json(f) for f in functions], "findings": [f.to_json() for f in findings],
                 "job": job, "result": None if result is None else result.to_json(),
                 "tokens": None if tokens is None else tokens_to_json(tokens)}
        self._write(self._entry(key, "scans"), entry, f"scans/{key}")

    def scan_key(self, path: str, digest: str, codes: list[str], settings: Settings, compile_costs: bool,
                 recorded: list[str]) -> str:
        """What a file's scan depends on: its bytes, the rules, the settings, the signatures
        file's keys for it, jaxlint."""
        self._digests.setdefault(path, digest)  # the file was just read: ``load`` checks inputs by it
        common = self._common_material(codes, settings, compile_costs)
        material = json.dumps([path, digest, recorded])
        return hashlib.sha256(f"{common}\0{material}".encode()).hexdigest()

    def _common_material(self, codes: list[str], settings: Settings, compile_costs: bool) -> str:
        """The hash of what every scan key of a run shares: the format, the rules, the settings, jaxlint."""
        if self._run_material[:3] != (codes, settings, compile_costs):  # compared, not hashed again
            material = {"format": FORMAT, "codes": codes, "settings": _plain(settings), "compile_costs": compile_costs,
                        "environment": self.environment()}
            digest = hashlib.sha256(json.dumps(material, sort_keys=True, default=str).encode()).hexdigest()
            self._run_material = (list(codes), copy.deepcopy(settings), compile_costs, digest)
        return self._run_material[3]

    def key(self, job: Job) -> str:
        """The hash naming ``job``'s entry."""
        fields_ = {name: getattr(job, name) for name in _field_names(Job)}  # job.to_json()'s text under json.dumps
        # The source by its hash: dumping the text of every module was half of the key's time.
        fields_["source"] = hashlib.sha256(job.source.encode("utf-8", "surrogatepass")).hexdigest()
        material = {
            "format": FORMAT,
            "job": fields_,
            "environment": self.environment(),
            "signatures": self._signature_entries(job),
            "examples": {file: self.digest(file) for file in job.settings.examples if self._names(file, job.module)},
        }
        return hashlib.sha256(json.dumps(material, sort_keys=True, default=_json_default).encode()).hexdigest()

    def digest(self, path: str) -> str | None:
        """sha256 of the file's bytes (None when unreadable), once per run."""
        if path not in self._digests:
            self._digests[path] = _read_digest(path)
        return self._digests[path]

    def environment(self) -> str:
        """What the worker's results depend on outside the project, without importing JAX."""
        return installed.environment()

    def _names(self, examples_file: str, module: str) -> bool:
        """Whether an examples file imports ``module`` or a package above it: a function of the
        module can only be registered through one of them (or a re-export elsewhere)."""
        if examples_file not in self._imports:
            try:
                with open(examples_file, "rb") as handle:
                    self._imports[examples_file] = imported_names(handle.read())
            except OSError:
                self._imports[examples_file] = frozenset("*")
        names, parts = self._imports[examples_file], module.split(".")
        return "*" in names or any(".".join(parts[:n]) in names for n in range(1, len(parts) + 1))

    def _signature_entries(self, job: Job) -> dict[str, object]:
        file = job.settings.signatures
        if not file:
            return {}
        if file not in self._signatures:  # read once per run, as the files hashed (``digest``)
            try:
                self._signatures[file] = signatures.load(file)
            except (signatures.SignaturesError, OSError):
                self._signatures[file] = None
        entries = self._signatures[file]
        if entries is None:
            return {"unreadable": self.digest(file)}
        if not entries:
            return {}
        prefix = signatures.function_key(job.path, self.root, "")
        return {k: v for k, v in entries.items() if k.startswith(prefix)}

    def _entry(self, key: str, kind: str = "results") -> str:
        return os.path.join(self.folder, kind, key[:2], key + ".json")

    def _prepare(self) -> None:
        """The folder with ruff's markers: git ignores it, backup tools may skip it."""
        if os.path.isdir(self.folder):
            return
        os.makedirs(self.folder, exist_ok=True)
        for name, text in ((".gitignore", GITIGNORE), ("CACHEDIR.TAG", CACHEDIR_TAG)):
            write_text_atomic(os.path.join(self.folder, name), text)


def _plain(value: Any) -> Any:
    """What ``dataclasses.asdict`` makes of ``value`` as JSON, without its deep copies: the same
    text under ``json.dumps`` (tuples become lists either way), in less than half the time, which
    a warm re-check spends hashing every job."""
    kind = type(value)
    if kind in _SCALARS:  # most of a job's values: tested first, by exact type
        return value
    if kind is list or kind is tuple:
        return [_plain(item) for item in value]
    if kind is dict:
        return {key: _plain(item) for key, item in value.items()}
    if hasattr(kind, "__dataclass_fields__"):
        return {name: _plain(getattr(value, name)) for name in _field_names(kind)}
    if isinstance(value, (list, tuple)):
        return [_plain(item) for item in value]
    if isinstance(value, dict):
        return {key: _plain(item) for key, item in value.items()}
    return value


_SCALARS = frozenset({str, int, float, bool, type(None)})


def _json_default(value: Any) -> Any:
    """``json.dumps``'s hook for what it cannot write: a dataclass as the dict of its fields (so
    the encoder, in C, walks a job's targets and spans: the text ``_plain`` gives, in a third
    of the time), anything else as ``str``."""
    kind = type(value)
    if hasattr(kind, "__dataclass_fields__"):
        return {name: getattr(value, name) for name in _field_names(kind)}
    return str(value)


@functools.lru_cache(maxsize=None)
def _field_names(cls: type) -> tuple[str, ...]:
    return tuple(f.name for f in fields(cls))


def _function_to_json(function: JaxFunction) -> dict[str, Any]:
    # _plain, not asdict: asdict deep-copies every line set, thousands of them in a large module.
    return {**_plain(function), "own_lines": line_runs(function.own_lines), "params": list(function.params)}


def _function_from_json(data: dict[str, Any]) -> JaxFunction:
    return JaxFunction(data["qualname"], data["first_line"], data["line"], tuple(data["params"]),
                       frozenset(itertools.chain.from_iterable(range(first, last + 1) for first, last in data["own_lines"])),
                       Span(**data["span"]), Span(**data["name_span"]))


def _index_entries(path: str) -> list[str]:
    """The "kind/key" names an index file holds (none when it is damaged)."""
    try:
        return list(read_index(path)["entries"])
    except (OSError, ValueError, TypeError, KeyError):
        return []


INDEX_SUFFIX = ".index"


def index_bytes(index: dict[str, Any]) -> bytes:
    """An index as written: the sha256 of its marshal data, then the data. Raises ValueError
    for what marshal cannot write."""
    data = marshal.dumps(index)
    return hashlib.sha256(data).digest() + data


def read_index(path: str) -> dict[str, Any]:
    """An index file's contents; raises OSError, or ValueError when it is damaged (marshal reads
    only what its checksum vouches for: it is not made to read damaged data)."""
    with open(path, "rb") as handle:
        raw = handle.read()
    data = raw[32:]
    if len(raw) < 32 or hashlib.sha256(data).digest() != raw[:32]:
        raise ValueError("damaged index (checksum)")
    try:
        index = marshal.loads(data)
    except (EOFError, TypeError) as error:  # a checksum that matched data marshal did not write
        raise ValueError(f"damaged index ({error})") from None
    if not isinstance(index, dict):
        raise ValueError("not an index")
    return index


def touch(path: str) -> None:
    """Mark an entry used (``prune`` keeps it)."""
    try:
        os.utime(path)
    except OSError:
        pass


def _read_digest(path: str) -> str | None:
    try:
        with open(path, "rb") as handle:
            return hashlib.sha256(handle.read()).hexdigest()
    except OSError:
        return None


class NotACache(Exception):
    """``jaxlint clean`` was asked to remove a folder jaxlint did not make."""


def clean(folder: str) -> bool:
    """Remove the cache folder; False when there was none. Raises NotACache for a folder without
    the CACHEDIR.TAG jaxlint writes in the folders it makes: a project's `cache-dir` can name any
    folder (`~`), which must not be removed."""
    import shutil  # only `jaxlint clean` removes the folder

    if not os.path.isdir(folder):
        return False
    try:
        with open(os.path.join(folder, "CACHEDIR.TAG"), encoding="utf-8") as handle:
            made_here = handle.read() == CACHEDIR_TAG
    except (OSError, UnicodeDecodeError):
        made_here = False
    if not made_here:
        raise NotACache(f"{folder} holds no CACHEDIR.TAG written by jaxlint, so jaxlint did not make it; "
                        "left as it is (remove it yourself if it is a cache)")
    shutil.rmtree(folder)
    return True


def imported_names(text: bytes) -> frozenset[str]:
    """The modules a file's import statements name, "*" for an import by a computed name or a
    relative one (it could be any module); {"*"} when it does not parse."""
    try:
        tree = ast.parse(text)
    except (SyntaxError, ValueError):
        return frozenset("*")
    found = set()
    for node in ast.walk(tree):
        if isinstance(node, ast.Import):
            found.update(alias.name for alias in node.names)
        elif isinstance(node, ast.ImportFrom):
            if node.level or not node.module:
                found.add("*")
            else:
                found.add(node.module)
                found.update(f"{node.module}.{alias.name}" for alias in node.names)
        elif isinstance(node, ast.Call) and getattr(node.func, "id", getattr(node.func, "attr", "")) \
                in ("__import__", "import_module"):
            found.add("*")
    return frozenset(found)
